"""Turn a finding of a scan's JSON report into an audit setting.

The scan JSON (``dpcheck scan --format json``, shape of ``ScanResult.to_json``) holds
``findings`` (each with ``fingerprint``, ``rule``, ``path``, ``line`` and ``pipeline``, the
``entry`` of its pipeline) and ``pipelines`` (each with ``entry``, ``mechanism`` and ``params``
``{name: {"value": ...}}``). The mechanism and σ, q, C, n come from the pipeline; command-line
values override them. The dataset size is *not* taken from the code: an audit is tightest on
tiny datasets, so the N where the leak is largest is picked (:func:`leakiest_small_n`).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from scipy.stats import binom

from dpcheck.audit.setting import AUDIT_MECHANISMS, AuditSetting, check_rate
from dpcheck.errors import DpcheckError, ParameterError

MIN_PREFIX = 6
MAX_CANDIDATE_N = 10_000
DEFAULT_CLIP = 1.0
INTEGER_PARAMS = frozenset({"dim", "N", "batch_size"})


@dataclass(frozen=True)
class Overrides:
    """Values given on the command line; ``None`` means "take it from the finding"."""

    N: int | None = None
    q: float | None = None
    sigma: float | None = None
    clip: float | None = None
    dim: int | None = None


def _read_report(scan_json: Path) -> Any:
    """The parsed JSON of ``--scan-json``, or an error naming the file."""
    try:
        return json.loads(scan_json.read_text(encoding="utf-8"))
    except OSError as exc:
        raise DpcheckError(f"--scan-json {scan_json}: cannot read it ({exc.strerror})") from exc
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise DpcheckError(f"--scan-json {scan_json}: not valid JSON ({exc})") from exc


def _objects(scan_json: Path, report: dict[str, Any], key: str) -> list[dict[str, Any]]:
    """``report[key]``, which must be a list of JSON objects."""
    items = report.get(key)
    if not isinstance(items, list) or not all(isinstance(item, dict) for item in items):
        raise DpcheckError(
            f"--scan-json {scan_json}: '{key}' must be a list of objects, got "
            f"{json.dumps(items)[:60]}; is it a `dpcheck scan --format json` report?"
        )
    return items


def _finite_number(value: object) -> bool:
    """A JSON number that converts to a finite float (not a bool, not ±Infinity or NaN)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def _check_params(scan_json: Path, index: int, pipeline: dict[str, Any]) -> None:
    """Each ``params`` entry must be an object whose ``value`` is a finite number or null, and
    a whole number for the counts in INTEGER_PARAMS."""
    params = pipeline.get("params", {})
    where = f"--scan-json {scan_json}: pipelines[{index}].params"
    if not isinstance(params, dict):
        raise DpcheckError(f"{where} must be an object, got {json.dumps(params)[:60]}")
    for name, entry in params.items():
        value = entry.get("value") if isinstance(entry, dict) else entry
        if not isinstance(entry, dict) or not (value is None or _finite_number(value)):
            raise DpcheckError(
                f"{where}.{name} must be an object with a finite numeric 'value' (or null), "
                f"got {json.dumps(entry)[:60]}"
            )
        if name in INTEGER_PARAMS and isinstance(value, float) and not value.is_integer():
            raise DpcheckError(f"{where}.{name}.value must be a whole number, got {value!r}")


