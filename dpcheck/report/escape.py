"""Strings a report prints, made printable: file names that are not UTF-8, control characters.

A path in the model is a ``str`` as Python decodes file names (PEP 383): a byte that is not
valid UTF-8 is kept as a lone surrogate (U+DC80-U+DCFF), so the path still opens its file and
hashes to a stable fingerprint, but it cannot be written as UTF-8. What the renderers print:

* ``escape_undecodable`` — each such byte as ``\\xNN`` (JSON, SARIF messages, baselines; JSON
  escapes control characters itself);
* ``printable`` — that, and every control character but the tab as ``\\xNN`` too (the text
  report, GitHub annotations, stderr): a file named ``a\\nb.py`` or ``\\x1b[2J.py`` can neither
  forge a report line nor drive the terminal;
* ``uri_path`` — the name's bytes percent-encoded per RFC 3986 (SARIF artifact URIs);
* ``printable_result`` — a copy of a scan result with every string ``printable``.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, TypeVar
from urllib.parse import quote

T = TypeVar("T")

_SURROGATE = re.compile("[\ud800-\udfff]")
_UNPRINTABLE = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\ud800-\udfff]")


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group())
    if 0xDC80 <= code <= 0xDCFF:
        return f"\\x{code - 0xDC00:02x}"  # the undecodable byte itself
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def escape_undecodable(text: str) -> str:
    """``text`` with every byte that was not valid UTF-8 written ``\\xNN``."""
    return _SURROGATE.sub(_escaped, text)


def printable(text: str) -> str:
    """``text`` with undecodable bytes and control characters (not the tab) as ``\\xNN``."""
    return _UNPRINTABLE.sub(_escaped, text)


def uri_path(path: str) -> str:
    """A POSIX path as a percent-encoded URI reference (RFC 3986): its bytes, undecodable ones
    included, escaped where they are not unreserved characters or ``/``."""
    try:
        raw = path.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        raw = path.encode("utf-8", "surrogatepass")
    return quote(raw, safe="/")


def printable_result(value: T) -> T:
    """A copy of ``value`` (a scan result, or any of its parts) with every string, in every
    dataclass field, list, tuple and dict key or value, made ``printable``."""
    return _printable(value)  # type: ignore[no-any-return]


def _printable(value: Any) -> Any:
    if type(value) is str:
        return printable(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {
            f.name: _printable(getattr(value, f.name)) for f in dataclasses.fields(value) if f.init
        }
        return dataclasses.replace(value, **changes)
    if type(value) is list:
        return [_printable(item) for item in value]
    if type(value) is tuple:
        return tuple(_printable(item) for item in value)
    if isinstance(value, dict):
        return {_printable(key): _printable(item) for key, item in value.items()}
    return value
