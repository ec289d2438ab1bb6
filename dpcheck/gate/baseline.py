"""The baseline file: findings a project has accepted, so a gate reports only new ones.

Format (JSON, sorted for small diffs; no line numbers, so edits that shift lines leave the file
unchanged)::

    {
      "dpcheck-baseline": 1,
      "generated-by": "dpcheck 0.1.0",
      "findings": [
        {"fingerprint": "3f2a...", "rule": "DP101", "path": "train.py", "message": "..."}
      ]
    }

Only ``fingerprint`` is used for matching; ``rule``, ``path`` and ``message`` are for the humans
reviewing the file. A fingerprint listed twice accepts two occurrences.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dpcheck.discover.confine import ReadRefused, read_named
from dpcheck.errors import DpcheckError
from dpcheck.model import Finding
from dpcheck.report.escape import escape_undecodable

FORMAT_KEY = "dpcheck-baseline"
FORMAT_VERSION = 1


class BaselineError(DpcheckError):
    """The baseline file is missing, unreadable or not a dpcheck baseline."""


@dataclass(frozen=True)
class BaselineEntry:
    """One accepted finding."""

    fingerprint: str
    rule: str
    path: str
    message: str

    def to_json(self) -> dict[str, str]:
        return {"fingerprint": self.fingerprint, "rule": self.rule, "path": self.path, "message": self.message}


@dataclass(frozen=True)
class Baseline:
    """The accepted findings of a project."""

    entries: tuple[BaselineEntry, ...]

    @classmethod
    def of(cls, findings: Sequence[Finding]) -> Baseline:
        """A baseline accepting exactly ``findings``. Matching uses the fingerprint only (which
        hashes a file name's raw bytes), so the human-facing path and message are written with
        undecodable bytes escaped and the baseline still round-trips."""
        entries = (
            BaselineEntry(
                f.fingerprint, f.rule, escape_undecodable(f.span.path), escape_undecodable(f.message)
            )
            for f in findings
        )
        return cls(tuple(sorted(entries, key=lambda e: (e.path, e.rule, e.fingerprint))))

    def counts(self) -> Counter[str]:
        """Accepted occurrences per fingerprint."""
        return Counter(e.fingerprint for e in self.entries)

    def to_json(self, version: str) -> dict[str, Any]:
        return {
            FORMAT_KEY: FORMAT_VERSION,
            "generated-by": f"dpcheck {version}",
            "findings": [e.to_json() for e in self.entries],
        }


def write_baseline(path: Path, baseline: Baseline, version: str) -> None:
    """Write ``baseline`` to ``path`` (parent folders must exist)."""
    text = json.dumps(baseline.to_json(version), indent=2, ensure_ascii=False) + "\n"
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise BaselineError(f"{path}: cannot write baseline: {exc.strerror or exc}") from None


def read_baseline(path: Path, root: Path) -> Baseline:
    """Read and validate a baseline file; every problem is a ``BaselineError`` naming ``path``.
    Inside the project at ``root`` only a regular file that stays inside is read (a baseline
    replaced by a link out of the project is an error, not a silent empty baseline)."""
    try:
        text = read_named(path, root).decode("utf-8")
    except FileNotFoundError:
        raise BaselineError(
            f"{path}: baseline file not found (create it with `dpcheck baseline write {path}`)"
        ) from None
    except ReadRefused as exc:
        raise BaselineError(f"{path}: {exc.strerror}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BaselineError(f"{path}: cannot read baseline: {exc}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BaselineError(f"{path}: not a dpcheck baseline: invalid JSON ({exc})") from None
    if not isinstance(data, dict) or FORMAT_KEY not in data:
        raise BaselineError(f"{path}: not a dpcheck baseline: no `{FORMAT_KEY}` format version")
    if data[FORMAT_KEY] != FORMAT_VERSION:
        raise BaselineError(
            f"{path}: unsupported baseline format version {data[FORMAT_KEY]!r} "
            f"(this dpcheck reads version {FORMAT_VERSION})"
        )
    findings = data.get("findings")
    if not isinstance(findings, list):
        raise BaselineError(f"{path}: `findings` must be a list")
    return Baseline(tuple(_entry(item, index, path) for index, item in enumerate(findings)))


def _entry(item: Any, index: int, path: Path) -> BaselineEntry:
    """One validated entry; ``fingerprint`` is required, the human-facing fields default to ''."""
    if not isinstance(item, dict) or not isinstance(item.get("fingerprint"), str) or not item["fingerprint"]:
        raise BaselineError(f"{path}: findings[{index}] must be an object with a `fingerprint` string")
    fields = {key: item.get(key, "") for key in ("rule", "path", "message")}
    for key, value in fields.items():
        if not isinstance(value, str):
            raise BaselineError(f"{path}: findings[{index}].{key} must be a string, got {value!r}")
    return BaselineEntry(item["fingerprint"], **fields)
