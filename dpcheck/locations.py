"""Where a span is for a reader: a file position, or a notebook cell and a position in it.

Every stage before the report works on one module per file: for a Jupyter notebook that module is
the concatenation of its code cells (``dpcheck.parse.notebook``), and spans, suppressions and
fingerprints are in its coordinates, so the analysis never needs to know a notebook from a
Python file. A notebook's ``CellLayout`` says where each code cell lies in that module; the
report edge maps spans through it (``locate``) and prints them (``location_text``). Cells are
numbered from 1 over all the notebook's cells, markdown included, the way Jupyter lists them
(and ruff reports them).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol


class Positioned(Protocol):
    """What ``locate`` reads of a span (``dpcheck.model.Span`` has it; this module imports
    nothing of dpcheck, so the model can use it)."""

    @property
    def path(self) -> str: ...

    @property
    def line(self) -> int: ...

    @property
    def column(self) -> int: ...

    @property
    def end_line(self) -> int | None: ...

    @property
    def end_column(self) -> int | None: ...


@dataclass(frozen=True)
class CellLayout:
    """Where a notebook's code cells lie in its module source.

    ``cells`` holds ``(cell number, first module line, number of lines)`` in module order; a cell
    without lines occupies none. ``shifts`` holds ``(module line, columns)`` for each line whose
    leading IPython syntax was removed to leave a Python statement (``%time train()`` becomes
    ``train()``): a column on that line is that many columns further right in the cell.
    """

    cells: tuple[tuple[int, int, int], ...]
    shifts: tuple[tuple[int, int], ...] = ()

    def cell_at(self, line: int) -> tuple[int, int] | None:
        """``(cell number, first module line of that cell)`` of module ``line``, or None."""
        starts = [first for _, first, _ in self.cells]
        index = bisect_right(starts, line) - 1
        if index < 0:
            return None
        number, first, count = self.cells[index]
        return (number, first) if line < first + count else None

    def cell_lines(self, number: int) -> tuple[int, int] | None:
        """``(first module line, number of lines)`` of cell ``number``, or None."""
        for cell, first, count in self.cells:
            if cell == number:
                return first, count
        return None

    def shift(self, line: int) -> int:
        """Columns removed at the start of module ``line`` (0 for most lines)."""
        return dict(self.shifts).get(line, 0)

    def to_json(self) -> dict[str, Any]:
        return {"cells": [list(c) for c in self.cells], "shifts": [list(s) for s in self.shifts]}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CellLayout:
        return cls(
            tuple((int(n), int(f), int(c)) for n, f, c in data["cells"]),
            tuple((int(line), int(by)) for line, by in data["shifts"]),
        )


@dataclass(frozen=True)
class Location:
    """A span as a reader finds it: in a notebook, ``cell`` is the cell number and the lines and
    columns count within that cell; in a Python file ``cell`` is None and nothing changes."""

    path: str
    line: int
    column: int = 1
    end_line: int | None = None
    end_column: int | None = None
    cell: int | None = None


def locate(span: Positioned, layout: CellLayout | None) -> Location:
    """``span`` (module coordinates) placed in its notebook cell when ``layout`` is given and
    the line lies in a code cell; else the span's own position."""
    placed = layout.cell_at(span.line) if layout is not None else None
    if layout is None or placed is None:
        return Location(span.path, span.line, span.column, span.end_line, span.end_column)
    number, first = placed
    end_line = end_column = None
    if span.end_line is not None and layout.cell_at(span.end_line) == placed:
        end_line = span.end_line - first + 1
        if span.end_column is not None:
            end_column = span.end_column + layout.shift(span.end_line)
    elif span.end_line is None and span.end_column is not None:
        end_column = span.end_column + layout.shift(span.line)
    return Location(
        span.path,
        span.line - first + 1,
        span.column + layout.shift(span.line),
        end_line,
        end_column,
        number,
    )


def location_text(location: Location, *, column: bool = True) -> str:
    """``path:line:column`` for a file, ``path:cell N:line:column`` in a notebook (ruff's
    spelling); without the column when ``column`` is false."""
    cell = f"cell {location.cell}:" if location.cell is not None else ""
    tail = f":{location.column}" if column else ""
    return f"{location.path}:{cell}{location.line}{tail}"


def place_in_cells(document: Any, layouts: Mapping[str, CellLayout]) -> Any:
    """A copy of a report document (plain JSON values) in which every span-shaped object (one
    with a string ``path`` and an integer ``line``: findings, evidence, spans, pipelines,
    suppression issues) gains ``cell`` before ``line``: the cell number with ``line``, ``column``
    and ``end_line`` counted in that cell for a notebook, null for a Python file."""
    if isinstance(document, list):
        return [place_in_cells(item, layouts) for item in document]
    if not isinstance(document, dict):
        return document
    placed = {key: place_in_cells(value, layouts) for key, value in document.items()}
    path, line = placed.get("path"), placed.get("line")
    if not isinstance(path, str) or not isinstance(line, int) or isinstance(line, bool):
        return placed
    location = locate(
        Location(path, line, placed.get("column", 1), placed.get("end_line"),
                 placed.get("end_column")),
        layouts.get(path),
    )
    moved = {"line": location.line, "column": location.column,
             "end_line": location.end_line, "end_column": location.end_column}
    result: dict[str, Any] = {}
    for key, value in placed.items():
        if key == "line":
            result["cell"] = location.cell
        result[key] = moved[key] if key in moved else value
    return result
