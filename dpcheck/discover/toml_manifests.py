"""TOML dependency files: pyproject.toml (PEP 621, PEP 735 groups, Poetry) and Pipfile.

TOML parsers keep no positions, so each pin's line is found back in the text
(``Source.find_line``): the first line after the table's header holding the quoted requirement
string (PEP 621) or the key (Poetry, Pipfile). Poetry's constraints (caret, tilde, unions,
space-separated ranges) are read by Poetry's own parser (``requirement.poetry_specifier``),
Pipfile's as PEP 440.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from dpcheck.discover.requirement import (
    Pin,
    PinsResult,
    Source,
    canonical_library,
    combine,
    constraint_specifier,
    poetry_specifier,
    requirement_pins,
    url_specifier,
)

from dpcheck.toml import tomllib

_PIPFILE_NON_PACKAGE_TABLES = frozenset({"source", "requires", "pipenv", "scripts"})
_VCS_KEYS = ("git", "hg", "svn", "bzr")
_REF_KEYS = ("tag", "branch", "rev", "ref")


def read_pyproject(source: Source) -> PinsResult:
    """Pins of ``[project]`` dependencies and optional-dependencies, ``[dependency-groups]``,
    and Poetry's dependencies, dev-dependencies and group dependencies."""
    data = _load(source)
    if isinstance(data, PinsResult):
        return data
    results: list[PinsResult] = []
    project = data.get("project", {})
    if isinstance(project, dict):
        results.append(_requirement_list(project.get("dependencies", []), source, "[project]"))
        optional = project.get("optional-dependencies", {})
        for extra, requirements in _items(optional):
            results.append(
                _requirement_list(requirements, source, "[project.optional-dependencies]", extra)
            )
    for group, requirements in _items(data.get("dependency-groups", {})):
        results.append(_requirement_list(requirements, source, "[dependency-groups]", group))
    tool = data.get("tool")
    poetry = tool.get("poetry") if isinstance(tool, dict) else None
    if isinstance(poetry, dict):
        for header, table in _poetry_tables(poetry):
            results.append(_constraint_table(table, source, header, poetry_specifier))
    return combine(results)


def read_pipfile(source: Source) -> PinsResult:
    """Pins of every package category of a Pipfile (``[packages]``, ``[dev-packages]`` ...)."""
    data = _load(source)
    if isinstance(data, PinsResult):
        return data
    return combine(
        _constraint_table(table, source, f"[{name}]", constraint_specifier)
        for name, table in data.items()
        if name not in _PIPFILE_NON_PACKAGE_TABLES and isinstance(table, dict)
    )


def _load(source: Source) -> dict[str, Any] | PinsResult:
    try:
        return tomllib.loads(source.text)
    except tomllib.TOMLDecodeError as exc:
        return source.problem(f"invalid TOML: {exc}")


def _items(table: object) -> list[tuple[str, object]]:
    return list(table.items()) if isinstance(table, dict) else []


def _poetry_tables(poetry: dict[str, Any]) -> list[tuple[str, object]]:
    tables = [
        ("[tool.poetry.dependencies]", poetry.get("dependencies", {})),
        ("[tool.poetry.dev-dependencies]", poetry.get("dev-dependencies", {})),
    ]
    for group, body in _items(poetry.get("group", {})):
        if isinstance(body, dict):
            tables.append((f"[tool.poetry.group.{group}.dependencies]", body.get("dependencies")))
    return tables


def _requirement_list(
    requirements: object, source: Source, header: str, key: str | None = None
) -> PinsResult:
    """Pins of a list of PEP 508 strings; non-string entries (PEP 735 ``include-group``
    tables) are skipped, a value that is not a list is a problem."""
    if not isinstance(requirements, list):
        where = f"{header} {key}" if key else header
        return source.problem(f"{where}: expected a list of requirement strings")
    return combine(
        requirement_pins(text, source, source.find_line(header, _quotes(text)))
        for text in requirements
        if isinstance(text, str)
    )


def _quotes(text: str) -> Callable[[str], bool]:
    """A predicate: the line holds ``text`` as a quoted TOML string."""
    return lambda line: f'"{text}"' in line or f"'{text}'" in line


Reader = Callable[[str], tuple[str, str | None]]


def _constraint_table(table: object, source: Source, header: str, read: Reader) -> PinsResult:
    """Pins of a Poetry/Pipfile table ``name = constraint``: a constraint string, a table with
    ``version`` or a VCS/url/path source, or (Poetry) a list of such tables; ``read`` reads a
    version constraint in the file's own syntax (Poetry's or Pipfile's)."""
    results: list[PinsResult] = []
    for name, value in _items(table):
        library = canonical_library(name)
        if library is None:
            continue
        key = re.compile(rf"^\s*(\[.*\.)?[\"']?{re.escape(name)}[\"']?\s*(=|\])")
        line = source.find_line(header, lambda text, k=key: k.match(text) is not None)
        raw = source.lines[line - 1].strip() if source.lines else name
        for constraint in value if isinstance(value, list) else [value]:
            try:
                specifier, version = _constraint(constraint, read)
            except ValueError as exc:
                results.append(source.problem(f"{name}: {exc}", line))
                continue
            results.append(PinsResult((Pin(library, specifier, version, source.span(line), raw),)))
    return combine(results)


def _constraint(value: object, read: Reader) -> tuple[str, str | None]:
    if isinstance(value, str):
        return read(value)
    if not isinstance(value, dict):
        raise ValueError(f"unsupported constraint {value!r}")
    if "version" in value:
        return read(str(value["version"]))
    if any(vcs in value for vcs in _VCS_KEYS):
        ref = next((str(value[k]) for k in _REF_KEYS if k in value), "")
        return ("@" + ref if ref else ""), None
    if "url" in value or "file" in value:
        return url_specifier(str(value.get("url") or value.get("file")))
    return "", None
