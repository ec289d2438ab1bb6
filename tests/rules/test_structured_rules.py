"""Rules read structured pipeline data, not evidence wording: the Opacus release that
classified a pipeline (``Pipeline.release``, which decides DP105's wording and survives the JSON
round trip), why an update stayed undecided (``Pipeline.undecided``, DP106's anchor and reason),
findings unchanged when every evidence note is reworded, an Opacus update whose divisor rests on
a loader that may be kept (unknown mechanism, so no DP101, when that loader's sampling is
unknown), DP102's one-batch-per-epoch exemption, and DP104 on the user's side. Real projects on
disk, the real builder and rules."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import pytest

from dpcheck.model import Mechanism, Pipeline, Role
from dpcheck.pipelines import build_pipelines
from dpcheck.rules import evaluate
from dpcheck.pipelines.versions import opacus_table
from tests.pipelines.builder import make_project

ONE_X = '''
import os

import torch
from opacus import PrivacyEngine
from torch.utils.data import DataLoader, TensorDataset
from vendor_data import cifar_loader

data = TensorDataset(torch.randn(20000, 8), torch.randint(0, 2, (20000,)))
loader = {loader}
model = torch.nn.Linear(8, 2)
engine = PrivacyEngine(accountant="rdp")
model, optimizer, loader = engine.make_private(
    module=model, optimizer=torch.optim.SGD(model.parameters(), lr=1.0), data_loader=loader,
    noise_multiplier=1.1, max_grad_norm=1.0{flag})
for x, y in loader:
    optimizer.zero_grad()
    torch.nn.functional.cross_entropy(model(x), y).backward()
    optimizer.step()
print(engine.get_epsilon(1e-5))
'''

ZERO_X_POISSON = '''
import torch
from opacus import PrivacyEngine

model = torch.nn.Linear(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
engine = PrivacyEngine(model, batch_size=100, sample_size=1000, noise_multiplier=1.0,
                       max_grad_norm=1.0, poisson=True)
engine.attach(optimizer)
'''

HELPER_LOADER = "cifar_loader(batch_size=500)"
SHUFFLED_LOADER = "DataLoader(data, batch_size={batch}, shuffle=True)"


def _scan(tmp_path: Path, code: str, requirement: str):
    project = make_project(tmp_path, {"train.py": code, "requirements.txt": requirement})
    pipelines = build_pipelines(project)
    return pipelines, evaluate(pipelines, project)


def _ones() -> str:
    versions = [r["version"] for r in opacus_table() if not r["version"].startswith("0.")]
    return f"{versions[0]}-{versions[-1]}"


@pytest.mark.parametrize(("code", "requirement", "release", "dp105"), [
    (ONE_X.format(loader=SHUFFLED_LOADER.format(batch=200), flag=""), "opacus==1.4.0\n", "1.4.0",
     None),
    (ONE_X.format(loader=SHUFFLED_LOADER.format(batch=200), flag=""), "opacus\n", _ones(),
     "still, which release runs is not reproducible"),
    (ZERO_X_POISSON, "opacus\n", None, "the update rule cannot be known"),
], ids=["pinned", "dated-by-api-line", "undecided"])
def test_the_release_field_decides_dp105_and_survives_json(
        tmp_path: Path, code: str, requirement: str, release: str | None,
        dp105: str | None) -> None:
    [pipeline], findings = _scan(tmp_path, code, requirement)
    assert pipeline.release == release
    messages = [f.message for f in findings if f.rule == "DP105"]
    assert messages == ([] if dp105 is None else [messages[0]])
    if dp105 is not None:
        assert messages[0].endswith(dp105)
    assert Pipeline.from_json(pipeline.to_json()) == pipeline
    assert pipeline.to_json()["release"] == release


@pytest.mark.parametrize("flag", [", poisson_sampling=False",
                                  ", poisson_sampling=os.environ.get('POISSON') == '1'"],
                         ids=["false", "unresolved-flag"])
def test_a_loader_that_may_be_kept_and_is_unknown_leaves_the_update_unknown(
        tmp_path: Path, flag: str) -> None:
    """The divisor floor(N/len(loader)) is data-dependent only if the kept loader samples: with
    that loader (or whether it is kept) unknown, the mechanism is unknown and DP106, not DP101,
    reports it."""
    [pipeline], findings = _scan(tmp_path, ONE_X.format(loader=HELPER_LOADER, flag=flag),
                                 "opacus==1.4.0\n")
    assert (pipeline.mechanism, pipeline.sampling) == ("unknown", "unknown")
    assert [f.rule for f in findings] == ["DP106"]


@pytest.mark.parametrize(("flag", "mechanism", "sampling"), [
    (", poisson_sampling=False", "fixed-mean", "shuffle"),
    (", poisson_sampling=True", "FEASGM", "poisson"),
    ("", "FEASGM", "poisson"),
])
def test_a_known_loader_decides_the_opacus_update(tmp_path: Path, flag: str, mechanism: str,
                                                 sampling: str) -> None:
    [pipeline], _ = _scan(tmp_path, ONE_X.format(loader=SHUFFLED_LOADER.format(batch=200),
                                                 flag=flag), "opacus==1.4.0\n")
    assert (pipeline.mechanism, pipeline.sampling) == (mechanism, sampling)


@pytest.mark.parametrize(("batch", "batches", "dp102"), [
    (20000, 1, False), (10000, 2, True), (15000, 2, True), (200, 100, True)])
def test_dp102_needs_more_than_one_batch_per_epoch(tmp_path: Path, batch: int, batches: int,
                                                   dp102: bool) -> None:
    """One batch per epoch is the whole dataset every step: Poisson sampling with q = 1."""
    code = ONE_X.format(loader=SHUFFLED_LOADER.format(batch=batch),
                        flag=", poisson_sampling=False")
    [pipeline], findings = _scan(tmp_path, code, "opacus==1.4.0\n")
    assert pipeline.sampling == "shuffle"
    assert math.ceil(pipeline.params["N"].value / pipeline.params["batch_size"].value) == batches
    assert ("DP102" in {f.rule for f in findings}) is dp102


LIBRARY = '''
import torch


class NoisyStep:
    def __init__(self, params, noise_multiplier, clip):
        self.params = params
        self.sigma = noise_multiplier
        self.clip = clip

    def apply(self, per_sample_grads, batch_size):
        norms = per_sample_grads.norm(dim=1)
        clipped = per_sample_grads * (self.clip / norms).clamp(max=1.0)[:, None]
        std = self.sigma * self.clip
        noisy = clipped.sum(0) + torch.normal(0.0, std, size=clipped.shape[1:])
        self.params -= 0.1 * noisy / batch_size
'''

USER = '''
import torch
from opacus.accountants import RDPAccountant
from torch.func import grad, vmap
from torch.utils.data import DataLoader, TensorDataset

from lib.noisy import NoisyStep

params = torch.zeros(8)
data = TensorDataset(torch.randn(60000, 8), torch.randn(60000))
loader = DataLoader(data, batch_size=100, shuffle=True)
step = NoisyStep(params,
                 noise_multiplier={sigma},
                 clip=1.0)
per_sample = vmap(grad(lambda p, x: (p * x).sum()), in_dims=(None, 0))
accountant = RDPAccountant()
for xb, yb in loader:
    step.apply(per_sample(params, xb), 100)
    accountant.step(noise_multiplier={sigma}, sample_rate=100 / 60000)
'''


def test_dp104_is_anchored_where_the_user_hands_over_sigma(tmp_path: Path) -> None:
    """The noise is drawn in the project's library module; the script passes
    ``noise_multiplier=`` at line 12: M = 600 and 0.2 < 1/sqrt(2 ln 600) = 0.280."""
    assert 0.2 < (2 * math.log(600)) ** -0.5
    project = make_project(tmp_path, {"lib/__init__.py": "", "lib/noisy.py": LIBRARY,
                                      "train.py": USER.format(sigma=0.2)})
    findings = evaluate(build_pipelines(project), project)
    [dp104] = [f for f in findings if f.rule == "DP104"]
    assert (dp104.span.path, dp104.span.line) == ("train.py", 12)
    assert dp104.context == "noise_multiplier=0.2,"


@pytest.mark.parametrize(("code", "requirement", "rule"), [
    (ONE_X.format(loader=HELPER_LOADER, flag=", poisson_sampling=False"), "opacus==1.4.0\n",
     "DP106"),
    (ZERO_X_POISSON, "opacus\n", "DP105"),
    (ONE_X.format(loader=SHUFFLED_LOADER.format(batch=200), flag=""), "opacus\n", "DP105"),
], ids=["undecided-update", "undecided-release", "dated-release"])
def test_rewording_every_evidence_note_changes_no_finding(
        tmp_path: Path, code: str, requirement: str, rule: str) -> None:
    project = make_project(tmp_path, {"train.py": code, "requirements.txt": requirement})
    pipelines = build_pipelines(project)
    reworded = [replace(p, evidence=tuple(replace(e, note="reworded") for e in p.evidence))
                for p in pipelines]

    def shown(findings):
        return [(f.rule, f.severity, f.span, f.message) for f in findings]

    before = evaluate(pipelines, project)
    assert rule in {f.rule for f in before}
    assert shown(evaluate(reworded, project)) == shown(before)


def test_an_undecided_update_says_why_in_a_field_that_survives_json(tmp_path: Path) -> None:
    [pipeline], findings = _scan(tmp_path, ONE_X.format(loader=HELPER_LOADER,
                                                         flag=", poisson_sampling=False"),
                                 "opacus==1.4.0\n")
    undecided = pipeline.undecided
    assert pipeline.mechanism == Mechanism.UNKNOWN and undecided is not None
    [dp106] = findings
    assert dp106.span == undecided.span and f"({undecided.reason})" in dp106.message
    assert any(e.role == Role.UPDATE and e.span == undecided.span for e in pipeline.evidence)
    data = json.loads(json.dumps(pipeline.to_json()))
    assert (data["mechanism"], data["sampling"]) == ("unknown", "unknown")
    assert data["undecided"]["reason"] == undecided.reason
    assert data["release_reason"] == pipeline.release_reason == "opacus==1.4.0 (version table)"
    assert Pipeline.from_json(data) == pipeline


def test_a_decided_pipeline_has_no_undecided_reason(tmp_path: Path) -> None:
    [pipeline], _ = _scan(tmp_path, ONE_X.format(loader=SHUFFLED_LOADER.format(batch=200),
                                                 flag=""), "opacus==1.4.0\n")
    assert pipeline.mechanism == Mechanism.FEASGM and pipeline.undecided is None
    assert pipeline.to_json()["undecided"] is None
