"""Dropping findings that are already known (present at a git ref, or accepted in a baseline).

Known findings are a multiset of fingerprints: if a fingerprint was known twice and now occurs
three times, one occurrence is new. Fingerprints ignore line numbers (see
``Finding.fingerprint``), so code moving up or down does not make an old finding look new.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import replace

from dpcheck.model import Finding, ScanResult


def fingerprint_counts(findings: Iterable[Finding]) -> Counter[str]:
    """How often each fingerprint occurs among ``findings``."""
    return Counter(f.fingerprint for f in findings)


def drop_known(result: ScanResult, known: Mapping[str, int]) -> tuple[ScanResult, int]:
    """``result`` without the findings matched by ``known`` (fingerprint -> occurrences), and
    how many were dropped. Among equal fingerprints the first in report order are matched."""
    remaining = Counter(known)
    kept: list[Finding] = []
    for finding in result.findings:
        if remaining[finding.fingerprint] > 0:
            remaining[finding.fingerprint] -= 1
        else:
            kept.append(finding)
    return replace(result, findings=kept), len(result.findings) - len(kept)
