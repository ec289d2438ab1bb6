"""Jupyter notebooks (``.ipynb``) as one Python module: their code cells, in order.

A notebook is nbformat 4 JSON, read with the standard library (no Jupyter install). Only the
notebook's kernel language and each cell's ``cell_type`` and ``source`` are read: outputs,
execution counts, cell metadata, widget state and attachments never reach the analysis, a report
or a fingerprint, so re-running a notebook changes nothing dpcheck says about it. The code cells,
their IPython syntax neutralised line for line (``dpcheck.parse.magics``), are concatenated into
one module, the way the kernel runs them: a dataset loaded in one cell is the dataset of the
training loop in a later one. A ``CellLayout`` records where each cell lies in that module, so
reports can say ``tutorial.ipynb:cell 7:12:5``. A notebook whose kernel is not Python (R, Julia)
is not Python source and is not analysed.

The module is parsed once, like a Python file. Only when that fails is each cell parsed on its
own to find the cells that do not parse: each becomes its own DP001 problem and is left out
(its lines blank), and the rest of the notebook is still analysed.
"""

from __future__ import annotations

import ast
import json
import posixpath
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

from dpcheck.locations import CellLayout
from dpcheck.parse.magics import python_cell
from dpcheck.parse.source import SourceProblem, parse_python
from dpcheck.suppress import Suppression, find_suppressions

NOTEBOOK_SUFFIX = ".ipynb"
_NEWLINE = re.compile(r"\r\n|\r|\n")
_RUNNABLE_SUFFIXES = (".py", ".ipy", NOTEBOOK_SUFFIX)


def is_notebook(path: str) -> bool:
    """Whether ``path`` names a Jupyter notebook (by its suffix, as Jupyter does)."""
    return path.endswith(NOTEBOOK_SUFFIX)


@dataclass(frozen=True)
class NotebookSource:
    """A notebook read as Python.

    ``module`` is what dpcheck parses (the code cells with IPython syntax neutralised), ``text``
    the code cells as written, line for line the same (for code frames and finding context);
    ``runs`` holds each ``%run`` target as written with its module line.
    """

    module: str
    text: str
    layout: CellLayout
    runs: tuple[tuple[int, str], ...] = ()

    def cells(self, module: str | None = None) -> Iterator[tuple[int, int, str]]:
        """``(cell number, first module line, cell source)`` of each code cell with lines, read
        from ``module`` (default: the notebook's own module)."""
        lines = (self.module if module is None else module).split("\n")
        for number, first, count in self.layout.cells:
            if count:
                yield number, first, "".join(f"{line}\n" for line in lines[first - 1 : first - 1 + count])


def read_notebook(data: bytes, max_bytes: int) -> NotebookSource | SourceProblem | None:
    """The notebook in ``data`` as Python, a ``SourceProblem`` saying why it cannot be read
    (too large, not JSON, not nbformat 4, malformed cells), or None when its kernel is not
    Python."""
    cells = code_cells(data, max_bytes)
    if cells is None or isinstance(cells, SourceProblem):
        return cells
    module: list[str] = []
    text: list[str] = []
    placed: list[tuple[int, int, int]] = []
    shifts: list[tuple[int, int]] = []
    runs: list[tuple[int, str]] = []
    for number, lines in cells:
        first = len(module) + 1
        python = python_cell(lines)
        placed.append((number, first, len(lines)))
        shifts.extend((first + line - 1, by) for line, by in python.shifts)
        runs.extend((first + line - 1, target) for line, target in python.runs)
        module.extend(python.lines)
        text.extend(lines)
    return NotebookSource(
        "".join(f"{line}\n" for line in module),
        "".join(f"{line}\n" for line in text),
        CellLayout(tuple(placed), tuple(shifts)),
        tuple(runs),
    )


def code_cells(data: bytes, max_bytes: int) -> list[tuple[int, list[str]]] | SourceProblem | None:
    """``(cell number, lines without line breaks)`` of each code cell of the notebook in
    ``data``, a problem when it cannot be read, None when its kernel is not Python."""
    if len(data) > max_bytes:
        return SourceProblem(f"notebook is too large to analyse ({len(data)} bytes > {max_bytes})")
    try:
        document = json.loads(data)
    except json.JSONDecodeError as exc:
        return SourceProblem(f"not a Jupyter notebook: invalid JSON ({exc.msg})", exc.lineno, exc.colno)
    except (UnicodeDecodeError, RecursionError) as exc:
        return SourceProblem(f"not a Jupyter notebook: cannot read its JSON ({exc})")
    cells = _cells(document)
    if isinstance(cells, SourceProblem):
        return cells
    if not _python_kernel(document):
        return None
    found = []
    for number, source in cells:
        lines = _NEWLINE.split(source)
        if lines[-1] == "":
            lines.pop()
        found.append((number, lines))
    return found


