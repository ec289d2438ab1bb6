"""Open a git repository (a clone or a bare mirror) and list its release tags as versions.

Nothing is checked out: tags, commits and trees are read through gitpython's object database.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import git
from packaging.version import InvalidVersion, Version

from dpcheck.errors import DpcheckError


class HistoryError(DpcheckError):
    """The repository or the tag selection given to ``dpcheck history`` is unusable."""


@dataclass(frozen=True)
class Release:
    """One release tag: its name, the version it spells, the tagged commit and its date."""

    tag: str
    version: Version
    commit: git.Commit

    @property
    def date(self) -> str:
        stamp = datetime.fromtimestamp(self.commit.committed_date, tz=timezone.utc)
        return stamp.date().isoformat()


def open_repository(path: Path) -> git.Repo:
    """The git repository at ``path``. A bare mirror without a ``config`` file is taken by
    gitpython for the work tree of its parent; pinning ``GIT_DIR`` makes every git call read
    the right object database."""
    try:
        repo = git.Repo(path)
    except git.NoSuchPathError as exc:
        raise HistoryError(f"{path}: no such directory") from exc
    except git.InvalidGitRepositoryError as exc:
        raise HistoryError(f"{path}: not a git repository") from exc
    repo.git.update_environment(GIT_DIR=repo.git_dir)
    return repo


def tag_version(tag: str) -> Version | None:
    """The version a tag name spells (``v1.4.0``, ``v.1.1.0``, ``1.2``), None if it spells none."""
    text = tag.removeprefix("v").removeprefix(".")
    try:
        return Version(text)
    except InvalidVersion:
        return None


def _in_range(repo: git.Repo, rev: str) -> set[str]:
    try:
        return {c.hexsha for c in repo.iter_commits(rev)}
    except git.GitCommandError as exc:
        raise HistoryError(f"--rev {rev}: not a revision range of this repository") from exc


def release_tags(repo: git.Repo, pattern: str = "*", rev: str | None = None,
                 pre: bool = False) -> list[Release]:
    """The tags matching ``pattern`` (and reachable in ``rev``, e.g. ``v1.0.0..v1.4.0``) that
    spell a version, oldest version first; pre-releases only with ``pre``."""
    allowed = _in_range(repo, rev) if rev else None
    releases = []
    for ref in repo.tags:
        version = tag_version(ref.name)
        if version is None or not fnmatch.fnmatchcase(ref.name, pattern):
            continue
        if version.is_prerelease and not pre:
            continue
        commit = ref.commit
        if allowed is None or commit.hexsha in allowed:
            releases.append(Release(ref.name, version, commit))
    if not releases:
        where = f" in {rev}" if rev else ""
        raise HistoryError(f"{repo.git_dir}: no release tags match {pattern!r}{where}"
                           + ("" if pre else " (pre-releases need --pre)"))
    return sorted(releases, key=lambda r: (r.version, r.tag))
