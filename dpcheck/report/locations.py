"""Where a human-read report says something is: the one place locations are formatted.

The model keeps every path POSIX and relative to the scan root, which is what SARIF
(``%SRCROOT%``), GitHub annotations (the repository) and baselines need. A person at a terminal
needs a path that opens from where they stand, so the text renderers show each path as ruff
does: relative to the current folder when the file is below it, else absolute. Every
``path:line:col`` a text report prints goes through :func:`location`, which also places a span of
a Jupyter notebook in its cell (``tutorial.ipynb:cell 7:12:5``, ``dpcheck.locations``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath

from dpcheck.locations import CellLayout, locate, location_text
from dpcheck.model import Span


@dataclass(frozen=True)
class PathView:
    """How root-relative paths are shown: relative to ``cwd`` when the file is below it, else
    absolute (when both folders are known).

    The default view (no root, no cwd) shows paths as stored, which is what a renderer used
    without a scan (tests, the baseline) gets.
    """

    root: Path | None = None
    cwd: Path | None = None

    @classmethod
    def here(cls, root: Path) -> PathView:
        """The view of a scan rooted at ``root`` from the process's current folder."""
        return cls(root.resolve(), Path.cwd().resolve())

    def show(self, path: str) -> str:
        """``path`` (POSIX, relative to the root, or absolute) as the user should type it."""
        if self.root is None or self.cwd is None or not path:
            return path
        pure = PurePosixPath(path)
        target = Path(path) if pure.is_absolute() else self.root.joinpath(*pure.parts)
        try:
            return target.relative_to(self.cwd).as_posix() or "."
        except ValueError:  # not below the current folder
            return target.as_posix()


def location(span: Span, paths: PathView, cells: Mapping[str, CellLayout] | None = None, *,
             column: bool = True) -> str:
    """``path:line:col`` (``path:line`` without the column), or ``path:cell N:line:col`` in a
    notebook, with the path shown for a person."""
    placed = locate(span, (cells or {}).get(span.path))
    return location_text(replace(placed, path=paths.show(span.path)), column=column)
