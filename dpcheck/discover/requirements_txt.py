"""pip requirements files: ``requirements*.txt`` and the files they include.

Follows pip's file format statically: ``\\`` line continuations, ``#`` comments (at line start
or after whitespace, so ``#egg=`` fragments survive), ``-r``/``--requirement`` and
``-c``/``--constraint`` includes relative to the including file (a constraint pins a version
just as well), ``-e``/``--editable`` URLs, per-requirement options such as ``--hash``, and
environment markers (kept: the target environment is not known statically). Other global
options (``--index-url`` ...) carry no requirement and are skipped; so are includes by URL.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from dpcheck.discover.requirement import (
    PinsResult,
    Source,
    combine,
    read_source,
    requirement_pins,
)

_COMMENT = re.compile(r"(^|\s+)#.*$")
_INCLUDE = re.compile(r"^(?:-[rc]\s*|--(?:requirement|constraint)(?:\s*=\s*|\s+))(?P<file>\S+)")
_EDITABLE = re.compile(r"^(?:-e\s*|--editable(?:\s*=\s*|\s+))(?P<target>\S+)")
_OPTION = re.compile(r"\s+--?[A-Za-z]")
_REMOTE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


def read_requirements(source: Source, including: frozenset[Path] = frozenset()) -> PinsResult:
    """The pins of a requirements file and of the files it includes. ``including`` holds the
    files whose includes led here, so an include cycle ends instead of recursing."""
    return combine(
        requirement_line(text, source, line, including | {source.path.resolve()})
        for line, text in _logical_lines(source.text)
    )


def requirement_line(
    text: str, source: Source, line: int, including: frozenset[Path] = frozenset()
) -> PinsResult:
    """The pins of one logical requirements line (also a ``pip:`` entry of environment.yml)."""
    text = _COMMENT.sub("", text).strip()
    if not text:
        return PinsResult()
    include = _INCLUDE.match(text)
    if include:
        return _read_include(include.group("file"), source, line, including)
    editable = _EDITABLE.match(text)
    if editable:
        return requirement_pins(editable.group("target"), source, line, raw=text)
    if text.startswith("-"):
        return PinsResult()
    return requirement_pins(_OPTION.split(text, maxsplit=1)[0], source, line, raw=text)


def _read_include(name: str, source: Source, line: int, including: frozenset[Path]) -> PinsResult:
    if _REMOTE.match(name):
        return PinsResult()
    path = (source.path.parent / name).resolve()
    if path in including:
        return PinsResult()
    if not path.is_relative_to(source.root.resolve()):
        # a scanned project must not make dpcheck read (and report) files outside it
        return source.problem(f"included requirements file {name!r} is outside the project; not read", line)
    if not path.is_file():
        return source.problem(f"included requirements file {name!r} not found", line)
    included = read_source(source.root, path)
    if isinstance(included, PinsResult):
        return included
    return read_requirements(included, including)


def _logical_lines(text: str) -> Iterator[tuple[int, str]]:
    """(first physical line number, joined text) of each logical line: a physical line ending
    in a backslash continues on the next one, joined without a space as pip does."""
    start: int | None = None
    parts: list[str] = []
    for number, physical in enumerate(text.splitlines(), start=1):
        if start is None:
            start = number
        if physical.endswith("\\"):
            parts.append(physical[:-1])
            continue
        parts.append(physical)
        yield start, "".join(parts)
        start, parts = None, []
    if start is not None:
        yield start, "".join(parts)
