"""Markdown for a terminal, and paging: how ``dpcheck explain`` shows a rule page.

The rule pages are Markdown (``docs/rules/``); a terminal should show them styled, not as raw
``**`` and fences. rich renders them (headings, emphasis, lists, code blocks with the flagged
line visible); with colour off (a pipe, ``NO_COLOR``) the same layout comes out as plain text.
Text longer than the terminal is shown through the system pager (``$PAGER``, else ``less``),
as ``git`` and ``man`` do; a pipe or a short text is written straight out.
"""

from __future__ import annotations

import io
import os
import pydoc
import shutil
import sys
from typing import TextIO

from rich.console import Console
from rich.markdown import Markdown

#: Lines are wrapped at this width at most, however wide the terminal, for readable prose.
MAX_WIDTH = 100


def render_markdown(text: str, *, color: bool, width: int) -> str:
    """``text`` (Markdown) rendered for a terminal ``width`` columns wide, with ANSI styles when
    ``color``."""
    buffer = io.StringIO()
    console = Console(
        file=buffer,
        width=width,
        force_terminal=color,
        color_system="standard" if color else None,
        no_color=not color,
        highlight=False,
        legacy_windows=False,
    )
    console.print(Markdown(text, code_theme="ansi_dark", hyperlinks=False))
    return "\n".join(line.rstrip() for line in buffer.getvalue().splitlines()) + "\n"


def is_terminal(stream: TextIO) -> bool:
    """Whether ``stream`` is an interactive terminal."""
    return hasattr(stream, "isatty") and stream.isatty()


def show_markdown(text: str, stream: TextIO | None = None) -> None:
    """Render ``text`` for ``stream`` (default stdout) and page it when it is a terminal and the
    text is taller than the window."""
    out = stream or sys.stdout
    terminal = is_terminal(out)
    size = shutil.get_terminal_size((80, 24))
    width = min(size.columns, MAX_WIDTH) if terminal else 80
    color = terminal and "NO_COLOR" not in os.environ
    rendered = render_markdown(text, color=color, width=width)
    if terminal and rendered.count("\n") > size.lines - 1:
        os.environ.setdefault("LESS", "-R")  # let less pass the colours through
        pydoc.pager(rendered)
    else:
        out.write(rendered)
