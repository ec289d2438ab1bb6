"""What ``--diff`` prints and what ``--fix`` writes: the fixed files, nothing else.

The diff is a unified diff per file, with the path as the text report shows it (relative to the
current folder, so ``git apply`` takes it there; absolute for a file outside it) under git's
``a/`` and ``b/`` prefixes, each line as the file has it (CRLF kept), and git's marker for a last
line without a newline. Writing goes through ``write_inside``: only a regular file whose real path lies in
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
        before, after = (shown, shown) if shown.startswith("/") else (f"a/{shown}", f"b/{shown}")
        lines = difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                     fromfile=before, tofile=after)
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
