"""A one-line progress display on stderr for long scans, shown only to a person at a terminal.

Long runs (many files, a ``--new-since`` scan of a second tree, history, audits) report progress
through a plain callback ``(stage, done, total)``; this module turns those calls into a single
self-overwriting line. When stderr is not a terminal (CI logs, pre-commit, pipes) or the user
asked for ``--quiet``, no display exists at all: callers get ``None`` and pass it on unchanged,
so reports and logs never contain carriage-return noise.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

ProgressCallback = Callable[[str, int, int], None]
"""``(stage, done, total)``: ``done`` of ``total`` units of ``stage`` are finished."""

_CLEAR_LINE = "\r\x1b[2K"
_MIN_INTERVAL_S = 0.1


class LineProgress:
    """Redraws one stderr line, at most every ``min_interval`` seconds except when a stage
    completes (so the last count shown is the true one)."""

    def __init__(self, stream: TextIO, min_interval: float = _MIN_INTERVAL_S) -> None:
        self.stream = stream
        self.min_interval = min_interval
        self._last_draw = float("-inf")
        self._drawn = False

    def __call__(self, stage: str, done: int, total: int) -> None:
        now = time.monotonic()
        if done < total and now - self._last_draw < self.min_interval:
            return
        self._last_draw = now
        percent = f" ({100 * done // total}%)" if total else ""
        self.stream.write(f"{_CLEAR_LINE}dpcheck: {stage} {done}/{total}{percent}")
        self.stream.flush()
        self._drawn = True

    def clear(self) -> None:
        """Erase the line so the report that follows starts on a clean line."""
        if self._drawn:
            self.stream.write(_CLEAR_LINE)
            self.stream.flush()
            self._drawn = False


def labelled(progress: ProgressCallback | None, label: str) -> ProgressCallback | None:
    """``progress`` with every stage prefixed by ``label`` (e.g. the git ref being scanned)."""
    if progress is None:
        return None
    return lambda stage, done, total: progress(f"{label}: {stage}", done, total)


@contextmanager
def progress_display(quiet: bool, stream: TextIO | None = None) -> Iterator[LineProgress | None]:
    """A ``LineProgress`` on ``stream`` (default stderr) when it is a terminal and not
    ``quiet``, else ``None``; the line is erased on exit, also when the body raises."""
    target = sys.stderr if stream is None else stream
    if quiet or not target.isatty():
        yield None
        return
    display = LineProgress(target)
    try:
        yield display
    finally:
        display.clear()
