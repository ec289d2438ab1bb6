"""Dating an undecided Opacus release by the API the user code calls (git-commit pins and
DP-SGD-Baseline-Opacus, bench/REAL_REPOS.md): real projects written to disk, real dependency-file
discovery, the real index finding the Opacus usage."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpcheck.pipelines.index import ProjectIndex
from dpcheck.pipelines.opacus_usage import (
    KEPT_LOADER,
    api_major,
    find_usage,
    normalization,
)
from dpcheck.pipelines.scope import Ctx
from dpcheck.pipelines.versions import DATED, opacus_table, resolve_opacus
from tests.pipelines.builder import make_project

ONE_X = '''
import torch
from opacus import PrivacyEngine
from torch.utils.data import DataLoader, TensorDataset

data = TensorDataset(torch.randn(1000, 4), torch.randint(0, 2, (1000,)))
loader = DataLoader(data, batch_size=100, shuffle=True)
model = torch.nn.Linear(4, 2)
engine = PrivacyEngine()
model, optimizer, loader = engine.make_private(
    module=model, optimizer=torch.optim.SGD(model.parameters(), lr=0.1), data_loader=loader,
    noise_multiplier=1.0, max_grad_norm=1.0{extra})
'''

ZERO_X = '''
import torch
from opacus import PrivacyEngine

model = torch.nn.Linear(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
engine = PrivacyEngine(model, batch_size=100, sample_size=1000, noise_multiplier=1.0,
                       max_grad_norm=1.0{extra})
engine.attach(optimizer)
'''

UPSTREAM_COMMIT = "opacus @ git+https://github.com/pytorch/opacus.git@1dc5feb9928ea2962fa751fd9969"


def _resolved(tmp_path: Path, code: str, requirement: str | None):
    files = {"train.py": code}
    if requirement is not None:
        files["requirements.txt"] = f"torch\n{requirement}\n"
    project = make_project(tmp_path, files)
    usage = find_usage(ProjectIndex(project), [Ctx("train.py", "<module>")])
    assert usage is not None
    return resolve_opacus(project, "train.py", usage), usage


def _versions(major: int) -> list[str]:
    return [r["version"] for r in opacus_table() if min(int(r["version"][0]), 1) == major]


@pytest.mark.parametrize("requirement", ["opacus", UPSTREAM_COMMIT, "opacus>=0.14"])
def test_make_private_dates_an_undecided_release_to_the_1x_line(
        tmp_path: Path, requirement: str) -> None:
    resolution, usage = _resolved(tmp_path, ONE_X.format(extra=""), requirement)
    ones = _versions(1)
    assert resolution.row is not None and not resolution.pinned
    assert resolution.row["version"] == f"{ones[0]}-{ones[-1]}"
    assert normalization(usage, resolution.row)[0] == "floor-expected"
    assert resolution.row["poisson_default"] is True
    # RDP up to 1.2, PRV from 1.3: the line has no single default accountant
    assert resolution.row["default_accountant"] is None
    assert DATED in resolution.reason and "1.x API (make_private)" in resolution.reason


def test_a_range_inside_the_prv_releases_keeps_its_default_accountant(tmp_path: Path) -> None:
    resolution, _ = _resolved(tmp_path, ONE_X.format(extra=""), "opacus>=1.3")
    assert resolution.row is not None and resolution.row["default_accountant"] == "opacus-prv"


def test_attach_without_the_poisson_flag_divides_by_the_realized_batch_in_every_0x_release(
        tmp_path: Path) -> None:
    resolution, usage = _resolved(tmp_path, ZERO_X.format(extra=""), UPSTREAM_COMMIT)
    zeros = _versions(0)
    assert resolution.row is not None and not resolution.pinned
    assert resolution.row["version"] == f"{zeros[0]}-{zeros[-1]}"
    assert normalization(usage, resolution.row)[0] == "realized"
    assert resolution.row["poisson_default"] is False
    assert "git ref of pytorch/opacus" in resolution.reason


@pytest.mark.parametrize("requirement", ["opacus", "opacus>=0.13,<1.0", UPSTREAM_COMMIT])
def test_attach_with_poisson_true_stays_undecided(tmp_path: Path, requirement: str) -> None:
    """0.12-0.13 divide by |B| whatever the flag, 0.14-0.15 by N*q under ``poisson=True``."""
    resolution, _ = _resolved(tmp_path, ZERO_X.format(extra=", poisson=True"), requirement)
    assert resolution.row is None and not resolution.pinned
    assert "normalize differently" in resolution.reason and DATED not in resolution.reason


def test_a_fork_from_git_is_never_dated(tmp_path: Path) -> None:
    fork = "opacus @ git+https://github.com/example-lab/opacus.git@dp-experiments"
    resolution, _ = _resolved(tmp_path, ONE_X.format(extra=""), fork)
    assert resolution.row is None and resolution.candidates == ()


def test_a_range_of_the_other_line_gives_no_candidates(tmp_path: Path) -> None:
    resolution, _ = _resolved(tmp_path, ONE_X.format(extra=""), "opacus>=0.13,<1.0")
    assert resolution.row is None


def test_an_exact_pin_is_not_redated(tmp_path: Path) -> None:
    resolution, _ = _resolved(tmp_path, ZERO_X.format(extra=""), "opacus==1.4.0")
    assert resolution.pinned and resolution.row is not None
    assert resolution.row["version"] == "1.4.0"


def test_without_the_usage_the_release_stays_undecided(tmp_path: Path) -> None:
    project = make_project(tmp_path, {"train.py": ONE_X.format(extra=""),
                                      "requirements.txt": "opacus\n"})
    assert resolve_opacus(project, "train.py").row is None


@pytest.mark.parametrize(("code", "major"), [(ONE_X.format(extra=""), 1),
                                             (ZERO_X.format(extra=""), 0)])
def test_api_major(tmp_path: Path, code: str, major: int) -> None:
    _, usage = _resolved(tmp_path, code, None)
    assert api_major(usage) == major


@pytest.mark.parametrize(("extra", "kept"), [(", poisson_sampling=False", True), ("", False),
                                             (", poisson_sampling=True", False)])
def test_only_poisson_sampling_false_keeps_the_loader(tmp_path: Path, extra: str,
                                                      kept: bool) -> None:
    resolution, usage = _resolved(tmp_path, ONE_X.format(extra=extra), "opacus==1.4.0")
    assert resolution.row is not None
    kind, why = normalization(usage, resolution.row)
    assert kind == "floor-expected" and why.startswith(KEPT_LOADER) is kept


def test_a_requirement_without_a_version_is_named_so(tmp_path: Path) -> None:
    resolution, _ = _resolved(tmp_path, ZERO_X.format(extra=", poisson=True"), "opacus")
    assert resolution.reason.startswith("opacus is required without a version ('opacus')")
    assert resolution.span is not None and resolution.span.line == 2


@pytest.mark.parametrize(("code", "pyproject", "versions"), [
    (ZERO_X.format(extra=""), '^0.14.0', ["0.14.0"]),
    (ONE_X.format(extra=""), '~1.4', ["1.4.0", "1.4.1"]),
])
def test_a_poetry_series_whose_releases_behave_alike_decides_the_release(
        tmp_path: Path, code: str, pyproject: str, versions: list[str]) -> None:
    """Poetry's ``^0.14.0`` is >=0.14.0,<0.15.0 and ``~1.4`` is >=1.4,<1.5: one release series,
    decided by the table's rows in it, as an exact pin would be (no DP105)."""
    project = make_project(tmp_path, {
        "train.py": code,
        "pyproject.toml": f'[tool.poetry.dependencies]\npython = "^3.9"\nopacus = "{pyproject}"\n'})
    usage = find_usage(ProjectIndex(project), [Ctx("train.py", "<module>")])
    assert usage is not None
    resolution = resolve_opacus(project, "train.py", usage)
    in_table = [r["version"] for r in opacus_table()]
    assert [v for v in versions if v in in_table] == versions
    assert resolution.pinned and resolution.row is not None
    assert resolution.row["version"] == versions[-1]
    assert resolution.span is not None and resolution.span.line == 3


def test_a_local_build_of_a_release_is_that_release(tmp_path: Path) -> None:
    resolution, _ = _resolved(tmp_path, ONE_X.format(extra=""), "opacus==1.4.0+cu118")
    assert resolution.pinned and resolution.row is not None
    assert resolution.row["version"] == "1.4.0"


def test_an_undecided_release_names_the_computed_requirements_dpcheck_did_not_read(
        tmp_path: Path) -> None:
    setup = ("from setuptools import setup\n\n"
             "def wanted():\n    return open('deps.txt').read().split()\n\n"
             "setup(name='trainer', install_requires=wanted())\n")
    project = make_project(tmp_path, {"train.py": ZERO_X.format(extra=", poisson=True"),
                                      "setup.py": setup})
    assert project.facts.problems == ()
    resolution = resolve_opacus(project, "train.py")
    assert resolution.row is None and not resolution.pinned
    assert resolution.reason.startswith("opacus is not pinned in any dependency file; "
                                        "setup.py:6: install_requires is computed")
