"""Updates inside methods of a project optimizer class (DPSUR, bench/REAL_REPOS.md): the method is
reached through ``opt.method()``, clipping in another method called per example counts as
per-sample clipping, and ``self.attr`` reads what the caller assigned to ``opt.attr`` before the
call."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.pipelines.builder import pipelines_of

CODE = '''
import torch

SIGMA, CLIP, LOT = 1.0, 1.0, 64


class Private(torch.optim.SGD):
    def __init__(self, params, lot):
        super().__init__(params, lr=0.1)
        self.lot = lot
        self.sums = [torch.zeros_like(p) for p in self.param_groups[0]["params"]]

    def clip_one(self):
        norm = sum(p.grad.norm() ** 2 for p in self.param_groups[0]["params"]) ** 0.5
        factor = min(CLIP / (norm + 1e-6), 1.0)
        for p, s in zip(self.param_groups[0]["params"], self.sums):
            s.add_(p.grad * factor)

    def noisy(self):
        for p, s in zip(self.param_groups[0]["params"], self.sums):
            p.grad = s + CLIP * SIGMA * torch.randn_like(s)
            {division}
        super().step()


def run():
    data, labels = torch.randn(10000, 4), torch.randint(0, 2, (10000,))
    model = torch.nn.Linear(4, 2)
    opt = Private(model.parameters(), LOT)
    for _ in range(100):
        mask = torch.rand(len(data)) < LOT / len(data)
        xb, yb = data[mask], labels[mask]
        {assignment}
        for xi, yi in zip(xb, yb):
            opt.zero_grad()
            torch.nn.functional.cross_entropy(model(xi[None]), yi[None]).backward()
            opt.clip_one()
        opt.noisy()


run()
'''


@pytest.mark.parametrize(
    ("division", "assignment", "expected"),
    [
        ("p.grad.mul_(1.0 / self.lot)", "opt.lot = len(xb)", "ASGM"),
        ("p.grad /= self.lot", "opt.lot = xb.shape[0]", "ASGM"),
        ("p.grad.mul_(1.0 / self.lot)", "opt.lot = xb.shape[0]", "ASGM"),
        ("p.grad /= self.lot", "opt.lot = len(xb)", "ASGM"),
        ("p.grad.mul_(1.0 / self.lot)", "pass", "SGM"),
        ("p.grad.mul_(1.0 / self.lot)", "opt.lot = LOT", "SGM"),
    ],
)
def test_the_divisor_a_caller_assigns_to_the_optimizer_decides(
        tmp_path: Path, division: str, assignment: str, expected: str) -> None:
    code = CODE.replace("{division}", division).replace("{assignment}", assignment)
    pipelines = pipelines_of(tmp_path, {"train.py": code})
    assert [(p.mechanism, p.sampling) for p in pipelines] == [(expected, "poisson")]
