"""Inline suppressions: placement, codes, blanket and unused bookkeeping."""

import pytest

from dpcheck.catalog import load_catalog, rule_ids
from dpcheck.model import Finding, Severity, Span
from dpcheck.suppress import Resolve, apply_suppressions, find_suppressions


def prefix_resolver(rule_ids: list[str] | frozenset[str]) -> Resolve:
    """Codes as id prefixes of ``rule_ids`` only (no names): a catalog of just these rules."""

    def resolve(code: str) -> frozenset[str]:
        prefix = code.strip().upper()
        return frozenset(i for i in rule_ids if prefix and i.startswith(prefix))

    return resolve

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
    outcome = apply_suppressions(findings, sups, active, prefix_resolver(active))
    assert [(f.rule, f.span.line) for f in outcome.kept] == [("DP103", 4)]
    assert outcome.suppressed == 3
    kinds = sorted((i.kind, i.span.line) for i in outcome.issues)
    assert kinds == [("blanket", 5), ("unused", 7)]


def test_suppression_of_inactive_rule_is_not_unused() -> None:
    sups = {"t.py": find_suppressions("y = 2  # dpcheck: ignore[DP104]\n")}
    outcome = apply_suppressions([], sups, frozenset({"DP101"}), prefix_resolver(["DP101", "DP104"]))
    assert outcome.issues == []


def test_unknown_codes_are_reported() -> None:
    sups = {"t.py": find_suppressions("x = 1  # dpcheck: ignore[DP999, DP101] typo\n")}
    findings = [_finding("DP101", 1)]
    known = frozenset({"DP001", "DP101", "DP102"})
    outcome = apply_suppressions(findings, sups, known, prefix_resolver(known))
    assert outcome.suppressed == 1
    assert [(i.kind, i.message) for i in outcome.issues] == [
        ("unknown-code", "suppression names no rule: DP999")
    ]


CATALOG = load_catalog()
ACTIVE = frozenset(CATALOG.ids())


def _outcome(source: str, *findings: Finding):  # type: ignore[no-untyped-def]
    sups = {"t.py": find_suppressions(source)}
    return apply_suppressions(list(findings), sups, ACTIVE, lambda code: rule_ids(CATALOG, code))


@pytest.mark.parametrize(
    ("comment", "suppressed", "kinds"),
    [
        # rule names are accepted wherever codes are
        ("# dpcheck: ignore[normalized-update-accounted-as-sgm] audited", 1, []),
        ("# dpcheck: ignore[dp1] prefix, any case", 1, []),
        # a typo suppresses nothing, and says so
        ("# dpcheck: ignore[DP999]", 0, ["unknown-code"]),
        ("# dpcheck: ignore[unpinned-dp-libary]", 0, ["unknown-code"]),
        # empty brackets name no rule
        ("# dpcheck: ignore[]", 0, ["empty"]),
        # without brackets: only the named codes, never every rule, with a warning
        ("# dpcheck: ignore DP101 the divisor is a constant", 1, ["bare-codes"]),
        ("# dpcheck: ignore DP102", 0, ["bare-codes", "unused"]),
        ("# dpcheck: ignore unpinned-dp-library, DP102", 0, ["bare-codes", "unused"]),
        ("# dpcheck: ignore DP9", 0, ["bare-codes", "unknown-code"]),
        # an unclosed bracket still names its codes
        ("# dpcheck: ignore[DP101 reason", 1, ["unclosed"]),
        # a reason that is not a code is a blanket suppression (reported under --strict)
        ("# dpcheck: ignore generated file", 1, ["blanket"]),
    ],
)
def test_malformed_suppressions_never_fail_quietly(comment: str, suppressed: int, kinds: list[str]) -> None:
    outcome = _outcome(f"x = noisy / n  {comment}\n", _finding("DP101", 1))
    assert outcome.suppressed == suppressed
    assert [i.kind for i in outcome.issues] == kinds


def test_bare_codes_message_shows_the_bracketed_form() -> None:
    outcome = _outcome("x = 1  # dpcheck: ignore DP101, DP102 reason\n", _finding("DP101", 1))
    (issue,) = outcome.issues
    assert "write `# dpcheck: ignore[DP101, DP102]`" in issue.message
