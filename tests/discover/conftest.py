"""Shared helpers of the discovery tests: real files and real git repositories in tmp dirs."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

import git
import pytest

TreeWriter = Callable[[Path, Mapping[str, str]], Path]


def _write_tree(root: Path, files: Mapping[str, str]) -> Path:
    """Create ``files`` (POSIX path relative to ``root`` -> text) and return ``root``."""
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def write_tree() -> TreeWriter:
    """A function writing files (POSIX path relative to a root -> text) under a root."""
    return _write_tree


@pytest.fixture
def make_repo() -> Callable[[Path, Mapping[str, str], Mapping[str, str]], git.Repo]:
    """A factory: a git repository at a folder, with ``tracked`` files committed and
    ``untracked`` files written but not added."""

    def make(root: Path, tracked: Mapping[str, str], untracked: Mapping[str, str]) -> git.Repo:
        repo = git.Repo.init(root)
        with repo.config_writer() as config:
            config.set_value("user", "name", "dpcheck tests")
            config.set_value("user", "email", "tests@example.invalid")
        _write_tree(root, tracked)
        repo.index.add(list(tracked))
        repo.index.commit("initial")
        _write_tree(root, untracked)
        return repo

    return make
