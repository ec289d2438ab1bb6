"""The machine-readable report: exactly the model's JSON shape, indented, one trailing newline.

Shape (``ScanResult.to_json``; keys in this order)::

    {
      "dpcheck": "<version>",
      "pipelines": [{
        "entry": str, "path": str, "line": int,
        "mechanism": "SGM" | "ASGM" | "EASGM" | "FEASGM" | "fixed-mean" | "unknown",
        "sampling": "poisson" | "shuffle" | "unknown",
        "accountant": {"name": str, "assumes": str, "span": SPAN | null,
                       "q": PARAM | null, "steps": PARAM | null, "sigma": PARAM | null},
        "params": {"<name>": PARAM, ...},          # names sorted
        "evidence": [EVIDENCE, ...],
        "library": str | null,                     # the pin as written ("opacus==1.4.0")
        "release": str | null                      # the release that classified it ("1.4.0",
      }],                                          #   "1.0.0-1.6.0" when dated by the API)
      "findings": [{
        "rule": "DPxxx", "severity": "error" | "warning" | "info",
        "path": str, "line": int, "column": int, "end_line": int | null, "end_column": int | null,
        "message": str, "pipeline": str | null, "evidence": [EVIDENCE, ...],
        "bound": object | null, "fingerprint": str, "context": str
      }],
      "errors": [{"path": str, "message": str, "internal": bool}],
      "files_scanned": int,
      "suppressed": int,
      "suppression_issues": [...]
    }

    SPAN     = {"path", "line", "column", "end_line", "end_column"}
    EVIDENCE = {"role", "path", "line", "column", "end_line", "end_column", "note"}
    PARAM    = {"value": number | null, "source": str, "span": SPAN | null,
                "expression": str | null}

Paths are POSIX and relative to the scan root; lines and columns are 1-based. ``fingerprint`` is
stable across runs and line shifts. ``context`` longer than a code frame's line limit is cut
around the column with ``…`` (the fingerprint still hashes the whole line). Bytes of a file name
that are not UTF-8 are written ``\\xNN``. The output is strict JSON: a non-finite float in a bound is
written as the string ``"Infinity"``, ``"-Infinity"`` or ``"NaN"``.
"""

from __future__ import annotations

import json

from dpcheck import __version__
from dpcheck.model import ScanResult
from dpcheck.report.frames import cut, window
from dpcheck.report.jsonable import strict_json


def render_json(result: ScanResult) -> str:
    """The documented JSON document for ``result``."""
    document = strict_json(result.to_json(__version__))
    for finding in document["findings"]:
        finding["context"] = _bounded_context(finding["context"], finding["column"])
    return json.dumps(document, indent=2, sort_keys=False, allow_nan=False) + "\n"


def _bounded_context(context: str, column: int) -> str:
    """The anchor line's text, cut like a code frame's line when it is longer than
    ``MAX_LINE_CHARS`` (a minified file must not put a megabyte line in the report)."""
    start, end = window(len(context), column, 1)
    return cut(context, start, end)
