"""What ``--diff`` prints and what ``--fix`` writes: the fixed files, nothing else.

The diff is a unified diff per file (``a/<path>`` / ``b/<path>``, paths as the text report
shows them), each line as the file has it (CRLF kept), with git's marker for a last line without
a newline. Writing goes through ``write_inside``: only a regular file whose real path lies in
the project, never through a link out of it, keeping the file's inode and mode.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from pathlib import Path

from dpcheck.discover.confine import ReadRefused, write_inside

_NO_NEWLINE = "\\ No newline at end of file\n"


def unified_diff(changes: Mapping[str, tuple[str, str]], show: Callable[[str], str]) -> str:
    """The unified diff of every changed file, ``show`` giving each path as printed."""
    parts: list[str] = []
    for path, (old, new) in changes.items():
        if old == new:
            continue
        shown = show(path)
        lines = difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                     fromfile=f"a/{shown}", tofile=f"b/{shown}")
        for line in lines:
            parts.append(line if line.endswith("\n") else f"{line}\n{_NO_NEWLINE}")
    return "".join(parts)


def write_changes(root: Path, changes: Mapping[str, tuple[str, str]],
                  encode: Callable[[str, str], bytes]) -> dict[str, str]:
    """Write each changed file's new text (``encode(path, text)`` gives its bytes); returns
    the paths that could not be written, with why."""
    failed: dict[str, str] = {}
    for path, (old, new) in changes.items():
        if old == new:
            continue
        try:
            write_inside(root / path, root, encode(path, new))
        except ReadRefused as exc:
            failed[path] = str(exc.strerror)
        except OSError as exc:
            failed[path] = f"cannot write: {exc.strerror or exc}"
    return failed
