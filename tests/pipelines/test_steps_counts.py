"""Accountant step counts (Handcrafted-DP, bench/REAL_REPOS.md): the literal 1 of a per-step RDP
computation is never the count (its callers' multiplier is, when they agree), and a counter's start
value (``self.steps = 0`` bumped through another name, ``t = 1`` bumped by ``t = t + 1`` in the
loop) is not its value."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpcheck.model import Pipeline
from dpcheck.pipelines.index import ProjectIndex
from dpcheck.pipelines.scope import Ctx
from dpcheck.pipelines.values import Evaluator
from tests.pipelines.builder import make_project, pipelines_of

RDP_HELPER = '''
from opacus import privacy_analysis

ORDERS = [2, 4, 8, 16]


def one_step(q, sigma):
    rdp = privacy_analysis.compute_rdp(q, sigma, 1, ORDERS)
    return rdp
'''

SCRIPT = '''
import torch
from opacus import PrivacyEngine
from opacus import privacy_analysis
from torch.utils.data import DataLoader, TensorDataset

from accounting import ORDERS, one_step

EPOCHS = 10


def main():
    data = TensorDataset(torch.randn(50000, 10), torch.randint(0, 2, (50000,)))
    loader = DataLoader(data, batch_size=500)
    model = torch.nn.Linear(10, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    engine = PrivacyEngine(model, sample_rate=0.01, noise_multiplier=1.1, max_grad_norm=1.0)
    engine.attach(optimizer)
    for x, y in loader:
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
    rdp = {rdp}
    print(privacy_analysis.get_privacy_spent(ORDERS, rdp, 1e-5))


if __name__ == "__main__":
    main()
'''


def _pipeline(tmp_path: Path, rdp: str) -> Pipeline:
    [pipeline] = pipelines_of(tmp_path, {
        "accounting.py": RDP_HELPER, "train.py": SCRIPT.replace("{rdp}", rdp),
        "requirements.txt": "opacus==0.13.0\n"})
    return pipeline


@pytest.mark.parametrize(("rdp", "steps"), [
    ("one_step(0.01, 1.1) * engine.steps", None),
    ("one_step(0.01, 1.1) * (EPOCHS * 100)", 1000),
    ("one_step(0.01, 1.1)", None),
    ("privacy_analysis.compute_rdp(0.01, 1.1, 1, ORDERS) * 700", 700),
])
def test_per_step_rdp_takes_the_multiplier_or_stays_unresolved(
        tmp_path: Path, rdp: str, steps: int | None) -> None:
    pipeline = _pipeline(tmp_path, rdp)
    given = pipeline.accountant.steps
    assert pipeline.accountant.name == "opacus-rdp"
    assert given is not None and given.value == steps, given


ENGINE = '''
import torch
from opacus.accountants.analysis.rdp import compute_rdp, get_privacy_spent


class Engine:
    def __init__(self, module, batch_size, sample_size, noise_multiplier, max_grad_norm):
        self.module = module
        self.batch_size = batch_size
        self.sample_rate = batch_size / sample_size
        self.noise_multiplier = noise_multiplier
        self.max_grad_norm = max_grad_norm
        self.steps = 0

    def attach(self, optimizer):
        def noisy_step(_self, closure=None):
            for p in _self.param_groups[0]["params"]:
                noise = torch.normal(0.0, self.noise_multiplier * self.max_grad_norm, size=p.shape)
                p.grad = (p.summed_grad + noise) / self.batch_size
            _self.privacy_engine.steps += 1
        optimizer.privacy_engine = self
        optimizer.noisy_step = noisy_step

    def spent(self, delta):
        rdp = compute_rdp(q=self.sample_rate, noise_multiplier=self.noise_multiplier,
                          steps=self.steps, orders=[2, 4, 8])
        return get_privacy_spent(orders=[2, 4, 8], rdp=rdp, delta=delta)
'''

BUDGET_LOOP = '''
import torch
from opacus.accountants.analysis.rdp import compute_rdp, get_privacy_spent


def main(budget=3.0):
    model = torch.nn.Linear(10, 2)
    params = list(model.parameters())
    x_all, y_all = torch.randn(60000, 10), torch.randint(0, 2, (60000,))
    t = 1
    epsilon = 0.0
    while epsilon < budget:
        rdp = compute_rdp(256 / 60000, 1.1, t, [2, 4, 8])
        epsilon = get_privacy_spent(orders=[2, 4, 8], rdp=rdp, delta=1e-5)[0]
        mask = torch.rand(60000) < 256 / 60000
        x, y = x_all[mask], y_all[mask]
        sums = [torch.zeros_like(p) for p in params]
        for xi, yi in zip(x, y):
            model.zero_grad()
            torch.nn.functional.cross_entropy(model(xi[None]), yi[None]).backward()
            norm = sum(p.grad.norm() ** 2 for p in params) ** 0.5
            for p, s in zip(params, sums):
                s.add_(p.grad * min(1.0 / (norm + 1e-6), 1.0))
        with torch.no_grad():
            for p, s in zip(params, sums):
                p -= 0.1 * (s + 1.1 * torch.randn_like(s)) / len(x)
        t = t + 1


if __name__ == "__main__":
    main()
'''


def test_counter_bumped_through_another_name_is_not_its_start(tmp_path: Path) -> None:
    index = ProjectIndex(make_project(tmp_path, {"engine.py": ENGINE}))
    evaluator = Evaluator(index)
    in_spent = Ctx("engine.py", "Engine.spent", 25)
    assert evaluator.value(["r", "self.steps"], in_spent) is None


def test_loop_counter_before_a_budget_loop_is_not_one(tmp_path: Path) -> None:
    [pipeline] = pipelines_of(tmp_path, {"train.py": BUDGET_LOOP})
    given = pipeline.accountant.steps
    assert pipeline.accountant.name == "opacus-rdp"
    assert given is not None and given.value is None, given
    assert "steps" not in pipeline.params or pipeline.params["steps"].value != 1


NESTED_LOOPS = '''
import torch
from opacus.accountants import RDPAccountant

N = 20000
EPOCHS = 7
LOT = 400


def train(data):
    q = LOT / N
    {outer_accountant}
    for {outer} in range(3):
        {inner_accountant}
        for epoch in range(EPOCHS):
            for _ in range(int(1 / q)):
                mask = torch.rand(N) < q
                grads = data[mask]
                clipped = grads / torch.clamp(grads.norm(dim=1, keepdim=True), min=1.0)
                noisy = clipped.sum(0) + torch.normal(0.0, 1.1, size=(3,))
                accountant.step(noise_multiplier=1.1, sample_rate=q)


if __name__ == "__main__":
    train(torch.zeros(N, 3))
'''


@pytest.mark.parametrize(("made", "runs"), [("outside", 3 * 7 * 50), ("inside", 7 * 50),
                                             ("both", 7 * 50)])
def test_a_per_step_accountant_counts_every_loop_around_it_that_it_outlives(
        tmp_path: Path, made: str, runs: int) -> None:
    """``accountant.step()`` under epochs x steps-per-epoch loops is called their product of
    times; a loop that also holds the accountant's construction (one accountant per trial) does
    not multiply it, and the construction that counts is the latest before the call (one made
    before the sweep and again per trial is per trial). The code's own step count (the draws of the Bernoulli mask) is the product
    of every loop around the draw (for a sweep that counts all trials together: a known
    limit, the draws are not tied to the accountant they are accounted by)."""
    construction = "accountant = RDPAccountant()"
    source = NESTED_LOOPS.format(outer="trial" if made != "outside" else "rerun",
                                 outer_accountant=construction if made != "inside" else "",
                                 inner_accountant=construction if made != "outside" else "")
    [pipeline] = pipelines_of(tmp_path, {"train.py": source})
    assert pipeline.accountant.steps is not None
    assert pipeline.accountant.steps.value == runs
    assert pipeline.params["steps"].value == 3 * 7 * 50
