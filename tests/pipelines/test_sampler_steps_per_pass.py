"""A project batch sampler's ``range(self.iterations)`` counts the batches of ONE pass over the
loader. The training steps are that count times the passes the training loop makes: read when
the loop over the loader sits in the entry under ``range`` loops only, unresolved when a
``while`` rebuilds the loader (DPSUR: ``iterations=1`` per pass, one pass per ``while epsilon <
budget`` round), never the per-pass count."""

from __future__ import annotations

from pathlib import Path

from dpcheck.model import Pipeline
from tests.pipelines.builder import pipelines_of

SAMPLER = '''
import numpy as np
import torch
from torch.utils.data import DataLoader, TensorDataset

SIGMA, CLIP, LOT = 1.2, 0.5, 100


class CoinBatches:
    def __init__(self, n, lot, iterations):
        self.n, self.q, self.iterations = n, lot / n, iterations

    def __iter__(self):
        for _ in range(self.iterations):
            yield np.nonzero(np.random.rand(self.n) < self.q)[0]


def noisy_step(model, x, y):
    params = list(model.parameters())
    acc = [torch.zeros_like(p) for p in params]
    for xi, yi in zip(x, y):
        model.zero_grad()
        torch.nn.functional.cross_entropy(model(xi[None]), yi[None]).backward()
        norm = sum(p.grad.norm() ** 2 for p in params) ** 0.5
        scale = min(CLIP / (norm + 1e-6), 1.0)
        for p, a in zip(params, acc):
            a.add_(p.grad * scale)
    with torch.no_grad():
        for p, a in zip(params, acc):
            p -= 0.1 * (a + CLIP * SIGMA * torch.randn_like(a)) / len(x)
'''

EPOCHS = SAMPLER + '''

def main():
    data = TensorDataset(torch.randn(10000, 4), torch.randint(0, 2, (10000,)))
    model = torch.nn.Linear(4, 2)
    loader = DataLoader(data, batch_sampler=CoinBatches(len(data), LOT, 100))
    for epoch in range(7):
        for x, y in loader:
            noisy_step(model, x, y)


if __name__ == "__main__":
    main()
'''

WHILE = SAMPLER + '''

def train(model, loader):
    for x, y in loader:
        noisy_step(model, x, y)


def main(budget=3.0):
    data = TensorDataset(torch.randn(10000, 4), torch.randint(0, 2, (10000,)))
    model = torch.nn.Linear(4, 2)
    spent, rounds = 0.0, 0
    while spent < budget:
        loader = DataLoader(data, batch_sampler=CoinBatches(len(data), LOT, 1))
        train(model, loader)
        rounds += 1
        spent = 0.01 * rounds


if __name__ == "__main__":
    main()
'''


def _only(tmp_path: Path, source: str) -> Pipeline:
    (pipeline,) = pipelines_of(tmp_path, {"train.py": source})
    assert (pipeline.mechanism, pipeline.sampling) == ("ASGM", "poisson"), pipeline.evidence
    return pipeline


def test_passes_under_range_loops_multiply_the_per_pass_count(tmp_path: Path) -> None:
    steps = _only(tmp_path, EPOCHS).params["steps"]
    assert steps.value == 7 * 100
    assert steps.span.line == 37  # the loop over the loader


def test_a_loader_rebuilt_in_a_while_loop_leaves_steps_unresolved(tmp_path: Path) -> None:
    pipeline = _only(tmp_path, WHILE)
    assert "steps" not in pipeline.params, pipeline.params.get("steps")
    assert any("per pass over the loader" in e.note for e in pipeline.evidence)


def test_a_helper_called_in_a_loop_makes_passes_undecided(tmp_path: Path) -> None:
    source = EPOCHS.replace('''    for epoch in range(7):
        for x, y in loader:
            noisy_step(model, x, y)''', '''    for epoch in range(7):
        one_pass(model, loader)


def one_pass(model, loader):
    for x, y in loader:
        noisy_step(model, x, y)''')
    assert "steps" not in _only(tmp_path, source).params