def _cells(document: Any) -> list[tuple[int, str]] | SourceProblem:
    """``(cell number, source)`` of every code cell, numbered over all cells from 1; a problem
    when the document is not an nbformat 4 notebook."""
    if not isinstance(document, dict) or "nbformat" not in document:
        return SourceProblem("not a Jupyter notebook: no `nbformat` in its JSON")
    if document["nbformat"] != 4:
        return SourceProblem(
            f"only nbformat 4 notebooks are read; this one is nbformat {document['nbformat']!r} "
            "(convert it with `jupyter nbconvert --to notebook`)"
        )
    cells = document.get("cells")
    if not isinstance(cells, list):
        return SourceProblem("not a Jupyter notebook: `cells` is not a list")
    found: list[tuple[int, str]] = []
    for number, cell in enumerate(cells, start=1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        if isinstance(source, list) and all(isinstance(part, str) for part in source):
            source = "".join(source)
        if not isinstance(source, str):
            return SourceProblem(f"cell {number}: `source` is neither text nor a list of lines")
        found.append((number, source))
    return found


def _python_kernel(document: dict[str, Any]) -> bool:
    """Whether the notebook's language is Python; a notebook that does not say is taken as
    Python (what Jupyter creates by default)."""
    metadata = document.get("metadata")
    if not isinstance(metadata, dict):
        return True
    for key, field in (("language_info", "name"), ("kernelspec", "language")):
        entry = metadata.get(key)
        language = entry.get(field) if isinstance(entry, dict) else None
        if isinstance(language, str):
            return language.lower().startswith("python")
    return True


def parse_notebook(
    notebook: NotebookSource, path: str
) -> tuple[ast.Module | SourceProblem, tuple[SourceProblem, ...]]:
    """The notebook's module tree, and the cells left out because they do not parse on their
    own (one problem each, in module coordinates). Cells that each parse make a module that
    parses; a problem left after the broken cells are left out (the parser's own limits) is
    the notebook's, returned instead of a tree."""
    tree = parse_python(notebook.module, path)
    if not isinstance(tree, SourceProblem):
        return tree, ()
    module = notebook.module
    skipped: list[SourceProblem] = []
    for number, first, source in notebook.cells():
        problem = parse_python(source, path)
        if isinstance(problem, SourceProblem):
            skipped.append(_in_cell(problem, number, first))
            module = _blank(module, notebook.layout, number)
    return parse_python(module, path) if skipped else tree, tuple(skipped)


def _in_cell(problem: SourceProblem, number: int, first: int) -> SourceProblem:
    """A problem found in cell ``number`` (cell coordinates) in module coordinates."""
    return SourceProblem(
        f"cell {number}: {problem.message}; the other cells were analysed",
        first + problem.line - 1,
        problem.column,
    )


def _blank(module: str, layout: CellLayout, number: int) -> str:
    """``module`` with the lines of cell ``number`` emptied (line numbers unchanged)."""
    placed = layout.cell_lines(number)
    if placed is None:
        return module
    first, count = placed
    lines = module.split("\n")
    lines[first - 1 : first - 1 + count] = [""] * count
    return "\n".join(lines)


def notebook_suppressions(notebook: NotebookSource) -> tuple[Suppression, ...]:
    """The suppression comments of every code cell, read cell by cell (a cell that does not
    tokenize keeps the others' comments), in module coordinates."""
    found: list[Suppression] = []
    for _, first, source in notebook.cells():
        offset = first - 1
        found.extend(
            replace(s, line=s.line + offset, target_line=s.target_line + offset)
            for s in find_suppressions(source)
        )
    return tuple(found)


def run_imports(path: str, runs: tuple[tuple[int, str], ...]) -> list[dict[str, Any]]:
    """The Python scripts ``%run`` runs in notebook ``path``: each with its module line, its
    project path (resolved from the notebook's folder, the kernel's working directory) and the
    relative module name that imports it from the notebook (``.helpers``,
    ``..utils.helpers``). Targets outside the project, notebooks and names no import can spell
    are left out: what they define stays unknown."""
    folder = posixpath.dirname(path)
    found: list[dict[str, Any]] = []
    for line, target in runs:
        if not target.endswith(_RUNNABLE_SUFFIXES):
            target += ".py"
        resolved = posixpath.normpath(posixpath.join(folder, target))
        if not resolved.endswith(".py") or resolved.startswith(("../", "/")) or resolved == "..":
            continue
        parts = posixpath.relpath(resolved[: -len(".py")], folder or ".").split("/")
        ups = len(parts) - len([p for p in parts if p != ".."])
        names = parts[ups:]
        if parts[:ups] != [".."] * ups or not all(n.isidentifier() for n in names):
            continue
        found.append({"line": line, "path": resolved, "module": "." * (ups + 1) + ".".join(names)})
    return found


def display_text(path: str, data: bytes) -> str:
    """The text reports quote for a file: a notebook's code cells as written (line for line
    the lines spans count), any other file decoded as UTF-8."""
    if is_notebook(path):
        cells = code_cells(data, len(data))
        if isinstance(cells, list):
            return "".join(f"{line}\n" for _, lines in cells for line in lines)
    return data.decode("utf-8", errors="replace")
