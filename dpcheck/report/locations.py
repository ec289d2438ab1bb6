"""Where a human-read report says something is: the one place locations are formatted.

The model keeps every path POSIX and relative to the scan root, which is what SARIF
(``%SRCROOT%``), GitHub annotations (the repository) and baselines need. A person at a terminal
needs a path that opens from where they stand, so the text renderers show each path as ruff
does: relative to the current folder when the file is below it, else absolute. Every ``path:line:col`` a text report prints goes through
:func:`location`, so a finer position (a notebook cell) is added in one place.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePosixPath

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


def location(span: Span, paths: PathView, *, column: bool = True) -> str:
    """``path:line:col`` (``path:line`` without the column) with the path shown for a person."""
    where = f"{paths.show(span.path)}:{span.line}"
    return f"{where}:{span.column}" if column else where
