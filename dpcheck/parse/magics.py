"""IPython syntax in a notebook cell, made neutral so that CPython's parser reads the rest.

Jupyter code cells are IPython, not Python: ``%pip install opacus``, ``!nvidia-smi``,
``files = !ls``, ``model.fit?``, ``%%time`` over a cell. IPython rewrites such lines before it
runs a cell; dpcheck rewrites them too, line for line, so every line keeps its number:

* a line magic, shell escape, help request or magic assignment at the start of a logical line
  becomes ``pass`` at its indentation (so a block holding only ``!pip install x`` stays a block),
  and so do the lines it continues onto with a trailing backslash; a line that starts with the
  name of a magic IPython runs without its ``%`` (``cd data``, ``pip install opacus``: automagic)
  counts as that magic when it is not Python on its own;
* ``%time stmt`` (and the other magics of ``python_line_magics`` in
  ``dpcheck/data/ipython_magics.json``) leaves ``stmt``; the columns removed are recorded, so a
  reported column still points into the cell's own text;
* ``%run script.py`` becomes ``pass`` and is recorded: the engine treats it as importing every
  name the script defines (``dpcheck.project``);
* a cell under a cell magic keeps its body when the magic runs the body as Python in the
  notebook (``%%time``, ``%%capture``) and is skipped otherwise (``%%bash``, ``%%html``,
  ``%%writefile``): its lines become blank.

An IPython escape only counts at the start of a logical line: ``% (a, b)`` continuing a
bracketed expression is the modulo operator, and ``!`` inside a triple-quoted string is text.
Where logical lines start is decided by a small scanner of brackets, strings, comments and
backslash continuations, because Python's own ``tokenize`` fails, differently from one Python
version to the next, on the very IPython lines it would have to find.
"""

from __future__ import annotations

import ast
import json
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

NEUTRAL = "pass"
_TABLE = "ipython_magics.json"
#: A quote, a bracket or a comment: what decides whether the next line starts a statement.
_LEXEME = re.compile(r"""(?P<comment>\#)|(?P<quote>'''|\"\"\"|'|")|(?P<open>[\[({])|(?P<close>[\])}])""")
#: The rest of a string up to its closing quote (a backslash always takes the next character).
_STRING_END: dict[str, re.Pattern[str]] = {
    quote: re.compile(r"(?:[^\\]|\\.)*?" + re.escape(quote), re.DOTALL)
    for quote in ("'''", '"""', "'", '"')
}
#: Characters no Python statement starts with and IPython does: magics, shell escapes, help,
#: and the autocall escapes (``/f x``, ``,f a b``, ``;f a b``).
_ESCAPES = ("%", "!", "?", "/", ",", ";")
_MAGIC = re.compile(r"%{1,2}(?P<name>\w+)(?P<rest>.*)", re.DOTALL)
_FIRST_WORD = re.compile(r"\w+")
#: ``target = %magic ...`` or ``target = !cmd``: a magic or shell escape whose output is kept.
_ASSIGNED = re.compile(r"[\w\s.,*\[\]]+?=\s*[%!]")


@dataclass(frozen=True)
class MagicTable:
    """The magics whose Python is kept (``dpcheck/data/ipython_magics.json``)."""

    python_line: frozenset[str]
    python_cell: frozenset[str]
    automagic: frozenset[str]


@lru_cache(maxsize=1)
def magic_table() -> MagicTable:
    """The shipped table, validated: each list must hold magic names (identifiers)."""
    data: Any = json.loads(resources.files("dpcheck.data").joinpath(_TABLE).read_text("utf-8"))
    return MagicTable(_names(data, "python_line_magics"), _names(data, "python_cell_magics"),
                      _names(data, "automagic_names"))


def _names(data: Any, key: str) -> frozenset[str]:
    values = data.get(key) if isinstance(data, dict) else None
    if not isinstance(values, list) or not all(
        isinstance(v, str) and v.isidentifier() for v in values
    ):
        raise ValueError(f"dpcheck/data/{_TABLE}: `{key}` must be a list of magic names")
    return frozenset(values)


@dataclass(frozen=True)
class PythonCell:
    """A cell as Python: ``lines`` (as many as the cell has), the lines whose leading IPython
    syntax was removed with the number of columns removed, and the ``%run`` targets as written,
    each with its 1-based line in the cell."""

    lines: tuple[str, ...]
    shifts: tuple[tuple[int, int], ...] = ()
    runs: tuple[tuple[int, str], ...] = ()


