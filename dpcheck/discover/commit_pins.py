"""Place a git-commit pin of upstream Opacus between its release tags, using a local clone.

``opacus @ git+https://github.com/pytorch/opacus.git@<sha>`` names one fixed commit, which is
reproducible, but a static scan without the history cannot say which releases it lies between.
When the environment variable ``DPCHECK_OPACUS_REPO`` names a local clone (or bare mirror) of
Opacus that holds the commit, the pin becomes the range from the newest release tag the commit
contains to the oldest release tag that contains it (``>=0.9.1,<=0.10.0``; ``==0.9.1`` on a
tagged commit), and the version table decides it as it decides any range. Without the variable,
for a branch name, a fork, or a commit the clone does not hold, the pin is left as written.
"""

from __future__ import annotations

import os
import re
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from packaging.version import InvalidVersion, Version

from dpcheck.discover.requirement import Pin
from dpcheck.errors import DpcheckError

if TYPE_CHECKING:
    import git

ENVIRONMENT_VARIABLE = "DPCHECK_OPACUS_REPO"
#: A VCS requirement of the upstream repository (any ref); other git URLs are forks.
UPSTREAM = re.compile(r"github\.com[/:]pytorch/opacus(\.git)?@", re.IGNORECASE)
_COMMIT = re.compile(r"^@([0-9a-fA-F]{7,40})$")


def opacus_history() -> git.Repo | None:
    """The clone named by ``DPCHECK_OPACUS_REPO``, None when the variable is unset or empty."""
    location = os.environ.get(ENVIRONMENT_VARIABLE, "").strip()
    if not location:
        return None
    import git  # only with a history clone: a plain scan never loads gitpython for this

    try:
        history = git.Repo(Path(location).expanduser())
    except (git.InvalidGitRepositoryError, git.NoSuchPathError) as exc:
        raise DpcheckError(
            f"{ENVIRONMENT_VARIABLE}={location}: not a git repository (a clone or mirror of "
            "Opacus is expected)") from exc
    # name the repository explicitly: git does not discover a bare mirror without a config
    history.git.set_persistent_git_options(git_dir=history.git_dir)
    return history


def history_fingerprint() -> str:
    """What a cached scan must be keyed on for commit placement: the clone named by
    ``DPCHECK_OPACUS_REPO`` and the state of its tags (new tags can move a placement)."""
    location = os.environ.get(ENVIRONMENT_VARIABLE, "").strip()
    if not location:
        return ""
    root = Path(location).expanduser()
    stamps = []
    for git_dir in (root / ".git", root):
        for refs in (git_dir / "packed-refs", git_dir / "refs" / "tags"):
            try:
                stat = refs.stat()
            except OSError:
                continue
            stamps.append(f"{refs.name}:{stat.st_size}:{stat.st_mtime_ns}")
    return f"{location}|{';'.join(stamps)}"


def place_commit_pins(pins: tuple[Pin, ...], history: git.Repo | None) -> tuple[Pin, ...]:
    """``pins`` with every upstream Opacus commit pin that ``history`` can place rewritten as the
    range of releases around it (see the module docstring)."""
    if history is None:
        return pins
    return tuple(_placed(pin, history) for pin in pins)


def _placed(pin: Pin, history: git.Repo) -> Pin:
    commit = _COMMIT.match(pin.specifier)
    if pin.library != "opacus" or commit is None or not UPSTREAM.search(pin.raw):
        return pin
    bounds = release_bounds(history, commit.group(1))
    if bounds is None:
        return pin
    before, after = bounds
    if before == after:
        return replace(pin, specifier=f"=={before}", version=str(before))
    return replace(pin, specifier=f">={before},<={after}")


def release_bounds(history: git.Repo, commit: str) -> tuple[Version, Version] | None:
    """(newest release reachable from ``commit``, oldest release whose tag contains it), from
    tags named after final versions (``v1.4.0`` or ``1.4.0``); None when the commit is unknown
    to ``history`` or lies before the first or after the last release."""
    import git
    try:
        sha = history.commit(commit).hexsha
        reachable = _versions(history.git.tag("--merged", sha))
        containing = _versions(history.git.tag("--contains", sha))
    except (ValueError, git.BadName, git.GitCommandError):
        return None
    if not reachable or not containing:
        return None
    return max(reachable), min(containing)


def _versions(tags: str) -> list[Version]:
    """The final releases among tag names (pre-releases are not in the version table)."""
    found = []
    for tag in tags.split():
        try:
            version = Version(tag.lstrip("v."))
        except InvalidVersion:
            continue
        if not version.is_prerelease:
            found.append(version)
    return found
