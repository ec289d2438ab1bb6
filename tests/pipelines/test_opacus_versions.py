"""Which Opacus behaviour a pipeline gets from the project's dependency files (real requirement
files parsed by the discovery code), and the resulting mechanism and sampling."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpcheck.pipelines.versions import opacus_table, resolve_opacus
from tests.pipelines.builder import make_project, pipelines_of

ONE_X = '''
import torch
from opacus import PrivacyEngine
from torch.utils.data import DataLoader
from torchvision import datasets

data = datasets.MNIST("data", train=True)
loader = DataLoader(data, batch_size=256, shuffle=True)
model = torch.nn.Linear(784, 10)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
engine = PrivacyEngine({engine})
model, optimizer, loader = engine.make_private(
    module=model, optimizer=optimizer, data_loader=loader,
    noise_multiplier=1.0, max_grad_norm=1.0{extra},
)
for x, y in loader:
    optimizer.step()
print(engine.get_epsilon(1e-5))
'''


def _pipeline(tmp_path: Path, requirement: str, engine: str = "", extra: str = ""):
    files = {"train.py": ONE_X.format(engine=engine, extra=extra)}
    if requirement:
        files["requirements.txt"] = requirement + "\n"
    [pipeline] = pipelines_of(tmp_path, files)
    return pipeline


@pytest.mark.parametrize(
    ("requirement", "extra", "mechanism", "sampling", "accountant"),
    [
        ("opacus==1.4.0", "", "FEASGM", "poisson", "opacus-prv"),
        ("opacus==1.2.0", "", "FEASGM", "poisson", "opacus-rdp"),
        ("opacus==1.4.0", ', loss_reduction="sum"', "SGM", "poisson", "opacus-prv"),
        ("opacus==1.4.0", ", poisson_sampling=False", "fixed-mean", "shuffle", "opacus-prv"),
        ("opacus~=1.4.0", "", "FEASGM", "poisson", "opacus-prv"),
        ("opacus", "", "FEASGM", "poisson", "opacus"),  # dated by the 1.x API; default accountant varies
    ],
)
def test_make_private_follows_the_pinned_release(
    tmp_path: Path, requirement: str, extra: str, mechanism: str, sampling: str, accountant: str
) -> None:
    pipeline = _pipeline(tmp_path, requirement, extra=extra)
    assert (pipeline.mechanism, pipeline.sampling, pipeline.accountant.name) == (
        mechanism, sampling, accountant)


def test_explicit_accountant_wins_over_the_release_default(tmp_path: Path) -> None:
    pipeline = _pipeline(tmp_path, "opacus==1.4.0", engine='accountant="gdp"')
    assert pipeline.accountant.name == "opacus-gdp"


def test_resolution_of_pins(tmp_path: Path) -> None:
    project = make_project(tmp_path, {"train.py": "x = 1\n",
                                      "requirements.txt": "opacus>=0.13,<1.0\n"})
    spanning = resolve_opacus(project, "train.py")
    assert spanning.row is None and not spanning.pinned
    assert spanning.span is not None and spanning.span.path == "requirements.txt"
    assert {r["version"] for r in spanning.candidates} >= {"0.13.0", "0.14.0", "0.15.0"}
    exact = resolve_opacus(make_project(tmp_path / "b", {"requirements.txt": "opacus==0.13.0\n"}),
                           "train.py")
    assert exact.pinned and exact.row is not None and exact.row["mechanism"] == "ASGM"


def test_version_table_rows_are_consistent() -> None:
    rows = opacus_table()
    codes = {"A": "ASGM", "EA": "EASGM", "FEA": "FEASGM"}
    for row in rows:
        if row["mechanism"] != "not supported":
            assert row["mechanism"] == codes[row["normalization_mean"]], row["version"]
