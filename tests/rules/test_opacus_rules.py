"""DP101 on Opacus pipelines: not claimed when ``poisson_sampling=False`` keeps a loader dpcheck
cannot follow (DP-SGD-Baseline-Opacus, bench/REAL_REPOS.md), and worded after the accountant really
assumed (tan, bench/REAL_REPOS.md). Real projects, the real builder and the real rule
evaluation."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpcheck.pipelines import build_pipelines
from dpcheck.rules import evaluate
from tests.pipelines.builder import make_project

EXTERNAL_LOADER = '''
import torch
from opacus import PrivacyEngine
from vendor_data import cifar_loader

loader = cifar_loader(batch_size=500)
model = torch.nn.Linear(8, 2)
engine = PrivacyEngine()
model, optimizer, loader = engine.make_private(
    module=model, optimizer=torch.optim.SGD(model.parameters(), lr=1.0), data_loader=loader,
    noise_multiplier=1.1, max_grad_norm=1.0{flag})
for epoch in range(10):
    for x, y in loader:
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
    print(engine.get_epsilon(1e-5))
'''

NO_ACCOUNTANT = '''
import torch
from opacus import PrivacyEngine
from torch.utils.data import DataLoader, TensorDataset

data = TensorDataset(torch.randn(50000, 8), torch.randint(0, 2, (50000,)))
model = torch.nn.Linear(8, 2)
model, optimizer, loader = PrivacyEngine().make_private(
    module=model, optimizer=torch.optim.SGD(model.parameters(), lr=1.0),
    data_loader=DataLoader(data, batch_size=500), noise_multiplier=1.1, max_grad_norm=1.0)
for x, y in loader:
    optimizer.zero_grad()
    torch.nn.functional.cross_entropy(model(x), y).backward()
    optimizer.step()
'''


def _findings(tmp_path: Path, code: str, requirement: str):
    project = make_project(tmp_path, {"train.py": code, "requirements.txt": requirement})
    pipelines = build_pipelines(project)
    return pipelines, evaluate(pipelines, project)


@pytest.mark.parametrize(("flag", "dp101"), [(", poisson_sampling=False", False), ("", True)])
def test_dp101_needs_opacus_poisson_sampling_when_the_loader_is_unknown(
        tmp_path: Path, flag: str, dp101: bool) -> None:
    """Kept, the unknown loader decides whether floor(N/len(loader)) is data-dependent; by
    default Opacus replaces it with its Poisson loader, and FEASGM under Poisson is DP101."""
    [pipeline], findings = _findings(tmp_path, EXTERNAL_LOADER.format(flag=flag),
                                     "opacus==1.4.0\n")
    assert pipeline.sampling == ("unknown" if not dp101 else "poisson")
    assert ("DP101" in {f.rule for f in findings}) is dp101


@pytest.mark.parametrize(("requirement", "default"), [("opacus==1.1.2\n", "(opacus-rdp)"),
                                                      ("opacus==1.4.0\n", "(opacus-prv)")])
def test_dp101_names_the_default_accountant_when_no_accountant_call_is_found(
        tmp_path: Path, requirement: str, default: str) -> None:
    [pipeline], findings = _findings(tmp_path, NO_ACCOUNTANT, requirement)
    assert pipeline.accountant.name == "none" and pipeline.mechanism == "FEASGM"
    [dp101] = [f for f in findings if f.rule == "DP101"]
    assert f"default accountant {default} is assumed" in dp101.message
    assert "the library's accountant" not in dp101.message
