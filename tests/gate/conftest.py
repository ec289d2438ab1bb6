"""Real temp git repositories built from the fixture projects, and a JSON-scan helper."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import git
import pytest

from dpcheck.cli import main

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
ADD_SHUFFLE = ('        loss_reduction="sum",\n', '        loss_reduction="sum",\n        poisson_sampling=False,\n')

DP101_FILE, DP101_LINE = "asgm/train_cifar.py", 48

ScanJson = Callable[..., tuple[int, dict, str]]


def copy_fixture(name: str, dest: Path) -> None:
    """A fixture project's files (without its expected results) copied to ``dest``."""
    shutil.copytree(FIXTURES / name, dest, ignore=shutil.ignore_patterns("expected.json"))


def commit_all(repo: git.Repo, message: str) -> git.Commit:
    """Stage every change (additions, edits, deletions) and commit it."""
    repo.git.add("--all")
    return repo.index.commit(message)


def edit(path: Path, old: str, new: str) -> None:
    """Replace the one occurrence of ``old`` in ``path``."""
    text = path.read_text()
    assert text.count(old) == 1, f"{old!r} not unique in {path}"
    path.write_text(text.replace(old, new))


@pytest.fixture
def gate_repo(tmp_path: Path) -> Path:
    """A committed project: ``asgm/`` fires DP101 (an error: ASGM under Opacus 0.13, pinned in
    its requirements.txt), ``cifar/`` is clean (sum reduction, Poisson) until ``ADD_SHUFFLE``
    turns it into DP102."""
    root = tmp_path / "project"
    root.mkdir()
    copy_fixture("opacus013_attach_asgm", root / "asgm")
    copy_fixture("opacus1_sum_reduction_sgm", root / "cifar")
    repo = git.Repo.init(root)
    with repo.config_writer() as config:
        config.set_value("user", "name", "dpcheck tests")
        config.set_value("user", "email", "tests@dpcheck.invalid")
    commit_all(repo, "base")
    return root


@pytest.fixture
def scan_json(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> ScanJson:
    """Run ``dpcheck scan --format json`` in-process: (exit code, report, stderr)."""

    def run(*args: str) -> tuple[int, dict, str]:
        code = main(["scan", "--format", "json", "--cache-dir", str(tmp_path / "cache"), *args])
        captured = capsys.readouterr()
        report = json.loads(captured.out) if captured.out else {}
        return code, report, captured.err

    return run


def rules_at(report: dict) -> list[tuple[str, str]]:
    """(rule, path) of every finding in a JSON report."""
    return sorted((f["rule"], f["path"]) for f in report["findings"])
