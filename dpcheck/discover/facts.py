"""Project facts: what the scanned project says about the DP libraries it runs.

The classifiers use them to decide which library version (hence which update rule) a pipeline
that calls a DP library gets: the pinned version when the dependency files pin one exactly,
else the installed source's version.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from packaging.utils import canonicalize_version

from dpcheck.discover.installed import InstalledLibrary, find_installed
from dpcheck.discover.pins import DP_LIBRARIES, Pin, PinProblem, canonical_library, read_pins


@dataclass(frozen=True)
class ProjectFacts:
    """Pins (in ``read_pins`` order: shallowest file first), installed DP libraries, and the
    problems met reading dependency files, each a ``PinProblem(path, message)``."""

    root: Path
    pins: tuple[Pin, ...]
    installed: tuple[InstalledLibrary, ...]
    problems: tuple[PinProblem, ...]

    def pin(self, library: str, near: str | None = None) -> Pin | None:
        """The pin that decides ``library``'s version: the first exact pin (``version`` set),
        else the first pin of any kind, else None. ``library`` may be spelled any way PEP 503
        normalises to a DP library name. With ``near`` (a root-relative POSIX file path, e.g.
        a pipeline's entry file) only the pins of the dependency files in the closest folder
        above it are considered, so each project of a monorepo gets its own pins; when no
        dependency file above it pins the library, None."""
        pins = [p for p in self.pins if p.library == canonical_library(library)]
        if near is not None:
            pins = _nearest(pins, PurePosixPath(near))
        return next((p for p in pins if p.version is not None), pins[0] if pins else None)

    def installed_library(self, library: str) -> InstalledLibrary | None:
        """The installed copy of ``library`` found for this project, or None."""
        canonical = canonical_library(library)
        return next((i for i in self.installed if i.library == canonical), None)


def collect_facts(root: Path, dependency_files: Sequence[Path]) -> ProjectFacts:
    """Read the pins of ``dependency_files`` and look for each DP library's installed source.
    Different exact pins of one library in one folder are reported as a problem."""
    result = read_pins(root, dependency_files)
    installed = tuple(
        found for library in DP_LIBRARIES if (found := find_installed(root, library)) is not None
    )
    problems = result.problems + _conflicts(root, result.pins)
    return ProjectFacts(root, result.pins, installed, problems)


def _nearest(pins: list[Pin], near: PurePosixPath) -> list[Pin]:
    """The pins declared in the deepest project folder that contains ``near`` (none if no
    folder does)."""

    def depth(pin: Pin) -> int:
        folder = _project_folder(pin)
        return len(folder.parts) if folder in near.parents else -1

    best = max(map(depth, pins), default=-1)
    return [p for p in pins if depth(p) == best >= 0]


def _project_folder(pin: Pin) -> PurePosixPath:
    """The folder of the project whose dependency file holds ``pin``; a ``requirements/``
    folder counts as its parent, since it holds that project's requirement files."""
    folder = PurePosixPath(pin.span.path).parent
    return folder.parent if folder.name == "requirements" else folder


def _conflicts(root: Path, pins: tuple[Pin, ...]) -> tuple[PinProblem, ...]:
    """One problem per library pinned exactly to different versions by dependency files of one
    folder (``1.4`` and ``1.4.0`` are the same version); separate folders are separate projects."""
    problems: list[PinProblem] = []
    groups: dict[tuple[str, PurePosixPath], list[Pin]] = {}
    for pin in pins:
        if pin.version is not None:
            groups.setdefault((pin.library, _project_folder(pin)), []).append(pin)
    for (library, _), exact in groups.items():
        if len({canonicalize_version(p.version or "") for p in exact}) > 1:
            where = ", ".join(f"{p.version} ({p.span.path}:{p.span.line})" for p in exact)
            message = f"{library} is pinned to different versions: {where}"
            message += f"; using {exact[0].version}"
            problems.append(PinProblem(root / exact[0].span.path, message))
    return tuple(problems)
