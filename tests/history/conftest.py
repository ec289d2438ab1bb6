"""The fake library's repository, built once per test module (real git, real commits)."""

from __future__ import annotations

from pathlib import Path

import git
import pytest

from tests.history.fakelib import build_repository


@pytest.fixture(scope="module")
def fake_repo(tmp_path_factory: pytest.TempPathFactory) -> git.Repo:
    return build_repository(tmp_path_factory.mktemp("fakedp") / "repo")


@pytest.fixture(scope="module")
def bare_mirror(fake_repo: git.Repo, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A bare mirror of the fake library, as ``git clone --mirror`` makes it."""
    target = tmp_path_factory.mktemp("mirror") / "fakedp.git"
    git.Repo.clone_from(fake_repo.working_tree_dir, target, mirror=True)
    return target