@dataclass
class _Scanner:
    """Where the scan of a cell stands at the end of a line: open brackets, an open string
    (its quote), or a backslash continuation. A statement starts only when none is open."""

    depth: int = 0
    quote: str | None = None
    continued: bool = False

    @property
    def at_statement_start(self) -> bool:
        return self.depth == 0 and self.quote is None and not self.continued

    def feed(self, line: str) -> int:
        """Scan one line (without its line break); return where its comment starts, or its
        length when it has none."""
        pos, comment = 0, len(line)
        while pos < len(line):
            if self.quote is not None:
                end = _STRING_END[self.quote].match(line, pos)
                if end is None:
                    if len(self.quote) == 1 and not line.endswith("\\"):
                        self.quote = None  # unterminated: the parser reports it
                    self.continued = False
                    return comment
                pos, self.quote = end.end(), None
                continue
            lexeme = _LEXEME.search(line, pos)
            if lexeme is None:
                break
            if lexeme.lastgroup == "comment":
                comment = lexeme.start()
                break
            if lexeme.lastgroup == "quote":
                self.quote = lexeme.group()
            elif lexeme.lastgroup == "open":
                self.depth += 1
            else:
                self.depth = max(self.depth - 1, 0)
            pos = lexeme.end()
        self.continued = self.quote is None and line[:comment].endswith("\\")
        return comment


def python_cell(lines: Sequence[str], table: MagicTable | None = None) -> PythonCell:
    """The Python of a code cell given as lines without line breaks (see the module docstring)."""
    table = table or magic_table()
    out = list(lines)
    first = next((i for i, line in enumerate(out) if line.strip()), None)
    start = 0
    if first is not None and out[first].lstrip().startswith("%%"):
        magic = _MAGIC.match(out[first].lstrip())
        if magic is None or magic["name"] not in table.python_cell:
            return PythonCell(tuple("" for _ in out))
        out[first] = NEUTRAL
        start = first + 1
    shifts: list[tuple[int, int]] = []
    runs: list[tuple[int, str]] = []
    suspects = [i for i in range(start, len(out)) if _suspect(out[i], table)]
    scanner = _Scanner()
    index = start
    while suspects and index <= suspects[-1]:
        line = out[index]
        magic = _ipython(line, table) if scanner.at_statement_start else None
        if magic is None:
            scanner.feed(line)
            index += 1
            continue
        indent = line[: len(line) - len(line.lstrip())]
        end = index
        while out[end].endswith("\\") and end + 1 < len(out):
            end += 1
        kept = _kept_statement(magic, table) if end == index else None
        if kept is not None:
            out[index] = indent + kept
            shifts.append((index + 1, len(line) - len(out[index])))
        else:
            out[index : end + 1] = [indent + NEUTRAL] * (end + 1 - index)
            target = _run_target(magic)
            if target is not None:
                runs.append((index + 1, target))
        index = end + 1
    return PythonCell(tuple(out), tuple(shifts), tuple(runs))


def _suspect(line: str, table: MagicTable) -> bool:
    """A cheap test every IPython line passes (and most Python lines fail): only cells with
    such lines are scanned."""
    stripped = line.lstrip()
    if stripped.startswith(_ESCAPES) or "?" in stripped:
        return True
    if "=" in stripped and ("%" in stripped or "!" in stripped):
        return True
    word = _FIRST_WORD.match(stripped)
    return word is not None and word.group() in table.automagic


def _ipython(line: str, table: MagicTable) -> str | None:
    """The IPython syntax a line that starts a statement is (an automagic line with its ``%``
    put back), or None when it is Python."""
    stripped = line.lstrip()
    if not stripped or stripped.startswith("#"):
        return None
    if stripped.startswith(_ESCAPES) or _ASSIGNED.match(stripped):
        return stripped
    probe = _Scanner()
    code = line[: probe.feed(line)].strip()
    if not probe.at_statement_start:
        return None  # it opens a bracket or a string: a Python statement going on
    if code.endswith("?"):
        return stripped
    word = _FIRST_WORD.match(code)
    if word is not None and word.group() in table.automagic and not _is_python(code):
        return f"%{stripped}"
    return None


def _is_python(code: str) -> bool:
    try:
        ast.parse(code)
    except (SyntaxError, ValueError):
        return False
    return True


def _kept_statement(stripped: str, table: MagicTable) -> str | None:
    """The statement of ``%time stmt`` (a line magic that runs Python), else None; a statement
    behind options (``%timeit -n 10 f()``) is not separated from them and is not kept."""
    magic = _MAGIC.match(stripped) if stripped.startswith("%") and not stripped.startswith("%%") \
        else None
    if magic is None or magic["name"] not in table.python_line:
        return None
    statement = magic["rest"].strip()
    return statement if statement and not statement.startswith("-") else None


def _run_target(stripped: str) -> str | None:
    """The file ``%run [options] FILE [args]`` runs (``-m module`` as its path), as written;
    None when the line is no ``%run`` or its target is computed (``$name``, ``{expr}``)."""
    magic = _MAGIC.match(stripped)
    if magic is None or magic["name"] != "run" or stripped.startswith("%%"):
        return None
    try:
        words = shlex.split(magic["rest"])
    except ValueError:
        return None
    for position, word in enumerate(words):
        if word == "-m":
            module = words[position + 1] if position + 1 < len(words) else None
            return module.replace(".", "/") + ".py" if module else None
        if not word.startswith("-"):
            return None if any(c in word for c in "${}") else word
    return None
