"""Rewriting a DP library's requirement as an exact pin, in each dependency file's own syntax,
changing nothing else in the file.

* A requirement string (PEP 508: a requirements file line, a ``setup.cfg`` entry, a conda
  ``environment.yml`` item, a PEP 621 string): the version constraint after the name becomes
  ``==<version>``; the name as spelled, its extras, markers, options and comments stay.
* TOML (``pyproject.toml``, ``Pipfile``): a round trip through tomlkit, which keeps every
  byte it is not asked to change; the string or the ``version`` key of the library's entry gets
  the pin in the file's own constraint syntax (PEP 508, Poetry's bare version, Pipfile's
  ``==``).
* ``setup.py``: the string literal naming the library (libcst), in its own quotes.

Each returns the new text of the file, or None when the line holds no requirement of the
library that can be pinned (a URL or VCS requirement, a computed one).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import libcst as cst
import tomlkit
from packaging.utils import canonicalize_name
from tomlkit.exceptions import TOMLKitError
from tomlkit.items import Array, InlineTable, String, Table

from dpcheck.rules.fixes.fix import edit_between
from dpcheck.rules.fixes.syntax import ParsedFile

#: What follows a requirement's name: extras and a version constraint (PEP 440 operators, or
#: conda's ``=``).
_TAIL = (r"(?P<extras>\s*\[[^\]]*\])?"
         r"(?P<spec>(?:\s*(?:===|==|!=|~=|<=|>=|<|>|=)\s*[A-Za-z0-9.*+!_-]+(?:\s*,)?)*)")
#: What may stand before a requirement's name on its line (start, blank, quote, ``key =``, a
#: conda channel ``::``), never a part of another name (``torch-opacus``).
_BEFORE = r"(?:^|(?<=[\s\"'=:]))"


def _pattern(library: str) -> re.Pattern[str]:
    """A requirement of ``library`` however its name is spelled (PEP 503: case and runs of
    ``-``, ``_``, ``.`` do not matter), not a part of a longer name."""
    name = r"[-_.]+".join(re.escape(part) for part in re.split(r"[-_.]+", library))
    return re.compile(rf"{_BEFORE}(?P<name>{name})(?![A-Za-z0-9._-]){_TAIL}", re.IGNORECASE)


def pinned_requirement(text: str, library: str, version: str) -> str | None:
    """``text`` (a line or a string) with the first requirement of ``library`` in it pinned to
    ``version``; None when there is none, or it is given by URL (``name @ url``)."""
    match = _pattern(library).search(text)
    if match is None or text[match.end():].lstrip().startswith("@"):
        return None
    spec = match.group("spec")
    kept = spec[len(spec.rstrip()):] if spec.strip() else ""
    return f"{text[:match.start('spec')]}=={version}{kept}{text[match.end():]}"


def pinned_line(text: str, line: int, library: str, version: str) -> str | None:
    """The file ``text`` with the requirement of ``library`` on ``line`` pinned (a requirements
    file, ``setup.cfg``, ``environment.yml``); None when that line has none to pin or continues
    on the next one."""
    lines = text.splitlines(keepends=True)
    if not 0 < line <= len(lines) or lines[line - 1].rstrip("\r\n").endswith("\\"):
        return None
    new = pinned_requirement(lines[line - 1], library, version)
    if new is None:
        return None
    return "".join([*lines[: line - 1], new, *lines[line:]])


def pinned_toml(text: str, line: int, library: str, version: str, pipfile: bool) -> str | None:
    """The TOML file ``text`` with the library's entry on ``line`` pinned: a PEP 508 string in
    an array, or a Poetry / Pipfile ``name = constraint`` (or its ``version`` key). None when
    tomlkit cannot round-trip the file or no entry of the library is on that line."""
    try:
        original = tomlkit.parse(text)
    except TOMLKitError:
        return None
    if tomlkit.dumps(original) != text:
        return None
    exact = f"=={version}" if pipfile else version
    for path in _entries(original, library):
        document = tomlkit.parse(text)
        *parents, key = path
        container = document
        for step in parents:
            container = container[step]
        value = container[key]
        if isinstance(container, Array):
            new = pinned_requirement(str(value), library, version)
        else:
            new = exact
        if new is None:
            continue
        container[key] = tomlkit.string(new, literal=value.as_string().startswith("'"))
        pinned = tomlkit.dumps(document)
        edits = edit_between("", text, pinned)
        if edits and edits[0].span.line == line and edits[0].span.end_line == line:
            return pinned
    return None


def _entries(container: object, library: str, path: tuple[object, ...] = ()
             ) -> Iterator[tuple[object, ...]]:
    """The paths of every string that may pin ``library``: an array item naming it, the value
    of a ``library = "..."`` key, or the ``version`` of a ``library = {...}`` table."""
    if isinstance(container, Array):
        items: list[tuple[object, object]] = list(enumerate(container))
    elif isinstance(container, (Table, InlineTable, tomlkit.TOMLDocument)):
        items = list(container.items())
    else:
        return
    for key, value in items:
        if isinstance(value, String) and isinstance(container, Array):
            yield (*path, key)
        elif isinstance(key, str) and canonicalize_name(key) == library:
            if isinstance(value, String):
                yield (*path, key)
            elif isinstance(value, (Table, InlineTable)) and isinstance(value.get("version"),
                                                                        String):
                yield (*path, key, "version")
        else:
            yield from _entries(value, library, (*path, key))


def pinned_setup_py(text: str, line: int, library: str, version: str) -> str | None:
    """``setup.py`` with the string literal on ``line`` that requires ``library`` pinned, in
    its own prefix and quotes; None when there is no such plain literal."""
    parsed = ParsedFile.parse("setup.py", text)
    if parsed is None:
        return None
    for node in parsed.nodes(cst.SimpleString):
        assert isinstance(node, cst.SimpleString)
        if parsed.positions[node].start.line != line or "\\" in node.value:
            continue
        value = node.evaluated_value
        new = pinned_requirement(value, library, version) if isinstance(value, str) else None
        if new is not None:
            body = node.value[len(node.prefix) + len(node.quote): -len(node.quote)]
            if value != body or node.quote in new:
                return None
            literal = f"{node.prefix}{node.quote}{new}{node.quote}"
            return parsed.module.visit(_ReplaceString(node, literal)).code
    return None


class _ReplaceString(cst.CSTTransformer):
    def __init__(self, target: cst.SimpleString, value: str) -> None:
        super().__init__()
        self.target = target
        self.value = value

    def leave_SimpleString(self, original_node: cst.SimpleString, updated_node: cst.SimpleString
                           ) -> cst.SimpleString:
        return updated_node.with_changes(value=self.value) if original_node is self.target \
            else updated_node
