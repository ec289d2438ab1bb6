"""Turn result data into strict JSON values (what ``json.dumps(..., allow_nan=False)`` accepts).

Bounds come from the numeric engine and may hold numpy scalars or arrays and non-finite floats
(an epsilon of ``inf`` means "no guarantee"). Strict JSON has no infinity, so non-finite floats
become the strings ``"Infinity"``, ``"-Infinity"`` and ``"NaN"`` (the spellings JavaScript and
Python use), which keeps the information and the document parseable by every JSON reader. Strict JSON is
also valid Unicode: a file name's bytes that are not UTF-8 are written ``\\xNN``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from dpcheck.report.escape import escape_undecodable

_NON_FINITE: dict[str, str] = {"inf": "Infinity", "-inf": "-Infinity", "nan": "NaN"}


def strict_json(value: Any) -> Any:
    """A copy of ``value`` made of dict/list/str/int/float/bool/None with only finite floats
    and only strings that encode as UTF-8 (a file name's undecodable bytes written ``\\xNN``)."""
    if isinstance(value, str):
        return escape_undecodable(value)
    if isinstance(value, Mapping):
        return {escape_undecodable(str(key)): strict_json(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [strict_json(item) for item in value]
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        return strict_json(value.tolist())
    if isinstance(value, float) and not math.isfinite(value):
        return _NON_FINITE[repr(float(value))]
    return value
