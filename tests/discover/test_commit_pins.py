"""Placing an upstream Opacus commit pin between release tags with ``DPCHECK_OPACUS_REPO``
(git-commit pins, bench/REAL_REPOS.md): a real git history made with gitpython, real requirement
files, the real rules."""

from __future__ import annotations

from pathlib import Path

import git
import pytest

from dpcheck.discover.commit_pins import ENVIRONMENT_VARIABLE, release_bounds
from dpcheck.discover.facts import collect_facts
from dpcheck.engine import ScanOptions, scan
from dpcheck.errors import DpcheckError
from dpcheck.pipelines import build_pipelines
from dpcheck.rules import evaluate
from tests.pipelines.builder import make_project

UPSTREAM = "opacus @ git+https://github.com/pytorch/opacus.git@{ref}"


@pytest.fixture
def history(tmp_path: Path) -> tuple[git.Repo, dict[str, str]]:
    """A history v0.12.0 - a - v0.13.0 - b - v0.14.0 - c (``a``, ``b``, ``c`` untagged), plus a
    pre-release tag on ``c``; returns the repository and the commit of each name."""
    repo = git.Repo.init(tmp_path / "opacus-mirror")
    with repo.config_writer() as config:
        config.set_value("user", "name", "dpcheck tests")
        config.set_value("user", "email", "tests@example.invalid")
    commits: dict[str, str] = {}
    for name in ("v0.12.0", "a", "v0.13.0", "b", "v0.14.0", "c"):
        (Path(repo.working_dir) / "version.txt").write_text(name)
        repo.index.add(["version.txt"])
        commits[name] = repo.index.commit(name).hexsha
        if name.startswith("v"):
            repo.create_tag(name)
    repo.create_tag("v1.0.0rc1", ref=commits["c"])
    return repo, commits


def test_release_bounds(history: tuple[git.Repo, dict[str, str]]) -> None:
    repo, commits = history
    assert tuple(map(str, release_bounds(repo, commits["a"]) or ())) == ("0.12.0", "0.13.0")
    assert tuple(map(str, release_bounds(repo, commits["b"][:9]) or ())) == ("0.13.0", "0.14.0")
    assert tuple(map(str, release_bounds(repo, commits["v0.13.0"]) or ())) == ("0.13.0", "0.13.0")
    # after the last final release (only a pre-release contains it): not placed
    assert release_bounds(repo, commits["c"]) is None
    assert release_bounds(repo, "0" * 40) is None


def _pins(tmp_path: Path, requirement: str):
    (tmp_path / "project").mkdir(exist_ok=True)
    (tmp_path / "project" / "requirements.txt").write_text(requirement + "\n")
    facts = collect_facts(tmp_path / "project", [tmp_path / "project" / "requirements.txt"])
    return facts.pin("opacus")


def test_commit_pins_become_release_ranges(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           history: tuple[git.Repo, dict[str, str]]) -> None:
    repo, commits = history
    monkeypatch.setenv(ENVIRONMENT_VARIABLE, repo.working_dir)
    between = _pins(tmp_path, UPSTREAM.format(ref=commits["a"]))
    assert between is not None and (between.specifier, between.version) == (
        ">=0.12.0,<=0.13.0", None)
    tagged = _pins(tmp_path, UPSTREAM.format(ref=commits["v0.14.0"]))
    assert tagged is not None and (tagged.specifier, tagged.version) == ("==0.14.0", "0.14.0")


@pytest.mark.parametrize("requirement", [
    UPSTREAM.format(ref="main"),  # a branch moves
    "opacus @ git+https://github.com/example-lab/opacus.git@{a}",  # a fork
    UPSTREAM.format(ref="{c}"),  # after the last release
])
def test_other_git_pins_are_left_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            history: tuple[git.Repo, dict[str, str]],
                                            requirement: str) -> None:
    repo, commits = history
    monkeypatch.setenv(ENVIRONMENT_VARIABLE, repo.working_dir)
    pin = _pins(tmp_path, requirement.format(**commits))
    assert pin is not None and pin.specifier.startswith("@")


