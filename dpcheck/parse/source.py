"""Turning a file's bytes into checked Python source, or into the reason it is not Python.

A file that cannot be read as Python (binary, undecodable, too large, a syntax error) is not an
error of the scan: it becomes a DP001 finding and every other file is still analysed.
"""

from __future__ import annotations

import ast
import hashlib
import io
import sys
import tokenize
import warnings
from dataclasses import dataclass

MAX_FILE_BYTES = 5 * 1024 * 1024


@dataclass(frozen=True)
class SourceProblem:
    """Why a file is not analysable Python; ``line``/``column`` are 1-based."""

    message: str
    line: int = 1
    column: int = 1


def blob_id(data: bytes) -> str:
    """The git blob id of ``data``: the cache key a scan shares with ``dpcheck history``."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def is_binary(data: bytes) -> bool:
    """Whether ``data`` is a binary file (holds a NUL byte), which is never Python source."""
    return b"\0" in data


def decode_source(data: bytes, max_bytes: int = MAX_FILE_BYTES) -> str | SourceProblem:
    """Decode per PEP 263/3120 (coding cookie, else UTF-8), refusing binary and huge files
    (``data`` may be a file's first ``max_bytes + 1`` bytes only: readers stop there)."""
    if len(data) > max_bytes:
        return SourceProblem(f"file is too large to analyse (over {max_bytes} bytes)")
    if is_binary(data):
        return SourceProblem("file is binary (contains NUL bytes), not Python source")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError:
        encoding = "utf-8"  # undecodable first lines: let the decode below say where
    try:
        text = data.decode(encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        start = getattr(exc, "start", 0)
        line = data[:start].count(b"\n") + 1
        column = start - (data.rfind(b"\n", 0, start) + 1) + 1
        return SourceProblem(f"cannot decode as {encoding}: {exc}", line=line, column=column)
    return text.removeprefix("\ufeff")


def parse_python(text: str, path: str) -> ast.Module | SourceProblem:
    """Parse with CPython's own parser: the syntax check of every file, and the tree the
    summary of a candidate file is read from (so no file is parsed twice).

    The parser is given the name ``<path>``, which names no file: to quote the line of a syntax
    error CPython opens the file a parse is named after (relative to the current folder, not the
    project), which would read outside the project and shift the error's column to that file's
    text."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(text, f"<{path}>")
    except SyntaxError as exc:
        version = ".".join(map(str, sys.version_info[:2]))
        return SourceProblem(
            f"syntax error (as Python {version} parses it): {exc.msg}",
            line=exc.lineno or 1,
            column=max(exc.offset or 1, 1),
        )
    except (ValueError, RecursionError, MemoryError) as exc:
        return SourceProblem(f"cannot parse: {type(exc).__name__}: {exc}")


def is_candidate(text: str, markers: tuple[str, ...]) -> bool:
    """The cheap text pre-filter: may this file hold a DP site at all?"""
    return any(marker in text for marker in markers)
