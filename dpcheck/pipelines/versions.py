"""Which Opacus release a project runs, and what that release does (the shipped version table).

The table (``dpcheck/data/opacus_versions.json``) is derived from the Opacus source at each
release tag. A project's release is decided by an exact pin; a range pin (PEP 440, or a Poetry
caret/tilde read as the release series it denotes: ``^0.14.0`` is ``>=0.14.0,<0.15.0``) decides it
only when every release of the table in the range behaves the same; a copy bundled in the project's tree decides as an
exact pin would (its version is in the tree); an installed copy inside the project (its own
virtualenv) decides otherwise. dpcheck's own interpreter is *not* the project's environment, so
its site-packages never decide.

When none of these decides (no pin, a range, a git commit of upstream Opacus), the API the user
code calls still dates it: ``make_private*`` exists only in 1.x, ``PrivacyEngine(module,
...).attach`` only in 0.x. If every candidate release of that API line gives the user's flags the
same normalization and Poisson default, that behaviour is the pipeline's (the release stays
unpinned: DP105 still applies). A fork installed from git is never dated this way: it may have
changed exactly this.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from functools import lru_cache
from importlib import resources
from pathlib import PurePosixPath
from typing import Any

from packaging.version import InvalidVersion, Version

from dpcheck.discover.commit_pins import UPSTREAM
from dpcheck.discover.installed import InstalledLibrary
from dpcheck.discover.requirement import Pin
from dpcheck.model import Span
from dpcheck.pipelines.opacus_usage import OpacusUsage, api_major, normalization
from dpcheck.project import Project

BEHAVIOUR_KEYS = ("normalization_mean", "normalization_sum", "poisson_default",
                  "default_accountant", "mechanism")
#: How a reason says that the release line the code calls decided the behaviour.
DATED = "the update rule is decided by the API line"


@lru_cache(maxsize=1)
def opacus_table() -> tuple[dict[str, Any], ...]:
    """The rows of the shipped Opacus version table, oldest first."""
    text = resources.files("dpcheck.data").joinpath("opacus_versions.json").read_text("utf-8")
    return tuple(json.loads(text)["versions"])


def _version(text: str) -> Version | None:
    try:
        return Version(text)
    except InvalidVersion:
        return None


def row_for(version: str) -> dict[str, Any] | None:
    """The table row of an exact release (``1.4`` matches ``1.4.0``; a local build
    ``1.4.0+cu118`` is the release ``1.4.0``)."""
    wanted = _version(version)
    for row in opacus_table():
        if wanted is not None and _version(row["version"]) == Version(wanted.public):
            return row
    return None


@dataclass(frozen=True)
class Resolution:
    """The Opacus release behaviour a pipeline gets. ``row`` is None when undecided; ``pinned``
    False when no exact pin decides (DP105); ``span`` is the requirement line if any."""

    row: dict[str, Any] | None
    library: str
    pinned: bool
    reason: str
    span: Span | None
    candidates: tuple[dict[str, Any], ...] = ()

    def common(self, key: str, major_one: bool) -> Any:
        """The value of ``key`` shared by every candidate release of the API era the user code
        calls (1.x ``make_private`` or 0.x ``attach``), None if they disagree or none remain."""
        values = {str(r.get(key)): r.get(key) for r in self.candidates
                  if (Version(r["version"]).major >= 1) == major_one}
        return next(iter(values.values())) if len(values) == 1 else None


def _rows_in(pin: Pin) -> list[dict[str, Any]] | None:
    """The table rows ``pin`` allows, None when its specifier is not a set of releases."""
    rows = [(row, pin.allows(row["version"])) for row in opacus_table()]
    if any(allowed is None for _, allowed in rows):
        return None
    return [row for row, allowed in rows if allowed]


def _same_behaviour(rows: list[dict[str, Any]]) -> bool:
    return len({tuple(str(r.get(k)) for k in BEHAVIOUR_KEYS) for r in rows}) == 1


def resolve_opacus(project: Project, entry_path: str, usage: OpacusUsage | None = None
                   ) -> Resolution:
    """Decide the Opacus release behaviour for the pipeline whose entry file is ``entry_path``;
    with the pipeline's ``usage``, an undecided release is dated by the API it calls."""
    resolution = _resolve(project, entry_path)
    if resolution.row is None and usage is not None:
        return dated(resolution, usage)
    return resolution