def test_without_the_variable_nothing_is_placed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                history: tuple[git.Repo, dict[str, str]]) -> None:
    monkeypatch.delenv(ENVIRONMENT_VARIABLE, raising=False)
    pin = _pins(tmp_path, UPSTREAM.format(ref=history[1]["a"]))
    assert pin is not None and pin.specifier == f"@{history[1]['a']}"


def test_a_variable_that_is_not_a_repository_is_a_clear_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENVIRONMENT_VARIABLE, str(tmp_path / "missing"))
    with pytest.raises(DpcheckError, match=f"{ENVIRONMENT_VARIABLE}=.*missing.*not a git"):
        _pins(tmp_path, UPSTREAM.format(ref="1dc5feb"))


ATTACH = '''
import torch
from opacus import PrivacyEngine
from opacus.utils.uniform_sampler import UniformWithReplacementSampler
from torch.utils.data import DataLoader, TensorDataset

data = TensorDataset(torch.randn(50000, 8), torch.randint(0, 2, (50000,)))
loader = DataLoader(data, batch_sampler=UniformWithReplacementSampler(
    num_samples=50000, sample_rate=0.01))
model = torch.nn.Linear(8, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
engine = PrivacyEngine(model, sample_rate=0.01, sample_size=50000, noise_multiplier=1.1,
                       max_grad_norm=1.0, poisson=True)
engine.attach(optimizer)
for x, y in loader:
    optimizer.zero_grad()
    torch.nn.functional.cross_entropy(model(x), y).backward()
    optimizer.step()
print(engine.get_privacy_spent(1e-5))
'''


@pytest.mark.parametrize(("commit", "rules", "mechanism"), [
    ("a", {"DP101"}, "ASGM"),  # 0.12 and 0.13 both divide by |B|: a reproducible commit
    ("b", {"DP105"}, "unknown"),  # 0.13 (|B|) and 0.14 (N*q with poisson=True) differ
])
def test_a_placed_commit_decides_the_update_rule(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        history: tuple[git.Repo, dict[str, str]], commit: str, rules: set[str],
        mechanism: str) -> None:
    repo, commits = history
    monkeypatch.setenv(ENVIRONMENT_VARIABLE, repo.working_dir)
    project = make_project(tmp_path / "project", {
        "train.py": ATTACH, "requirements.txt": UPSTREAM.format(ref=commits[commit]) + "\n"})
    [pipeline] = build_pipelines(project)
    assert pipeline.mechanism == mechanism
    assert {f.rule for f in evaluate([pipeline], project)} == rules


def test_a_cached_scan_follows_the_history_clone(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        history: tuple[git.Repo, dict[str, str]]) -> None:
    """The placement is an input of the linking stage: setting the variable, or a new tag in
    the clone, must not serve the cached result of the scan before."""
    repo, commits = history
    project = make_project(tmp_path / "project", {
        "train.py": ATTACH, "requirements.txt": UPSTREAM.format(ref=commits["b"]) + "\n"})
    options = ScanOptions(paths=[project.root], cache_dir=tmp_path / "cache", jobs=1)
    monkeypatch.delenv(ENVIRONMENT_VARIABLE, raising=False)
    assert {f.rule for f in scan(options).findings} == {"DP105"}
    monkeypatch.setenv(ENVIRONMENT_VARIABLE, repo.working_dir)
    assert {f.rule for f in scan(options).findings} == {"DP105"}  # 0.13 and 0.14 differ
    repo.delete_tag("v0.14.0")
    repo.create_tag("v0.14.0", ref=commits["b"])  # b is now the 0.14.0 release: EASGM
    assert {f.rule for f in scan(options).findings} == {"DP101"}