def load_finding(scan_json: Path, fingerprint: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The finding whose fingerprint is (or starts with) ``fingerprint``, and its pipeline.

    The report's shape is checked on the way, so a malformed file is named with its bad key."""
    report = _read_report(scan_json)
    if not isinstance(report, dict):
        raise DpcheckError(
            f"--scan-json {scan_json}: not a JSON object; is it a scan JSON report?"
        )
    findings = _objects(scan_json, report, "findings")
    all_pipelines = _objects(scan_json, report, "pipelines")
    if len(fingerprint) < MIN_PREFIX:
        raise DpcheckError(f"--finding {fingerprint!r}: give at least {MIN_PREFIX} characters")
    matches = [f for f in findings if str(f.get("fingerprint", "")).startswith(fingerprint)]
    if len(matches) != 1:
        problem = "matches no finding" if not matches else f"matches {len(matches)} findings"
        raise DpcheckError(f"--finding {fingerprint}: {problem} in {scan_json}")
    finding = matches[0]
    pipelines = [
        (index, p) for index, p in enumerate(all_pipelines)
        if p.get("entry") == finding.get("pipeline")
    ]
    same_file = [(index, p) for index, p in pipelines if p.get("path") == finding.get("path")]
    chosen = same_file or pipelines
    if not chosen:
        raise DpcheckError(
            f"--finding {fingerprint}: its pipeline {finding.get('pipeline')!r} "
            f"is not in {scan_json}"
        )
    index, pipeline = chosen[0]
    _check_params(scan_json, index, pipeline)
    return finding, pipeline


def _param(pipeline: dict[str, Any], name: str) -> float | None:
    """The value of a parameter already checked by :func:`_check_params`, if resolved."""
    entry = pipeline.get("params", {}).get(name)
    value = entry.get("value") if isinstance(entry, dict) else None
    return float(value) if isinstance(value, (int, float)) else None


def _leak_proxy(mechanism: str, n: int, q: float) -> float | None:
    """E_k |log d_N(k)/d_{N+1}(k+1)|, k ~ Bin(N, q): the variance-ratio gap between the worlds when
    the canary is sampled, which drives the leak that grows with the dimension
    (docs/theory.md#worst-case-pair, docs/theory.md#audit-setting). ``None`` where the mechanism
    cannot run at that N."""
    try:
        setting = AuditSetting(mechanism, n, q, 1.0, 1.0, 1)
    except ParameterError:
        return None
    batch = np.arange(n + 1)
    ratio = setting.divisors(n)[batch] / setting.divisors(n + 1)[batch + 1]
    return float(np.sum(binom.pmf(batch, n, q) * np.abs(np.log(ratio))))


def leakiest_small_n(mechanism: str, q: float) -> tuple[int, float, int]:
    """(N, its leak proxy, the largest N searched): the smallest N maximizing the proxy."""
    limit = min(MAX_CANDIDATE_N, max(8, math.ceil(2.0 / q) + 1))
    best_n, best = 0, -1.0
    for n in range(1, limit + 1):
        proxy = _leak_proxy(mechanism, n, q)
        if proxy is not None and proxy > best:
            best_n, best = n, proxy
    if best_n == 0:
        raise ParameterError(f"{mechanism} at q={q} cannot run on any dataset of size <= {limit}")
    return best_n, best, limit


def _required(value: float | None, name: str, fingerprint: str) -> float:
    if value is None:
        raise DpcheckError(
            f"--finding {fingerprint}: the scan did not resolve {name}; give --{name}"
        )
    return value


def setting_from_finding(
    finding: dict[str, Any], pipeline: dict[str, Any], overrides: Overrides
) -> tuple[AuditSetting, list[str]]:
    """The audit setting for a finding, and notes saying where each choice came from."""
    fingerprint = str(finding.get("fingerprint"))
    mechanism = str(pipeline.get("mechanism"))
    if mechanism not in AUDIT_MECHANISMS:
        raise DpcheckError(
            f"--finding {fingerprint}: its pipeline's update is {mechanism!r}; only "
            f"{', '.join(AUDIT_MECHANISMS)} can be audited"
        )
    q = overrides.q if overrides.q is not None else _param(pipeline, "q")
    if q is None:
        batch, size = _param(pipeline, "batch_size"), _param(pipeline, "N")
        q = batch / size if batch is not None and size else None
    q = _required(q, "q", fingerprint)
    check_rate(q)
    sigma = _required(
        overrides.sigma if overrides.sigma is not None else _param(pipeline, "sigma"),
        "sigma", fingerprint,
    )
    dim = int(_required(
        overrides.dim if overrides.dim is not None else _param(pipeline, "dim"), "dim", fingerprint
    ))
    notes = [
        f"finding {fingerprint} ({finding.get('rule')} at {finding.get('path')}:"
        f"{finding.get('line')}), pipeline {pipeline.get('entry')}: {mechanism}"
    ]
    clip = overrides.clip if overrides.clip is not None else _param(pipeline, "clip")
    if clip is None:
        clip = DEFAULT_CLIP
        notes.append(
            f"clip not resolved by the scan; C={DEFAULT_CLIP} used (the leak does not depend on C)"
        )
    if overrides.N is not None:
        n_data = overrides.N
        notes.append(f"N={n_data} as given by --N")
    else:
        n_data, proxy, limit = leakiest_small_n(mechanism, q)
        notes.append(
            f"audited at |D|={n_data}, |D'|={n_data + 1}: of N=1..{limit}, the small dataset where "
            f"the divisors of D and D' differ most (E|log d_N/d_N+1| = {proxy:.4f}), so where the "
            "leak is largest; the training set's own size is not used"
        )
    return AuditSetting(mechanism, int(n_data), q, sigma, clip, dim), notes
