"""Exporting a ref's tree from git objects: the files as committed, no checkout."""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

import git
import pytest

from dpcheck.errors import DpcheckError
from dpcheck.gate.git_tree import export_tree, is_exported, resolve_ref
from tests.gate.conftest import commit_all


@pytest.fixture
def history(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "train.py").write_text("VERSION = 1\n")
    (root / "requirements.txt").write_text("opacus==1.4.0\n")
    (root / "data.csv").write_text("a,b\n")
    (root / "README.md").write_text("readme\n")
    os.symlink("pkg/train.py", root / "link.py")
    repo = git.Repo.init(root)
    with repo.config_writer() as config:
        config.set_value("user", "name", "t").set_value("user", "email", "t@t.invalid")
    commit_all(repo, "one")
    (root / "pkg" / "train.py").write_text("VERSION = 2\n")
    commit_all(repo, "two")
    (root / "pkg" / "train.py").write_text("VERSION = 3  # uncommitted\n")
    return root


def test_export_writes_the_committed_blobs_of_scannable_files(history: Path, tmp_path: Path) -> None:
    dest = tmp_path / "export"
    dest.mkdir()
    written = export_tree(resolve_ref(history, "HEAD~1"), dest)
    assert written == 2
    assert (dest / "pkg" / "train.py").read_text() == "VERSION = 1\n"
    assert (dest / "requirements.txt").read_text() == "opacus==1.4.0\n"
    assert not (dest / "data.csv").exists() and not (dest / "README.md").exists()
    assert not (dest / "link.py").exists()
    tracked = git.Repo(dest).git.ls_files().split("\n")
    assert sorted(tracked) == ["pkg/train.py", "requirements.txt"]
    assert (history / "pkg" / "train.py").read_text() == "VERSION = 3  # uncommitted\n"


def test_resolve_ref_accepts_branches_shas_and_relative_refs(history: Path) -> None:
    repo = git.Repo(history)
    sha = repo.commit("HEAD~1").hexsha
    assert resolve_ref(history, sha[:10]).commit.hexsha == sha
    assert resolve_ref(history, "HEAD~1").commit.hexsha == sha
    assert resolve_ref(history, repo.active_branch.name).commit == repo.head.commit


@pytest.mark.parametrize("ref", ["nope", "HEAD~5", "HEAD^{tree}", "0" * 40])
def test_resolve_ref_rejects_what_is_not_a_commit(history: Path, ref: str) -> None:
    with pytest.raises(DpcheckError, match="not a commit"):
        resolve_ref(history, ref)


def test_resolve_ref_needs_the_work_tree_top(history: Path) -> None:
    with pytest.raises(DpcheckError, match="not a git work tree's top"):
        resolve_ref(history / "pkg", "HEAD")


@pytest.mark.parametrize(
    ("path", "size", "exported"),
    [
        ("a/b.py", 10**9, True),
        ("requirements-dev.txt", 10**9, True),
        ("requirements/base.txt", 10, True),
        ("pyproject.toml", 10, True),
        ("constraints.txt", 10, True),
        ("corpus.txt", 10**8, False),
        ("notes.md", 10, False),
        ("configs/mnist.yaml", 10, True),
        ("ds_config.json", 10, True),
        ("data/embeddings.json", 10**8, False),
    ],
)
def test_which_blobs_are_exported(path: str, size: int, exported: bool) -> None:
    assert is_exported(PurePosixPath(path), size) is exported
