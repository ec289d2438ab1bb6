"""Code frames: the reported source line with a caret under the 1-based column, plus context.

Lines are split the way Python's tokenizer (and so libcst's positions) counts them, on ``\\r\\n``,
``\\r`` and ``\\n`` only, so a form feed or other Unicode line separator inside a line does not
shift the numbering the way ``str.splitlines`` would.

A line longer than ``MAX_LINE_CHARS`` (minified or generated code) is cut to a window of that
many characters around the caret, each cut end marked with ``…``; the context lines are cut to
the same window so columns still line up, and the caret still stands under the reported column
(the header keeps the real column number).
"""

from __future__ import annotations

import re

from dpcheck.errors import internal_message
from dpcheck.model import Span

_NEWLINE = re.compile(r"\r\n|\r|\n")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
CONTEXT_LINES = 1
MAX_LINE_CHARS = 120
ELLIPSIS = "\u2026"


def source_lines(source: str) -> list[str]:
    """The lines of ``source`` without their terminators; line ``n`` is at index ``n - 1``."""
    return _NEWLINE.split(source)


def printable(line: str) -> str:
    """``line`` with control characters (NUL, ESC, form feed...) shown as U+FFFD, tabs kept.

    One character for one, so columns still line up; and no escape sequence from a scanned
    file reaches the terminal.
    """
    return _CONTROL.sub("\ufffd", line)


def caret_line(line: str, column: int, width: int) -> str:
    """Carets under ``line`` from 1-based ``column`` over ``width`` characters (at least one).

    Tabs before the column are copied so the carets stay aligned however the terminal expands
    them; any other character becomes a space.
    """
    prefix = "".join(ch if ch == "\t" else " " for ch in line[: max(column - 1, 0)])
    return prefix + "^" * max(width, 1)


def window(length: int, column: int, width: int, limit: int = MAX_LINE_CHARS) -> tuple[int, int]:
    """The ``[start, start + limit)`` character range to show of a line of ``length`` characters
    for a span from 1-based ``column`` over ``width`` characters: from the line's start when it
    fits in ``limit``, else ``limit`` characters holding the column, with a third of them before
    it when the span fits after that (a little context), else just a few."""
    if length <= limit:
        return 0, limit
    lead = limit // 3 if width <= limit - limit // 3 else min(8, limit // 3)
    start = max(min(column - 1 - lead, length - limit), 0)
    return start, start + limit


def cut(line: str, start: int, end: int) -> str:
    """``line[start:end]`` with ``…`` where something was cut off on either side."""
    head = ELLIPSIS if start > 0 else ""
    tail = ELLIPSIS if end < len(line) else ""
    return head + line[start:end] + tail


def code_frame(source: str, span: Span) -> list[tuple[int | None, str]]:
    """The frame for ``span`` as ``(line number or None, text)`` rows, caret row numberless.

    Shows ``CONTEXT_LINES`` line(s) before the anchor line, the anchor line, and the caret row.
    The carets cover the span's extent (end column exclusive) when it ends on the same line,
    else one character. Lines over ``MAX_LINE_CHARS`` are cut around the caret.
    Empty when the line is not in ``source`` (a stale or mismatched file). The only part of a
    report made from a file's content, so it is isolated: a dpcheck bug here costs this frame,
    replaced by one row saying so, never the report.
    """
    try:
        return _code_frame(source, span)
    except Exception as exc:  # noqa: BLE001 - one finding's frame must not cost the report
        return [(None, f"(no code frame: {internal_message('rendering it', exc)})")]


def _code_frame(source: str, span: Span) -> list[tuple[int | None, str]]:
    lines = source_lines(source)
    if not 1 <= span.line <= len(lines):
        return []
    anchor = lines[span.line - 1]
    width = 1
    if span.end_column is not None and span.end_line in (None, span.line):
        width = min(span.end_column, len(anchor) + 1) - span.column
    start, end = window(len(anchor), span.column, max(width, 1))
    first = max(span.line - CONTEXT_LINES, 1)
    rows = [(n, printable(cut(lines[n - 1], start, end))) for n in range(first, span.line + 1)]
    shown = cut(anchor, start, end)
    column = span.column - start + (1 if start > 0 else 0)
    width = min(width, end - (span.column - 1))
    return [*rows, (None, caret_line(shown, column, width))]
