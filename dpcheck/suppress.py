"""Inline suppressions: ``# dpcheck: ignore[DP101] reason`` and their bookkeeping.

A suppression comment at the end of a code line applies to findings on that line; a comment on a
line of its own applies to the next line. Codes are rule ids, id prefixes (``DP1``) or rule
names (``unpinned-dp-library``), separated by commas.

A suppression never fails quietly. These are always reported (as warnings; ``--strict`` makes
them fail the run), because each one silences something other than what its author meant:

* ``unknown-code``: a code that names no rule (a typo suppresses nothing);
* ``empty``: ``ignore[]`` names no rule and suppresses nothing;
* ``bare-codes``: ``ignore DP101`` without brackets; it suppresses only the codes it names, but
  the comment should say ``ignore[DP101]``;
* ``unclosed``: ``ignore[DP101`` without its ``]``; the codes up to the end count.

Two more are reported only under ``--strict`` (like ruff's unused-noqa): ``blanket``, a bare
``# dpcheck: ignore`` that suppresses every rule, and ``unused``, a suppression that matched
nothing (so stale ones do not hide future findings).
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from dpcheck.model import Finding, Span

_DIRECTIVE = re.compile(r"#\s*dpcheck\s*:\s*ignore\b(?P<rest>[^#]*)", re.IGNORECASE)
_SEPARATORS = re.compile(r"[,\s]+")
_CODE_LIKE = re.compile(r"[A-Za-z]{2,}[0-9]+")

FORMS: tuple[str, ...] = ("brackets", "unclosed", "bare")
#: Issue kinds reported on every run (warnings); the others only with ``--strict``.
ALWAYS_REPORTED = frozenset({"unknown-code", "empty", "bare-codes", "unclosed"})

#: Maps a code (rule id, prefix or name) to the rule ids it names; empty when it names none.
Resolve = Callable[[str], frozenset[str]]


@dataclass(frozen=True)
class Suppression:
    """One suppression comment as written: where it is, which line it covers, its codes.

    ``form`` is how the codes were written: ``brackets`` (``ignore[DP101]``), ``unclosed``
    (``ignore[DP101`` with no ``]``) or ``bare`` (no brackets; ``codes`` is None and the text
    after ``ignore`` is in ``reason``, where :func:`resolve_suppression` looks for codes).
    """

    line: int
    column: int
    target_line: int
    codes: tuple[str, ...] | None
    reason: str
    form: str = "brackets"

    def to_json(self) -> dict[str, object]:
        return {
            "line": self.line,
            "column": self.column,
            "target_line": self.target_line,
            "codes": list(self.codes) if self.codes is not None else None,
            "reason": self.reason,
            "form": self.form,
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
            str(data.get("form", "brackets" if isinstance(codes, list) else "bare")),
        )


@dataclass(frozen=True)
class SuppressionIssue:
    """A suppression that is reported: see the module docstring for the kinds."""

    span: Span
    kind: str
    message: str

    def to_json(self) -> dict[str, object]:
        return {**self.span.to_json(), "kind": self.kind, "message": self.message}


def _split_codes(text: str) -> tuple[str, ...]:
    return tuple(code for code in _SEPARATORS.split(text) if code)


def _parse_directive(rest: str) -> tuple[tuple[str, ...] | None, str, str]:
    """``(codes, form, reason)`` from the text after ``ignore``."""
    stripped = rest.strip()
    if stripped.startswith("["):
        inner, close, after = stripped[1:].partition("]")
        return _split_codes(inner), "brackets" if close else "unclosed", after.strip()
    return None, "bare", stripped.lstrip(":=").strip()


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
        codes, form, reason = _parse_directive(match.group("rest"))
        found.append(
            Suppression(
                line=line,
                column=tok.start[1] + 1,
                target_line=line if line in code_lines else line + 1,
                codes=codes,
                reason=reason,
                form=form,
            )
        )
    return tuple(found)


@dataclass(frozen=True)
class ResolvedSuppression:
    """A suppression with its codes turned into rule ids (``rules`` None: every rule) and the
    problems found on the way."""

    suppression: Suppression
    rules: frozenset[str] | None
    written: tuple[str, ...]
    issues: tuple[tuple[str, str], ...]

    def covers(self, finding: Finding) -> bool:
        """Whether this comment suppresses ``finding`` (same file is the caller's concern)."""
        if finding.span.line != self.suppression.target_line:
            return False
        return self.rules is None or finding.rule in self.rules


def _leading_codes(reason: str, resolve: Resolve) -> tuple[str, ...]:
    """The codes a bare ``ignore`` starts with: words that name a rule or look like an id."""
    codes: list[str] = []
    for word in _SEPARATORS.split(reason):
        if not word:
            continue
        if not (resolve(word) or _CODE_LIKE.fullmatch(word)):
            break
        codes.append(word)
    return tuple(codes)


def resolve_suppression(suppression: Suppression, resolve: Resolve) -> ResolvedSuppression:
    """Turn a suppression's codes into rule ids, collecting its always-reported issues."""
    issues: list[tuple[str, str]] = []
    codes = suppression.codes
    if suppression.form == "bare":
        codes = _leading_codes(suppression.reason, resolve) or None
        if codes is None:
            return ResolvedSuppression(suppression, None, (), ())
        written = ", ".join(codes)
        issues.append(("bare-codes", f"write `# dpcheck: ignore[{written}]`: without brackets the "
                                     f"codes look like a reason; only {written} is suppressed"))
    assert codes is not None
    if suppression.form == "unclosed":  # the codes run up to the first word that is none
        codes = _leading_codes(" ".join(codes), resolve)
        issues.append(("unclosed", "`# dpcheck: ignore[` has no closing `]`"))
    if not codes:
        issues.append(("empty", "`# dpcheck: ignore[]` names no rule and suppresses nothing"))
    rules: set[str] = set()
    unknown: list[str] = []
    for code in codes:
        named = resolve(code)
        rules |= named
        if not named:
            unknown.append(code)
    if unknown:
        issues.append(("unknown-code", f"suppression names no rule: {', '.join(unknown)}"))
    return ResolvedSuppression(suppression, frozenset(rules), codes, tuple(issues))


@dataclass
class SuppressionOutcome:
    """Findings that survive, how many were suppressed, and the suppression issues."""

    kept: list[Finding] = field(default_factory=list)
    suppressed: int = 0
    issues: list[SuppressionIssue] = field(default_factory=list)


def apply_suppressions(
    findings: Iterable[Finding],
    suppressions: dict[str, Sequence[Suppression]],
    active_rules: frozenset[str],
    resolve: Resolve,
) -> SuppressionOutcome:
    """Drop suppressed findings; collect every suppression issue (the caller keeps the
    ``--strict``-only kinds, blanket and unused, when it runs strict).

    ``resolve`` maps a code to the rule ids it names (the catalog's ids and names). A suppression naming only rules that are not active in this run is not "unused": it may
    matter in a run that selects them.
    """
    resolved = {
        path: [resolve_suppression(s, resolve) for s in items] for path, items in suppressions.items()
    }
    outcome = SuppressionOutcome()
    used: set[tuple[str, int]] = set()
    for finding in findings:
        match = next((r for r in resolved.get(finding.span.path, ()) if r.covers(finding)), None)
        if match is None:
            outcome.kept.append(finding)
        else:
            outcome.suppressed += 1
            used.add((finding.span.path, match.suppression.line))
    for path, items in sorted(resolved.items()):
        for r in items:
            s = r.suppression
            span = Span(path, s.line, s.column)
            if r.rules is None:
                outcome.issues.append(
                    SuppressionIssue(span, "blanket", "blanket `# dpcheck: ignore` without rule codes")
                )
            outcome.issues.extend(SuppressionIssue(span, kind, message) for kind, message in r.issues)
            if (path, s.line) in used:
                continue
            if r.rules is None or r.rules & active_rules:
                codes = ",".join(r.written) if r.rules is not None else "all rules"
                # the line it covers, said without a number: a notebook's lines are numbered in
                # its cell where the report shows them, not in the module the analysis reads
                covered = "its own line" if s.target_line == s.line else "the line below it"
                outcome.issues.append(SuppressionIssue(
                    span, "unused", f"unused suppression ({codes}): no finding on {covered}"))
    return outcome
