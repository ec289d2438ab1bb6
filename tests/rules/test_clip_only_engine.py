"""An Opacus engine given a noise multiplier of zero only clips: Opacus is not the mechanism the
project's epsilon is about, so its default accountant is never assumed.
Real projects on disk, the real builder and the real rule evaluation."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpcheck.pipelines import build_pipelines
from dpcheck.rules import evaluate
from tests.pipelines.builder import make_project

# Per-example clipping by Opacus, noise from the project's own streaming aggregator (a running
# sum of Gaussian vectors, as a tree mechanism releases), epsilon from the project's own
# calculator. Nothing here is Opacus' subsampled Gaussian mechanism.
CLIP_WITH_OPACUS = '''
import argparse

import torch
from opacus import PrivacyEngine
from torch.utils.data import DataLoader, TensorDataset

{constant}
parser = argparse.ArgumentParser()
parser.add_argument("--sigma", type=float, default={default})
args = parser.parse_args()


class RunningNoise:
    def __init__(self, scale, shapes):
        self.scale = scale
        self.total = [torch.zeros(s) for s in shapes]

    def next(self):
        self.total = [t + self.scale * torch.randn_like(t) for t in self.total]
        return self.total


def tree_epsilon(sigma, rounds):
    return rounds ** 0.5 / sigma


data = TensorDataset(torch.randn(20000, 6), torch.randint(0, 2, (20000,)))
loader = DataLoader(data, batch_size=250, shuffle=True)
model = torch.nn.Linear(6, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
engine = PrivacyEngine()
model, optimizer, loader = engine.make_private(
    module=model, optimizer=optimizer, data_loader=loader,
    noise_multiplier={given}, max_grad_norm=1.0)
noise = RunningNoise(args.sigma, [p.shape for p in model.parameters()])
for epoch in range(3):
    for x, y in loader:
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
        with torch.no_grad():
            for p, z in zip(model.parameters(), noise.next()):
                p.add_(z)
print("epsilon", tree_epsilon(args.sigma, 3 * len(loader)))
'''


def _run(tmp_path: Path, given: str, default: str = "1.0", constant: str = ""):
    code = CLIP_WITH_OPACUS.format(given=given, default=default, constant=constant)
    project = make_project(tmp_path, {"train.py": code, "requirements.txt": "opacus==1.5.2\n"})
    pipelines = build_pipelines(project)
    return pipelines, evaluate(pipelines, project)


@pytest.mark.parametrize(("given", "constant"), [("0.0", ""), ("0", ""),
                                                 ("NO_OPACUS_NOISE", "NO_OPACUS_NOISE = 0.0")])
def test_a_zero_noise_multiplier_written_in_the_code_is_not_opacus_mechanism(
        tmp_path: Path, given: str, constant: str) -> None:
    pipelines, findings = _run(tmp_path, given, constant=constant)
    assert [p.library for p in pipelines if (p.library or "").startswith("opacus")] == []
    assert not [f for f in findings if f.rule in ("DP101", "DP105")], [f.message for f in findings]


def test_a_configurable_zero_is_a_switched_off_dp_run_and_still_opacus(tmp_path: Path) -> None:
    """``--sigma 0`` by default: a run that sets it gets Opacus' FEASGM, judged as usual."""
    pipelines, findings = _run(tmp_path, "args.sigma", default="0.0")
    [pipeline] = pipelines
    assert pipeline.library == "opacus==1.5.2" and pipeline.mechanism == "FEASGM"
    assert "DP101" in {f.rule for f in findings}


def test_a_positive_noise_multiplier_is_opacus_mechanism(tmp_path: Path) -> None:
    pipelines, findings = _run(tmp_path, "1.1")
    [pipeline] = pipelines
    assert pipeline.library == "opacus==1.5.2" and pipeline.mechanism == "FEASGM"
    assert "DP101" in {f.rule for f in findings}
