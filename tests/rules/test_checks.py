"""The rule functions on real pipelines: DP104's threshold against an independent computation,
DP103 only on resolved mismatches, DP101/DP102 anchors, reporting filter and catalog severity."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from dpcheck.catalog import load_catalog
from dpcheck.pipelines import build_pipelines
from dpcheck.rules import evaluate
from tests.pipelines.builder import make_project

SHUFFLED = '''
import torch
from opacus.accountants import RDPAccountant
from torch.func import grad, vmap
from torch.utils.data import DataLoader
from torchvision import datasets

SIGMA, CLIP = {sigma}, 1.0
BATCH = {batch}
data = datasets.MNIST("data", train=True)
loader = DataLoader(data, batch_size=BATCH, shuffle=True)
per_sample = vmap(grad(lambda p, x: (p * x).sum()), in_dims=(None, 0))
accountant = RDPAccountant()
for epoch in range(2):
    for xb, yb in loader:
        g = per_sample(params, xb)
        factor = (CLIP / (g.norm(dim=1) + 1e-6)).clamp(max=1.0)
        summed = (factor[:, None] * g).sum(0)
        params -= 0.1 * (summed + SIGMA * CLIP * torch.randn_like(summed)) / BATCH
        accountant.step(noise_multiplier=SIGMA, sample_rate={rate})
'''


def _findings(tmp_path: Path, sigma: float, batch: int = 64, rate: str = "BATCH / 60000",
              reported: frozenset[str] | None = None, drop_last: bool | None = None):
    code = SHUFFLED.format(sigma=sigma, batch=batch, rate=rate)
    if drop_last is not None:
        code = code.replace("shuffle=True)", f"shuffle=True, drop_last={drop_last})")
    project = make_project(tmp_path, {"train.py": code}, reported=reported)
    return evaluate(build_pipelines(project), project)


def _threshold(batches: int) -> float:
    return (2 * math.log(batches)) ** -0.5


@pytest.mark.parametrize("batch", [64, 500])
def test_dp104_fires_exactly_below_the_shuffle_threshold(tmp_path: Path, batch: int) -> None:
    batches = math.ceil(60000 / batch)
    low = round(_threshold(batches) - 0.005, 4)
    high = round(_threshold(batches) + 0.005, 4)
    fired_low = {f.rule for f in _findings(tmp_path / "low", low, batch)}
    fired_high = {f.rule for f in _findings(tmp_path / "high", high, batch)}
    assert "DP104" in fired_low and "DP104" not in fired_high
    assert {"DP102"} <= fired_low & fired_high


def test_dp104_is_anchored_on_the_noise_and_dp102_on_the_loader(tmp_path: Path) -> None:
    findings = {f.rule: f for f in _findings(tmp_path, 0.1)}
    lines = (tmp_path / "train.py").read_text().splitlines()
    noise_line = next(i for i, text in enumerate(lines, 1) if "torch.randn_like" in text)
    loader_line = next(i for i, text in enumerate(lines, 1) if "DataLoader(" in text)
    assert findings["DP104"].span.line == noise_line
    assert findings["DP104"].span.column == lines[noise_line - 1].index("torch.randn_like") + 1
    assert findings["DP102"].span.line == loader_line
    assert findings["DP102"].context == lines[loader_line - 1].strip()
    assert findings["DP102"].evidence and all(e.span != findings["DP102"].span
                                              for e in findings["DP102"].evidence)


def test_dp103_needs_both_sides_resolved_and_different(tmp_path: Path) -> None:
    same = {f.rule for f in _findings(tmp_path / "same", 1.0)}
    wrong = [f for f in _findings(tmp_path / "wrong", 1.0, rate="BATCH / 50000")]
    unresolved = {f.rule for f in _findings(tmp_path / "unresolved", 1.0, rate="q_from_file()")}
    assert "DP103" not in same and "DP103" not in unresolved
    dp103 = next(f for f in wrong if f.rule == "DP103")
    lines = (tmp_path / "wrong" / "train.py").read_text().splitlines()
    assert "accountant.step(" in lines[dp103.span.line - 1]
    assert "q = 0.00128" in dp103.message and "0.00106667" in dp103.message


def test_findings_only_in_reported_files_and_with_catalog_severity(tmp_path: Path) -> None:
    assert _findings(tmp_path / "a", 0.1, reported=frozenset({"other.py"})) == []
    catalog = load_catalog()
    for finding in _findings(tmp_path / "b", 0.1):
        assert finding.severity == catalog.get(finding.rule).severity


def test_dp104_counts_batches_per_epoch_with_drop_last(tmp_path: Path) -> None:
    """60000 examples in batches of 7000: M = ceil = 9 batches, or floor = 8 with drop_last.
    A sigma between the two thresholds fires only when the last partial batch is dropped."""
    low, high = _threshold(9), _threshold(8)
    sigma = round((low + high) / 2, 4)
    assert low < sigma < high
    kept = {f.rule for f in _findings(tmp_path / "kept", sigma, 7000, drop_last=False)}
    default = {f.rule for f in _findings(tmp_path / "default", sigma, 7000)}
    dropped = [f for f in _findings(tmp_path / "dropped", sigma, 7000, drop_last=True)]
    assert "DP104" not in kept and "DP104" not in default
    dp104 = next(f for f in dropped if f.rule == "DP104")
    assert "M = 8 " in dp104.message


def test_dp104_bound_counts_the_same_batches_as_the_rule(tmp_path: Path) -> None:
    """The bound attached to a DP104 finding must use the rule's M (floor with drop_last)."""
    from dpcheck.bounds.attach import attach_bounds

    low, high = _threshold(9), _threshold(8)
    sigma = round((low + high) / 2, 4)
    code = SHUFFLED.format(sigma=sigma, batch=7000, rate="BATCH / 60000").replace(
        "shuffle=True)", "shuffle=True, drop_last=True)")
    project = make_project(tmp_path, {"train.py": code})
    pipelines = build_pipelines(project)
    [finding] = [f for f in attach_bounds(evaluate(pipelines, project), pipelines) if f.rule == "DP104"]
    notes = " ".join(finding.bound["witness"]["notes"])
    assert "M=8 batches per epoch" in notes


def test_a_rule_hit_carries_its_message_parameters_as_fields(tmp_path: Path) -> None:
    """DP104's hit holds sigma, M and the threshold as numbers; the message renders them."""
    from dpcheck.rules import low_noise_shuffle

    code = SHUFFLED.format(sigma=0.1, batch=64, rate="BATCH / 60000")
    project = make_project(tmp_path, {"train.py": code})
    [pipeline] = build_pipelines(project)
    [hit] = low_noise_shuffle.check(pipeline, project)
    assert (hit.sigma, hit.rounds) == (0.1, math.ceil(60000 / 64))
    assert math.isclose(hit.threshold, _threshold(938))
    assert f"M = {hit.rounds} " in hit.message() and f"{hit.threshold:.3f}" in hit.message()
