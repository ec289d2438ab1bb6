"""DP104 decided without counting the batches: sigma below the threshold of the largest number
of shuffled batches per epoch the code can have (M <= N; N <= 10^12 when N is unknown). Real
projects on disk, the real builder, the rule's check and the rule evaluation."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from dpcheck.pipelines import build_pipelines
from dpcheck.rules import evaluate
from dpcheck.rules.low_noise_shuffle import check
from tests.pipelines.builder import make_project

# The dataset comes from a file dpcheck cannot size; the batch size from the command line.
LOOP = '''
import argparse

import torch
from torch.utils.data import DataLoader, TensorDataset

parser = argparse.ArgumentParser()
parser.add_argument("--batch", type=int, default=64)
args = parser.parse_args()

SIGMA, CLIP, LR = {sigma}, 1.0, 0.1
features, labels = torch.load("private_records.pt")
{dataset}
loader = DataLoader(dataset, batch_size={batch}, {sampling})
model = torch.nn.Linear(16, 2)
for epoch in range(4):
    for x, y in loader:
        grads = []
        for xi, yi in zip(x, y):
            loss = torch.nn.functional.cross_entropy(model(xi[None]), yi[None])
            g = torch.autograd.grad(loss, list(model.parameters()))
            norm = torch.sqrt(sum((t ** 2).sum() for t in g))
            grads.append([t * min(1.0, CLIP / (norm.item() + 1e-9)) for t in g])
        with torch.no_grad():
            for i, p in enumerate(model.parameters()):
                total = sum(g[i] for g in grads)
                p -= LR * (total + SIGMA * CLIP * torch.randn_like(total))
'''
UNSIZED = "dataset = TensorDataset(features, labels)"
SIZED = "dataset = TensorDataset(torch.randn(3000, 16), torch.randint(0, 2, (3000,)))"


def _hits(tmp_path: Path, sigma: float, dataset: str = UNSIZED, batch: str = "args.batch",
          sampling: str = "shuffle=True"):
    code = LOOP.format(sigma=sigma, dataset=dataset, batch=batch, sampling=sampling)
    project = make_project(tmp_path, {"train.py": code})
    [pipeline] = build_pipelines(project)
    return pipeline, list(check(pipeline, project)), evaluate([pipeline], project)


def test_sigma_below_the_threshold_of_any_dataset_fires_without_n(tmp_path: Path) -> None:
    pipeline, [hit], findings = _hits(tmp_path, 0.1)
    assert pipeline.sampling == "shuffle" and "N" not in pipeline.params
    assert not hit.counted and hit.rounds == 10**12
    assert math.isclose(hit.threshold, 1 / math.sqrt(2 * math.log(1e12)), rel_tol=1e-12)
    assert hit.threshold == pytest.approx(0.1345, abs=5e-5)
    [dp104] = [f for f in findings if f.rule == "DP104"]
    assert "up to 10^12" in dp104.message and "dataset size is unknown" in dp104.message


def test_sigma_above_that_threshold_waits_for_n(tmp_path: Path) -> None:
    """0.2 is below the threshold of many real epochs (M > 270) but not of every one."""
    _, hits, findings = _hits(tmp_path, 0.2)
    assert hits == [] and "DP104" not in {f.rule for f in findings}


def test_a_known_n_bounds_the_batches_when_the_batch_size_is_unknown(tmp_path: Path) -> None:
    """M <= N = 3000: threshold 1/sqrt(2 ln 3000) = 0.2503 > 0.2 (the batch size comes from a
    helper dpcheck cannot read)."""
    pipeline, [hit], _ = _hits(tmp_path, 0.2, dataset=SIZED, batch="pick_batch()")
    assert pipeline.params["N"].value == 3000 and "batch_size" not in pipeline.params
    assert not hit.counted and hit.rounds == 3000
    assert math.isclose(hit.threshold, 1 / math.sqrt(2 * math.log(3000)), rel_tol=1e-12)
    assert "M <= N = 3000" in hit.message()


def test_a_counted_m_is_used_as_before(tmp_path: Path) -> None:
    """N = 3000, B = 64: M = ceil(3000/64) = 47, threshold 1/sqrt(2 ln 47) = 0.3600."""
    _, [hit], _ = _hits(tmp_path, 0.3, dataset=SIZED, batch="64")
    assert hit.counted and hit.rounds == 47
    assert math.isclose(hit.threshold, 1 / math.sqrt(2 * math.log(47)), rel_tol=1e-12)


def test_poisson_sampling_is_outside_the_rule_even_at_low_noise(tmp_path: Path) -> None:
    code = LOOP.format(sigma=0.05, dataset=UNSIZED, batch="args.batch", sampling="shuffle=True")
    code = code.replace("    for x, y in loader:\n",
                        "    for _ in range(100):\n"
                        "        keep = torch.rand(len(features)) < 0.01\n"
                        "        x, y = features[keep], labels[keep]\n")
    project = make_project(tmp_path, {"train.py": code})
    [pipeline] = build_pipelines(project)
    assert pipeline.sampling == "poisson"
    assert list(check(pipeline, project)) == []


def test_a_zero_noise_multiplier_is_dp_switched_off_not_low_noise(tmp_path: Path) -> None:
    """sigma = 0 adds no noise: a non-private run (a switched-off default), with nothing for
    DP104 to refute, whether M is counted or only bounded."""
    for name, dataset, batch in (("bounded", UNSIZED, "args.batch"), ("counted", SIZED, "64")):
        _, hits, findings = _hits(tmp_path / name, 0, dataset=dataset, batch=batch)
        assert hits == [] and "DP104" not in {f.rule for f in findings}, name
