"""The known-findings filter counts occurrences: a repeated finding beyond the known count is new."""

from __future__ import annotations

from collections import Counter

from dpcheck.gate.known import drop_known, fingerprint_counts
from dpcheck.model import Finding, ScanResult, Severity, Span


def _finding(line: int, context: str, rule: str = "DP101") -> Finding:
    return Finding(rule, Severity.ERROR, Span("train.py", line), "msg", "train.py", context=context)


def test_equal_anchor_text_on_other_lines_shares_a_fingerprint_and_is_counted() -> None:
    first, second = _finding(10, "x = a / len(b)"), _finding(30, "x  =  a / len(b)")
    assert first.fingerprint == second.fingerprint
    result = ScanResult(findings=[first, second, _finding(40, "y = 1")])
    kept, dropped = drop_known(result, Counter({first.fingerprint: 1}))
    assert dropped == 1
    assert [f.span.line for f in kept.findings] == [30, 40]


def test_unknown_fingerprints_and_empty_known_keep_everything() -> None:
    result = ScanResult(findings=[_finding(10, "x = 1"), _finding(11, "x = 1", rule="DP102")])
    kept, dropped = drop_known(result, Counter({"0" * 20: 3}))
    assert dropped == 0 and kept.findings == result.findings
    assert fingerprint_counts(result.findings) == Counter({f.fingerprint: 1 for f in result.findings})
