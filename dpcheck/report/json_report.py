"""The machine-readable report: exactly the model's JSON shape, indented, one trailing newline.

Shape (``ScanResult.to_json``; keys in this order)::

    {
      "dpcheck": "<version>",
      "pipelines": [{
        "entry": str, "path": str, "cell": int | null, "line": int,
        "mechanism": "SGM" | "ASGM" | "EASGM" | "FEASGM" | "ASGM|EASGM" | "fixed-mean" | "unknown",
        "sampling": "poisson" | "shuffle" | "unknown",
        "accountant": {"name": str, "assumes": str, "span": SPAN | null,
                       "q": PARAM | null, "steps": PARAM | null, "sigma": PARAM | null},
        "params": {"<name>": PARAM, ...},          # names sorted
        "evidence": [EVIDENCE, ...],
        "library": str | null,                     # the pin as written ("opacus==1.4.0")
        "release": str | null,                     # the release that classified it ("1.4.0",
                                                   #   "1.0.0-1.6.0" when dated by the API)
        "undecided": UNDECIDED | null,             # why mechanism is "unknown"
        "release_reason": str | null,              # how the release was decided
        "incomplete": str | null                   # why the analysis stopped early (budget)
      }],
      "findings": [{
        "rule": "DPxxx", "severity": "error" | "warning" | "info",
        "path": str, "cell": int | null, "line": int, "column": int,
        "end_line": int | null, "end_column": int | null,
        "message": str, "pipeline": str | null, "evidence": [EVIDENCE, ...],
        "bound": object | null, "fingerprint": str, "context": str,
        "fix": FIX | null,                         # the fix re-analysis confirmed
        "fix_reason": str | null                   # why a rule with fixes offers none here
      }],
      "errors": [{"path": str, "message": str, "internal": bool}],
      "files_scanned": int,
      "suppressed": int,
      "suppression_issues": [...],
      "warnings": [str, ...]
    }

    SPAN     = {"path", "cell", "line", "column", "end_line", "end_column"}
    EVIDENCE = {"role", "path", "cell", "line", "column", "end_line", "end_column", "note"}
    UNDECIDED = {"reason", "path", "cell", "line", "column", "end_line", "end_column"}
    PARAM    = {"value": number | null, "source": str, "span": SPAN | null,
                "expression": str | null}
    FIX      = {"id": str, "title": str, "safety": "safe" | "unsafe", "message": str,
                "edits": [EDIT, ...], "note": str | null}
    EDIT     = SPAN + {"content": str}             # replace (line, column) up to, not
                                                   # including, (end_line, end_column)

Paths are POSIX and relative to the scan root; lines and columns are 1-based. Every object with
a ``path`` (a finding, its evidence, a span, a pipeline, an error, a suppression issue) also has
``display_path`` right after it: the same file relative to the folder dpcheck ran in, as the text
report prints it. ``display_path`` is added here, not in the model: the model's JSON is also the
cache's, which must not depend on where dpcheck ran. ``cell`` is null in a Python file; in a
Jupyter notebook it is the cell's number (counting every cell from 1, markdown included, as
Jupyter lists them) and ``line``, ``column`` and ``end_line`` count within that cell.
``fingerprint`` is stable across runs and line shifts (and across re-executions of a notebook).
``context`` longer than a code frame's line limit is cut around the column with ``…`` (the
fingerprint still hashes the whole line). Bytes of a file name that are not UTF-8 are written
``\\xNN``. The output is strict JSON: a non-finite float in a bound is written as the string
``"Infinity"``, ``"-Infinity"`` or ``"NaN"``.
"""

from __future__ import annotations

import json
from typing import Any

from dpcheck import __version__
from dpcheck.model import ScanResult
from dpcheck.report.frames import cut, window
from dpcheck.report.jsonable import strict_json
from dpcheck.report.locations import PathView

_PLAIN_KEYS = frozenset({"bound"})  # numeric payloads: no path inside


def render_json(result: ScanResult, *, paths: PathView = PathView()) -> str:
    """The documented JSON document for ``result``; ``paths`` gives the ``display_path``s."""
    document = _with_display_paths(strict_json(result.to_json(__version__)), paths)
    for finding in document["findings"]:
        finding["context"] = _bounded_context(finding["context"], finding["column"])
    return json.dumps(document, indent=2, sort_keys=False, allow_nan=False) + "\n"


def _bounded_context(context: str, column: int) -> str:
    """The anchor line's text, cut like a code frame's line when it is longer than
    ``MAX_LINE_CHARS`` (a minified file must not put a megabyte line in the report)."""
    start, end = window(len(context), column, 1)
    return cut(context, start, end)


def _with_display_paths(value: Any, paths: PathView) -> Any:
    """A copy of ``value`` where each object's string ``path`` is followed by ``display_path``."""
    if isinstance(value, list):
        return [_with_display_paths(item, paths) for item in value]
    if not isinstance(value, dict):
        return value
    out: dict[str, Any] = {}
    for key, item in value.items():
        out[key] = item if key in _PLAIN_KEYS else _with_display_paths(item, paths)
        if key == "path" and isinstance(item, str):
            out["display_path"] = paths.show(item)
    return out
