"""Inline suppressions: placement, codes, blanket and unused bookkeeping."""

from dpcheck.model import Finding, Severity, Span
from dpcheck.suppress import apply_suppressions, find_suppressions

SOURCE = """\
import torch
noisy = s + noise  # dpcheck: ignore[DP101] divisor is a constant, see docs
# dpcheck: ignore[DP102] audited shuffling
loader = DataLoader(ds, shuffle=True)
x = 1  # dpcheck: ignore
text = "# dpcheck: ignore[DP999] not a comment"
y = 2  # dpcheck: ignore[DP104]
"""


def _finding(rule: str, line: int) -> Finding:
    return Finding(rule, Severity.ERROR, Span("t.py", line, 1), "m")


def test_comment_placement_and_codes() -> None:
    found = find_suppressions(SOURCE)
    assert [(s.line, s.target_line, s.codes) for s in found] == [
        (2, 2, ("DP101",)),
        (3, 4, ("DP102",)),
        (5, 5, None),
        (7, 7, ("DP104",)),
    ]
    assert found[0].reason == "divisor is a constant, see docs"


def test_apply_keeps_unmatched_and_reports_issues() -> None:
    sups = {"t.py": find_suppressions(SOURCE)}
    findings = [_finding("DP101", 2), _finding("DP102", 4), _finding("DP103", 4), _finding("DP105", 5)]
    active = frozenset({"DP101", "DP102", "DP103", "DP104", "DP105"})
    outcome = apply_suppressions(findings, sups, active)
    assert [(f.rule, f.span.line) for f in outcome.kept] == [("DP103", 4)]
    assert outcome.suppressed == 3
    kinds = sorted((i.kind, i.span.line) for i in outcome.issues)
    assert kinds == [("blanket", 5), ("unused", 7)]


def test_suppression_of_inactive_rule_is_not_unused() -> None:
    sups = {"t.py": find_suppressions("y = 2  # dpcheck: ignore[DP104]\n")}
    outcome = apply_suppressions([], sups, frozenset({"DP101"}))
    assert outcome.issues == []


def test_unknown_codes_are_reported() -> None:
    sups = {"t.py": find_suppressions("x = 1  # dpcheck: ignore[DP999, DP101] typo\n")}
    findings = [_finding("DP101", 1)]
    known = frozenset({"DP001", "DP101", "DP102"})
    outcome = apply_suppressions(findings, sups, known, known)
    assert outcome.suppressed == 1
    assert [(i.kind, i.message) for i in outcome.issues] == [
        ("unknown-code", "suppression names no rule: DP999")
    ]
