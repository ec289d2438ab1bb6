"""Project facts: what the scanned project says about the DP libraries it runs.

The classifiers use them to decide which library version (hence which update rule) a pipeline
that calls a DP library gets: the pinned version when the dependency files pin one exactly,
else the installed source's version. A copy bundled inside the project
(``discover.vendored``) counts as installed in the project unless the project's own virtualenv
has one; the dependency files inside a bundled copy are the library's, so they give no pins and
no problems.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from packaging.utils import canonicalize_version

from dpcheck.discover.commit_pins import opacus_history, place_commit_pins
from dpcheck.discover.installed import InstalledLibrary, find_installed
from dpcheck.discover.libraries import canonical_library
from dpcheck.discover.pins import DP_LIBRARIES, Pin, PinProblem, read_pins
from dpcheck.discover.requirement import Unread
from dpcheck.discover.vendored import find_bundled


@dataclass(frozen=True)
class ProjectFacts:
    """Pins (in ``read_pins`` order: shallowest file first), installed DP libraries, the
    problems met reading dependency files, each a ``PinProblem(path, message)``, and the
    requirements valid files compute (``Unread``), which dpcheck cannot read."""

    root: Path
    pins: tuple[Pin, ...]
    installed: tuple[InstalledLibrary, ...]
    problems: tuple[PinProblem, ...]
    unread: tuple[Unread, ...] = ()

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

    def unread_near(self, near: str) -> tuple[Unread, ...]:
        """The computed requirements of the dependency files in the folders above ``near`` (a
        root-relative POSIX path): where pins of the project that runs ``near`` may hide."""
        path = PurePosixPath(near)
        return tuple(u for u in self.unread
                     if _project_folder(u.span.path) in path.parents)

    def installed_library(self, library: str) -> InstalledLibrary | None:
        """The installed copy of ``library`` found for this project, or None."""
        canonical = canonical_library(library)
        return next((i for i in self.installed if i.library == canonical), None)

    def bundled_folders(self) -> tuple[str, ...]:
        """Root-relative POSIX folders of the DP libraries bundled in the project."""
        return tuple(i.distribution.resolve().relative_to(self.root.resolve()).as_posix()
                     for i in self.installed if i.distribution is not None)


def collect_facts(root: Path, dependency_files: Sequence[Path]) -> ProjectFacts:
    """Read the pins of ``dependency_files`` (except those of bundled libraries), place an
    upstream Opacus commit pin between releases when ``DPCHECK_OPACUS_REPO`` names a clone
    (``discover.commit_pins``), and look for each DP library's installed source. Different exact
    pins of one library in one folder are reported as a problem."""
    bundled = {b.library: b for b in find_bundled(root, dependency_files)}
    folders = [b.distribution for b in bundled.values() if b.distribution is not None]
    own = [f for f in dependency_files if not any(d in f.parents for d in folders)]
    result = read_pins(root, own)
    pins = place_commit_pins(result.pins, opacus_history())
    installed = tuple(
        found for library in DP_LIBRARIES
        if (found := _installed(root, library, bundled.get(library))) is not None
    ) + tuple(b for library, b in bundled.items() if library not in DP_LIBRARIES)
    problems = result.problems + _conflicts(root, pins)
    return ProjectFacts(root, pins, installed, problems, result.unread)


def _installed(root: Path, library: str,
               bundled: InstalledLibrary | None) -> InstalledLibrary | None:
    """The project's virtualenv copy, else the bundled copy, else the interpreter's copy."""
    found = find_installed(root, library)
    if found is not None and root.resolve() in found.path.resolve().parents:
        return found
    return bundled or found


def _nearest(pins: list[Pin], near: PurePosixPath) -> list[Pin]:
    """The pins declared in the deepest project folder that contains ``near`` (none if no
    folder does)."""

    def depth(pin: Pin) -> int:
        folder = _project_folder(pin.span.path)
        return len(folder.parts) if folder in near.parents else -1

    best = max(map(depth, pins), default=-1)
    return [p for p in pins if depth(p) == best >= 0]


def _project_folder(dependency_file: str) -> PurePosixPath:
    """The folder of the project whose dependency file is ``dependency_file``; a
    ``requirements/`` folder counts as its parent, since it holds that project's requirement
    files."""
    folder = PurePosixPath(dependency_file).parent
    return folder.parent if folder.name == "requirements" else folder


def _conflicts(root: Path, pins: tuple[Pin, ...]) -> tuple[PinProblem, ...]:
    """One problem per library pinned exactly to different versions by dependency files of one
    folder (``1.4`` and ``1.4.0`` are the same version); separate folders are separate projects."""
    problems: list[PinProblem] = []
    groups: dict[tuple[str, PurePosixPath], list[Pin]] = {}
    for pin in pins:
        if pin.version is not None:
            groups.setdefault((pin.library, _project_folder(pin.span.path)), []).append(pin)
    for (library, _), exact in groups.items():
        if len({canonicalize_version(p.version or "") for p in exact}) > 1:
            where = ", ".join(f"{p.version} ({p.span.path}:{p.span.line})" for p in exact)
            message = f"{library} is pinned to different versions: {where}"
            message += f"; using {exact[0].version}"
            problems.append(PinProblem(root / exact[0].span.path, message))
    return tuple(problems)
