"""Inline suppressions: ``# dpcheck: ignore[DP101] reason`` and their bookkeeping.

A suppression comment at the end of a code line applies to findings on that line; a comment on a
line of its own applies to the next line. ``# dpcheck: ignore`` without codes suppresses every
rule but is reported under ``--strict``, as is a suppression that matched nothing (like ruff's
unused-noqa), so that stale suppressions do not hide future findings.
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from dpcheck.model import Finding, Span

_DIRECTIVE = re.compile(
    r"#\s*dpcheck:\s*ignore(?:\[(?P<codes>[^\]]*)\])?(?P<reason>[^#]*)", re.IGNORECASE
)


@dataclass(frozen=True)
class Suppression:
    """One suppression comment: where it is, which line it covers, which codes (None = all)."""

    line: int
    column: int
    target_line: int
    codes: tuple[str, ...] | None
    reason: str

    def to_json(self) -> dict[str, object]:
        return {
            "line": self.line,
            "column": self.column,
            "target_line": self.target_line,
            "codes": list(self.codes) if self.codes is not None else None,
            "reason": self.reason,
        }

    @classmethod
    def from_json(cls, data: dict[str, object]) -> Suppression:
        codes = data["codes"]
        return cls(
            int(data["line"]),  # type: ignore[arg-type]
            int(data["column"]),  # type: ignore[arg-type]
            int(data["target_line"]),  # type: ignore[arg-type]
            tuple(codes) if isinstance(codes, list) else None,
            str(data["reason"]),
        )

    def covers(self, finding: Finding) -> bool:
        """Whether this comment suppresses ``finding`` (same file is the caller's concern)."""
        if finding.span.line != self.target_line:
            return False
        return self.codes is None or any(finding.rule.startswith(c) for c in self.codes)


@dataclass(frozen=True)
class SuppressionIssue:
    """A suppression that ``--strict`` reports: blanket (no codes) or unused."""

    span: Span
    kind: str
    message: str

    def to_json(self) -> dict[str, object]:
        return {**self.span.to_json(), "kind": self.kind, "message": self.message}


def find_suppressions(text: str) -> tuple[Suppression, ...]:
    """All suppression comments of a source file, read from its real comment tokens."""
    if "dpcheck" not in text:
        return ()
    found: list[Suppression] = []
    tokens: list[tokenize.TokenInfo] = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            tokens.append(token)
    except (tokenize.TokenError, SyntaxError):
        pass  # a broken file keeps the suppressions before the break (they may silence DP001)
    code_lines = {
        t.start[0]
        for t in tokens
        if t.type not in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT,
                          tokenize.DEDENT, tokenize.ENDMARKER)
    }
    for tok in tokens:
        if tok.type != tokenize.COMMENT:
            continue
        match = _DIRECTIVE.search(tok.string)
        if not match:
            continue
        line = tok.start[0]
        codes_text = match.group("codes")
        codes = (
            tuple(c.strip().upper() for c in codes_text.split(",") if c.strip())
            if codes_text is not None
            else None
        )
        found.append(
            Suppression(
                line=line,
                column=tok.start[1] + 1,
                target_line=line if line in code_lines else line + 1,
                codes=codes,
                reason=match.group("reason").strip(),
            )
        )
    return tuple(found)


@dataclass
class SuppressionOutcome:
    """Findings that survive, how many were suppressed, and the ``--strict`` issues."""

    kept: list[Finding] = field(default_factory=list)
    suppressed: int = 0
    issues: list[SuppressionIssue] = field(default_factory=list)


def apply_suppressions(
    findings: Iterable[Finding],
    suppressions: dict[str, Sequence[Suppression]],
    active_rules: frozenset[str],
    known_rules: frozenset[str] = frozenset(),
) -> SuppressionOutcome:
    """Drop suppressed findings; collect blanket, unknown-code and unused suppressions.

    A suppression naming only rules that are not active in this run is not "unused": it may
    matter in a run that selects them. A code that names no rule of the catalog (``known_rules``)
    is reported, since a typo there silently suppresses nothing.
    """
    outcome = SuppressionOutcome()
    used: set[tuple[str, int]] = set()
    for finding in findings:
        match = next(
            (s for s in suppressions.get(finding.span.path, ()) if s.covers(finding)), None
        )
        if match is None:
            outcome.kept.append(finding)
        else:
            outcome.suppressed += 1
            used.add((finding.span.path, match.line))
    for path, items in sorted(suppressions.items()):
        for s in items:
            span = Span(path, s.line, s.column)
            if s.codes is None:
                outcome.issues.append(
                    SuppressionIssue(span, "blanket", "blanket `# dpcheck: ignore` without rule codes")
                )
            unknown = [
                code for code in s.codes or () if not any(r.startswith(code) for r in known_rules)
            ]
            if known_rules and unknown:
                outcome.issues.append(
                    SuppressionIssue(span, "unknown-code", f"suppression names no rule: {', '.join(unknown)}")
                )
            if (path, s.line) in used:
                continue
            relevant = s.codes is None or any(
                rule.startswith(code) for code in s.codes for rule in active_rules
            )
            if relevant:
                codes = ",".join(s.codes) if s.codes else "all rules"
                outcome.issues.append(
                    SuppressionIssue(span, "unused", f"unused suppression ({codes}): no finding on line {s.target_line}")
                )
    return outcome