def dated(resolution: Resolution, usage: OpacusUsage) -> Resolution:
    """``resolution`` decided by the API line ``usage`` calls, when every candidate release of
    that line gives its flags the same normalization and Poisson default; else unchanged, with
    the disagreement in the reason. The row is the line's newest release (its evidence), named
    after the whole span of releases; a default accountant that varies is left out (None)."""
    major = api_major(usage)
    line = [r for r in resolution.candidates if min(Version(r["version"]).major, 1) == major]
    if not line:
        return resolution
    label = f"{major}.x"
    oldest, *_ = line
    releases = f"{oldest['version']}-{line[-1]['version']}"
    outcomes = {(_divisor_kind(usage, r), r.get("poisson_default")) for r in line}
    if len(outcomes) != 1:
        return replace(resolution, reason=(
            f"{resolution.reason}; the code calls the Opacus {label} API, but its releases "
            f"{releases} normalize differently with these arguments"))
    accountants = {r.get("default_accountant") for r in line}
    row = {**line[-1], "version": releases,
           "default_accountant": accountants.pop() if len(accountants) == 1 else None}
    return replace(resolution, row=row, reason=(
        f"{resolution.reason}; {DATED}: the code calls the Opacus {label} API "
        f"({usage.call.method}), and every {label} release in dpcheck's "
        f"table ({releases}) normalizes it the same way"))


def _divisor_kind(usage: OpacusUsage, row: dict[str, Any]) -> str:
    """The divisor kind ``usage`` gets under the version-table ``row``."""
    kind, _ = normalization(usage, row)
    return kind


def _resolve(project: Project, entry_path: str) -> Resolution:
    """The release decided by the project's pins and copies (the module docstring's order)."""
    pin = project.facts.pin("opacus", near=entry_path)
    installed = project.facts.installed_library("opacus")
    local = installed if installed is not None and installed.version and _inside(
        project, installed.path) and _serves(project, installed, entry_path) else None
    if pin is not None and pin.version is not None:
        row = row_for(pin.version)
        reason = "" if row else f"opacus=={pin.version} is not in dpcheck's version table"
        return Resolution(row, f"opacus=={pin.version}", True, reason, pin.span)
    if local is not None and local.distribution is not None:
        return _bundled(project, local)
    if pin is not None:
        rows = _rows_in(pin) or []
        if rows and _same_behaviour(rows):
            return Resolution(rows[-1], f"opacus{pin.specifier}", True, "", pin.span)
        if local is not None and local.version is not None:
            row = row_for(local.version)
            return Resolution(row, f"opacus=={local.version}", False,
                              f"range {pin.specifier or '(any)'} decided by the installed copy",
                              pin.span)
        if not rows and UPSTREAM.search(pin.raw):
            return Resolution(None, f"opacus{pin.specifier}", False,
                              f"opacus pinned as {pin.raw!r}: a git ref of pytorch/opacus that "
                              "dpcheck cannot place between releases", pin.span, opacus_table())
        versions = ", ".join(sorted({r["mechanism"] for r in rows})) or "unknown releases"
        spans = f"the releases it allows span {versions}"
        reason = f"opacus is required without a version ({pin.raw!r}): {spans}" \
            if not pin.specifier else f"opacus pinned as {pin.raw!r}: the range spans {versions}"
        return Resolution(None, f"opacus{pin.specifier}", False, reason, pin.span, tuple(rows))
    if local is not None and local.version is not None:
        return Resolution(row_for(local.version), f"opacus=={local.version}", False,
                          "opacus is not pinned; decided by the copy installed in the project",
                          None)
    unread = "".join(f"; {u.span.path}:{u.span.line}: {u.what}"
                     for u in project.facts.unread_near(entry_path))
    return Resolution(None, "opacus", False,
                      f"opacus is not pinned in any dependency file{unread}", None, opacus_table())


def _bundled(project: Project, local: InstalledLibrary) -> Resolution:
    """The release of a copy bundled in the project's tree: decided by its own version."""
    version = str(local.version)
    folder = (local.distribution or local.path).resolve().relative_to(project.root.resolve())
    row = row_for(version)
    reason = f"opacus {version} bundled in the project at {folder.as_posix()}/"
    if row is None:
        reason += ", a release not in dpcheck's version table"
    return Resolution(row, f"opacus=={version}", True, reason, None)


def _serves(project: Project, local: InstalledLibrary, entry_path: str) -> bool:
    """Whether a copy inside the project is the one ``entry_path`` runs: a bundled copy serves
    the project folder that holds it (``proj/dpfork`` serves ``proj/**``), not its siblings."""
    if local.distribution is None:
        return True
    owner = local.distribution.resolve().parent.relative_to(project.root.resolve())
    return owner in PurePosixPath(entry_path).parents


def _inside(project: Project, path: Any) -> bool:
    try:
        path.resolve().relative_to(project.root.resolve())
    except (ValueError, OSError):
        return False
    return True
