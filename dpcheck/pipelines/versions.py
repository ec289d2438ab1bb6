"""Which Opacus release a project runs, and what that release does (the shipped version table).

The table (``dpcheck/data/opacus_versions.json``) is derived from the Opacus source at each
release tag. A project's release is decided by an exact pin; a range pin decides it only when
every release in the range behaves the same; a copy bundled in the project's tree decides as an
exact pin would (its version is in the tree); an installed copy inside the project (its own
virtualenv) decides otherwise. dpcheck's own interpreter is *not* the project's environment, so
its site-packages never decide.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import PurePosixPath
from importlib import resources
from typing import Any

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from dpcheck.discover.installed import InstalledLibrary
from dpcheck.model import Span
from dpcheck.project import Project

BEHAVIOUR_KEYS = ("normalization_mean", "normalization_sum", "poisson_default",
                  "default_accountant", "mechanism")


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
    """The table row of an exact release (``1.4`` matches ``1.4.0``)."""
    wanted = _version(version)
    for row in opacus_table():
        if wanted is not None and _version(row["version"]) == wanted:
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


def _rows_in(specifier: str) -> list[dict[str, Any]] | None:
    try:
        spec = SpecifierSet(specifier)
    except InvalidSpecifier:
        return None
    return [row for row in opacus_table()
            if (v := _version(row["version"])) is not None and v in spec]


def _same_behaviour(rows: list[dict[str, Any]]) -> bool:
    return len({tuple(str(r.get(k)) for k in BEHAVIOUR_KEYS) for r in rows}) == 1


def resolve_opacus(project: Project, entry_path: str) -> Resolution:
    """Decide the Opacus release behaviour for the pipeline whose entry file is ``entry_path``."""
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
        rows = _rows_in(pin.specifier) or []
        if rows and _same_behaviour(rows):
            return Resolution(rows[-1], f"opacus{pin.specifier}", True, "", pin.span)
        if local is not None and local.version is not None:
            row = row_for(local.version)
            return Resolution(row, f"opacus=={local.version}", False,
                              f"range {pin.specifier or '(any)'} decided by the installed copy",
                              pin.span)
        versions = ", ".join(sorted({r["mechanism"] for r in rows})) or "unknown releases"
        return Resolution(None, f"opacus{pin.specifier}", False,
                          f"opacus pinned as {pin.raw!r}: the range spans {versions}", pin.span,
                          tuple(rows))
    if local is not None and local.version is not None:
        return Resolution(row_for(local.version), f"opacus=={local.version}", False,
                          "opacus is not pinned; decided by the copy installed in the project",
                          None)
    return Resolution(None, "opacus", False, "opacus is not pinned in any dependency file", None,
                      opacus_table())


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
