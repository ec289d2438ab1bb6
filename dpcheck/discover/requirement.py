"""What a DP-library pin is, and how one requirement string becomes one.

Every dependency-file reader funnels its entries through here: PEP 508 strings (requirements
files, PEP 621, setup.py/cfg, pip lists) through ``requirement_pins``, the looser constraint
syntaxes of Poetry, Pipfile and conda through ``constraint_specifier``. Only the DP libraries in
``DP_LIBRARIES`` become pins; every other requirement is read only far enough to be skipped:
its name. A line that names another library is not dpcheck's to judge, even when PEP 440
rejects its version (``torch~=2.6.0+cu118``, which older pips accepted), so it is no problem.

A version constraint is read as the set of releases it allows. Poetry's caret and tilde
(``^0.14.0`` is ``>=0.14.0,<0.15.0``, ``~1.4`` is ``>=1.4,<1.5``) denote a release series and are
translated with Poetry's own constraint parser (poetry-core); a local version label
(``+cu118``) names a build of a public release, so where PEP 440 rejects it in a DP library's
constraint the public release is read.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import NamedTuple
from urllib.parse import parse_qs, urlsplit

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    parse_sdist_filename,
    parse_wheel_filename,
)
from packaging.version import InvalidVersion, Version

from dpcheck.discover.confine import ReadRefused, read_inside
from dpcheck.discover.libraries import MAX_DEPENDENCY_FILE_BYTES, canonical_library
from dpcheck.model import Span

_EXACT_OPERATORS = ("==", "===")
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://|^file:")
_EGG = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*")
#: The project name a requirement starts with (PEP 508 ``identifier``).
_NAME = re.compile(r"^([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)")
#: A local version label after a release number (``2.6.0+cu118``).
_LOCAL_LABEL = re.compile(r"(?<=[0-9])\+[A-Za-z0-9]+(?:[._-][A-Za-z0-9]+)*")
#: How the alternatives of a union are joined in ``Pin.specifier``.
UNION = " || "


@dataclass(frozen=True)
class Pin:
    """A DP library requirement found in a dependency file.

    ``specifier`` is the version constraint as a PEP 440 specifier ('' when unconstrained), or
    several joined by ``UNION`` for a Poetry union (``^1.0 || ^3.0``); Poetry's caret and tilde
    are translated into the range they denote (``^1.4`` -> ``>=1.4,<2.0``); a conda ``|`` union
    is kept as written, and ``@<ref>`` stands for a VCS URL with a ref (both decide no release).
    ``version`` is set only when the requirement names exactly one version: ``==X`` /
    ``===X`` (no wildcard), a Poetry/Pipfile bare ``X``, conda ``=X``, or an archive URL whose
    file name carries the version. ``span`` is the line in the dependency file; ``raw`` the
    requirement as written there.
    """

    library: str
    specifier: str
    version: str | None
    span: Span
    raw: str

    def allows(self, version: str) -> bool | None:
        """Whether the constraint allows the release ``version`` (a local build of a release
        counts as that release); None when the specifier is not one dpcheck can read as a set
        of releases (a VCS ref, a conda ``|`` union)."""
        try:
            wanted = Version(Version(version).public)
            alternatives = [SpecifierSet(part) for part in self.specifier.split(UNION)]
        except (InvalidVersion, InvalidSpecifier):
            return None
        return any(wanted in alternative for alternative in alternatives)


class PinProblem(NamedTuple):
    """A dependency file (absolute path) that could not be read, or an entry in it that could not
    be understood; reported to the user, never fatal."""

    path: Path
    message: str


class Unread(NamedTuple):
    """Requirements a valid dependency file computes (a ``setup.py`` whose ``install_requires``
    reads a file or filters a list): not bad input, so not a problem, but pins dpcheck cannot
    know statically. Told where a DP library's version is then undecided (``what`` says what
    was not read), never reported on its own."""

    span: Span
    what: str


@dataclass(frozen=True)
class PinsResult:
    """Pins, problems and unread (computed) requirements found in some dependency files, each
    in file order."""

    pins: tuple[Pin, ...] = ()
    problems: tuple[PinProblem, ...] = ()
    unread: tuple[Unread, ...] = ()


def combine(results: Iterable[PinsResult]) -> PinsResult:
    """The results one after another, each pin, problem and unread entry kept once (a
    requirements file both discovered and included by another is read twice)."""
    pins: dict[Pin, None] = {}
    problems: dict[PinProblem, None] = {}
    unread: dict[Unread, None] = {}
    for result in results:
        pins.update(dict.fromkeys(result.pins))
        problems.update(dict.fromkeys(result.problems))
        unread.update(dict.fromkeys(result.unread))
    return PinsResult(tuple(pins), tuple(problems), tuple(unread))


@dataclass(frozen=True)
class Source:
    """The text of a dependency file, and where spans in it point."""

    root: Path
    path: Path
    text: str

    @property
    def display(self) -> str:
        """The POSIX path relative to the root (with ``..`` for an include outside the root)."""
        return Path(os.path.relpath(self.path, self.root)).as_posix()

    @cached_property
    def lines(self) -> list[str]:
        return self.text.splitlines()

    def span(self, line: int) -> Span:
        return Span(self.display, line)

    def find_line(self, header: str, matches: Callable[[str], bool]) -> int:
        """1-based number of the first line at or after the section ``header`` line (compared
        without comments and surrounding blanks) that ``matches``; failing that the first
        matching line anywhere, then the header's line, then line 1. For formats whose parsers
        keep no positions (TOML, INI)."""
        lines = self.lines
        start = next((i for i, text in enumerate(lines) if _uncommented(text) == header), None)
        for first in ([start] if start is not None else []) + [0]:
            for index in range(first, len(lines)):
                if matches(lines[index]):
                    return index + 1
        return start + 1 if start is not None else 1

    def problem(self, message: str, line: int | None = None) -> PinsResult:
        """A result holding one problem, prefixed with the file (and line) it concerns."""
        where = f"{self.display}:{line}" if line else self.display
        return PinsResult(problems=(PinProblem(self.path, f"{where}: {message}"),))


def _uncommented(line: str) -> str:
    return line.split("#", 1)[0].strip()




def read_source(root: Path, path: Path) -> Source | PinsResult:
    """The file decoded as UTF-8 (a BOM is dropped), or a result with the problem. Only a
    regular file inside the project is read (``dpcheck.discover.confine``), and at most
    ``MAX_DEPENDENCY_FILE_BYTES``."""
    try:
        data = read_inside(path, root, MAX_DEPENDENCY_FILE_BYTES)
    except ReadRefused as exc:
        return PinsResult(problems=(PinProblem(path, str(exc.strerror)),))
    except OSError as exc:
        return PinsResult(problems=(PinProblem(path, f"cannot read: {exc.strerror or exc}"),))
    if len(data) > MAX_DEPENDENCY_FILE_BYTES:
        message = f"too large for a dependency file (over {MAX_DEPENDENCY_FILE_BYTES} bytes); not read"
        return PinsResult(problems=(PinProblem(path, message),))
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        return PinsResult(problems=(PinProblem(path, f"not UTF-8 text: {exc.reason}"),))
    return Source(root, path, text)


def exact_version(specifier: SpecifierSet) -> str | None:
    """The one version ``specifier`` pins with ``==``/``===`` (no wildcard), else None."""
    exact = {
        s.version
        for s in specifier
        if s.operator in _EXACT_OPERATORS and not s.version.endswith(".*")
    }
    return exact.pop() if len(exact) == 1 else None


def constraint_specifier(text: str) -> tuple[str, str | None]:
    """(specifier, version) of a Poetry / Pipfile / conda version constraint.

    ``*`` or empty means unconstrained; a bare version ``1.4.0`` means ``==1.4.0`` (and a bare
    ``1.4.*`` the wildcard); a conda ``|`` union is kept as written. Poetry's own syntax is read
    by ``poetry_specifier``. Raises ``ValueError`` for text that is none of these.
    """
    text = text.strip()
    if text in ("", "*"):
        return "", None
    if "|" in text:
        return text, None
    try:
        specifier = SpecifierSet(f"=={text}" if text[0].isdigit() else text)
    except InvalidSpecifier as exc:
        raise ValueError(f"invalid version constraint {text!r}") from exc
    return str(specifier), exact_version(specifier)


def poetry_specifier(text: str) -> tuple[str, str | None]:
    """(specifier, version) of a Poetry constraint, parsed by poetry-core: each range it allows
    as a PEP 440 specifier (``^0.14.0`` -> ``>=0.14.0,<0.15.0``), alternatives of a union joined
    by ``UNION``; ``version`` when it allows exactly one release (a bare ``1.4.0``). Raises
    ``ValueError`` for text Poetry rejects or that allows no release at all."""
    # poetry-core is imported here, only for a Poetry constraint: plain scans never pay for it
    from poetry.core.constraints.version import Version as PoetryVersion
    from poetry.core.constraints.version import VersionUnion, parse_constraint
    from poetry.core.constraints.version.exceptions import ParseConstraintError

    if text.strip() in ("", "*"):
        return "", None
    try:
        constraint = parse_constraint(text)
    except (ParseConstraintError, ValueError) as exc:
        raise ValueError(f"invalid version constraint {text!r}") from exc
    if constraint.is_empty():
        raise ValueError(f"version constraint {text!r} allows no release")
    if constraint.is_any():
        return "", None
    parts = list(constraint.ranges) if isinstance(constraint, VersionUnion) else [constraint]
    alternatives = [f"=={part.text}" if isinstance(part, PoetryVersion) else str(part)
                    for part in parts]
    for alternative in alternatives:
        try:
            SpecifierSet(alternative)
        except InvalidSpecifier as exc:
            raise ValueError(f"version constraint {text!r} has no PEP 440 form") from exc
    exact = parts[0].text if len(parts) == 1 and isinstance(parts[0], PoetryVersion) else None
    return UNION.join(alternatives), exact


def url_specifier(url: str) -> tuple[str, str | None]:
    """(specifier, version) of a requirement given by URL: ``@<ref>`` for a VCS URL with a ref,
    ``==<v>`` when the URL names a wheel or sdist file, else unconstrained."""
    parts = urlsplit(url)
    if "+" in parts.scheme and "@" in parts.path:
        return "@" + parts.path.rpartition("@")[2], None
    filename = parts.path.rpartition("/")[2]
    version = _archive_name_version(filename)[1]
    return (f"=={version}", version) if version else ("", None)


def requirement_pins(text: str, source: Source, line: int, raw: str | None = None) -> PinsResult:
    """The pin a PEP 508 requirement string (or a bare URL / path) makes, if it names a DP
    library. A string PEP 508 rejects is skipped when its name is another library's; a DP
    library's is read with local version labels dropped (``unlabelled_pins``), else it is a
    problem naming the line, as is a string with no name at all. Local paths are skipped:
    their version cannot be known statically."""
    text = text.strip()
    raw = raw or text
    if _URL.match(text):
        return _bare_url_pins(text, source, line, raw)
    if text.startswith((".", "/", "~")):
        return PinsResult()
    try:
        requirement = Requirement(text)
    except InvalidRequirement as exc:
        return _invalid_pins(text, source, line, raw, exc)
    library = canonical_library(requirement.name)
    if library is None:
        return PinsResult()
    if requirement.url:
        specifier, version = url_specifier(requirement.url)
    else:
        specifier, version = str(requirement.specifier), exact_version(requirement.specifier)
    return PinsResult((Pin(library, specifier, version, source.span(line), raw),))


def _invalid_pins(text: str, source: Source, line: int, raw: str,
                  exc: InvalidRequirement) -> PinsResult:
    """A requirement string PEP 508 rejects: nothing for another library's line; for a DP
    library, the pin of the string without local version labels if that one is valid; else a
    one-line problem naming the file and line."""
    name = _NAME.match(text)
    if name is not None and canonical_library(name.group(1)) is None:
        return PinsResult()
    public = _LOCAL_LABEL.sub("", text)
    if name is not None and public != text:
        try:
            Requirement(public)
        except InvalidRequirement:
            pass
        else:
            return requirement_pins(public, source, line, raw)
    reason = str(exc).splitlines()[0] if str(exc) else "not a PEP 508 requirement"
    asked = f"the {name.group(1)} version it asks for" if name is not None else "what it asks for"
    return source.problem(f"invalid requirement {text!r} ({reason}): {asked} is unknown to "
                          "dpcheck", line)


def _bare_url_pins(url: str, source: Source, line: int, raw: str) -> PinsResult:
    """A URL without ``name @``: the name comes from ``#egg=`` or the archive's file name."""
    parts = urlsplit(url)
    egg = parse_qs(parts.fragment).get("egg", [""])[0]
    match = _EGG.match(egg)
    name = match.group(0) if match else _archive_name_version(parts.path.rpartition("/")[2])[0]
    library = canonical_library(name) if name else None
    if library is None:
        return PinsResult()
    specifier, version = url_specifier(url)
    return PinsResult((Pin(library, specifier, version, source.span(line), raw),))


def _archive_name_version(filename: str) -> tuple[str | None, str | None]:
    """(name, version) from a wheel or sdist file name, (None, None) for anything else."""
    try:
        if filename.endswith(".whl"):
            name, version, _, _ = parse_wheel_filename(filename)
        else:
            name, version = parse_sdist_filename(filename)
    except (InvalidWheelFilename, InvalidSdistFilename, InvalidVersion):
        return None, None
    return str(name), str(version)

