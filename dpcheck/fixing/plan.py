"""Propose the fixes of the reported findings and keep those the re-analysis confirms.

A proposal counts only when scanning the project again with its edits in memory (the same
settings; nothing is written) shows all of this:

* the finding is gone: no finding of its rule on its pipeline and file any more;
* nothing at or above its severity is new (a finding whose rule, pipeline and file were not
  reported before, or are reported more severely now), and no file stopped parsing (DP001) and
  no scan error appeared, at any severity;
* the fix's own check holds (the update is SGM now, the accountant is given the code's q ...).

The first proposals of all findings are verified together, in one re-scan; only when that
fails is each proposal verified on its own, one re-scan each (so a project with several fixable
findings usually costs one re-scan). Fixes applied together (``--fix``) are verified together
too: findings of different pipelines can share a file, a helper or a requirement line. When the
set fails, fixes are added one at a time and each one that breaks the others is left out, with
the reason.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath

from dpcheck.discover.confine import overlaid, read_inside
from dpcheck.discover.files import is_dependency_file
from dpcheck.discover.installed import InstalledLibrary, find_installed
from dpcheck.engine import Settings
from dpcheck.errors import internal_message
from dpcheck.gate import scan_named
from dpcheck.model import Finding, FindingFix, Pipeline, ScanResult
from dpcheck.parse.source import MAX_FILE_BYTES, is_binary
from dpcheck.rules.fixes.fix import Edit, FixSite, NoFix, Outcome, Proposal, apply_edits
from dpcheck.rules.fixes.registry import RegisteredFix, fix_registry

_BOM = b"\xef\xbb\xbf"
#: The file rule whose new findings always block a fix: an edit must never break parsing.
UNPARSABLE = "DP001"


class ProjectTexts:
    """Project files as fixes read them: UTF-8 text read inside the project (a BOM set aside and
    put back when the text is encoded again), cached per path."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._texts: dict[str, tuple[str, bool] | None] = {}

    def text(self, path: str) -> str | None:
        """The text of the root-relative ``path`` (None: unreadable, binary, not UTF-8)."""
        read = self._read(path)
        return read[0] if read is not None else None

    def encoded(self, path: str, text: str) -> bytes:
        """``text`` as the bytes of ``path``: UTF-8, with the BOM the file had."""
        read = self._read(path)
        return (_BOM if read is not None and read[1] else b"") + text.encode("utf-8")

    def _read(self, path: str) -> tuple[str, bool] | None:
        if path not in self._texts:
            self._texts[path] = _decoded(self.root, path)
        return self._texts[path]


def _decoded(root: Path, path: str) -> tuple[str, bool] | None:
    try:
        data = read_inside(root / path, root, MAX_FILE_BYTES)
    except OSError:
        return None
    if len(data) > MAX_FILE_BYTES or is_binary(data):
        return None
    bom = data.startswith(_BOM)
    try:
        return data[len(_BOM) if bom else 0:].decode("utf-8"), bom
    except UnicodeDecodeError:
        return None


@dataclass(frozen=True)
class Candidate:
    """One proposal of one fix for one finding."""

    finding: Finding
    fix: RegisteredFix
    proposal: Proposal


@dataclass(frozen=True)
class FixOutcome:
    """What became of a finding whose rule has fixes: the verified ``candidate`` (None: no fix)
    with its ``note``, or the ``reason`` there is none."""

    finding: Finding
    candidate: Candidate | None = None
    reason: str | None = None
    note: str | None = None

    def enabled(self, unsafe: bool) -> bool:
        """Whether ``--fix`` applies it (an unsafe fix only with ``--unsafe-fixes``)."""
        return self.candidate is not None and (unsafe or self.candidate.fix.entry.safety == "safe")

    def fix(self) -> FindingFix | None:
        """The fix as the finding carries it in reports."""
        if self.candidate is None:
            return None
        entry, proposal = self.candidate.fix.entry, self.candidate.proposal
        return FindingFix(entry.id, entry.title, entry.safety, proposal.message,
                          tuple(e.text_edit for e in proposal.edits), self.note)


def _key(finding: Finding) -> tuple[str, str, int, int]:
    return finding.fingerprint, finding.rule, finding.span.line, finding.span.column


@dataclass
class FixPlan:
    """The fix outcomes of one scan's findings; ``applied`` are those ``--fix`` applies,
    verified together (``_settle``), and ``left_out`` the enabled ones that did not hold with
    the others, with why."""

    outcomes: list[FixOutcome]
    texts: ProjectTexts
    unsafe: bool
    applied: list[FixOutcome] = field(default_factory=list)
    left_out: list[FixOutcome] = field(default_factory=list)

    def annotate(self, findings: Iterable[Finding]) -> list[Finding]:
        """``findings`` with their fix (or why none) attached."""
        by_key = {_key(o.finding): o for o in self.outcomes}
        annotated = []
        for finding in findings:
            outcome = by_key.get(_key(finding))
            annotated.append(finding if outcome is None else replace(
                finding, fix=outcome.fix(), fix_reason=outcome.reason))
        return annotated

    def changes(self) -> dict[str, tuple[str, str]]:
        """Root-relative path -> (text now, text after the applied fixes)."""
        return _changes([o.candidate for o in self.applied if o.candidate], self.texts)


def _changes(candidates: Sequence[Candidate], texts: ProjectTexts) -> dict[str, tuple[str, str]]:
    by_path: dict[str, list[Edit]] = {}
    for candidate in candidates:
        for edit in candidate.proposal.edits:
            edits = by_path.setdefault(edit.path, [])
            if edit not in edits:
                edits.append(edit)
    changed = {}
    for path, edits in sorted(by_path.items()):
        text = texts.text(path)
        if text is not None:
            changed[path] = (text, apply_edits(text, edits))
    return changed


def _overlapping(candidates: Sequence[Candidate]) -> bool:
    """Whether two different edits of one file touch the same text."""
    edits = sorted({e for c in candidates for e in c.proposal.edits},
                   key=lambda e: (e.path, e.start, e.end))
    return any(a.path == b.path and (b.start < a.end or a.start == b.start)
               for a, b in zip(edits, edits[1:]))


class Verifier:
    """Scans the project with edits in memory and judges proposals against the scan before."""

    def __init__(self, settings: Settings, before: ScanResult, texts: ProjectTexts) -> None:
        self.settings = settings
        self.before = before
        self.texts = texts
        self._scans: dict[tuple[tuple[str, str], ...], ScanResult] = {}
        self._severity: dict[tuple[str, str | None, str], int] = {}
        for finding in before.findings:
            key = _identity(finding)
            self._severity[key] = max(self._severity.get(key, -1), finding.severity.rank)

    def after(self, candidates: Sequence[Candidate]) -> ScanResult | str:
        """The scan of the project with every candidate's edits, or why they cannot be made."""
        if _overlapping(candidates):
            return "its edit overlaps the edit of another fix (run --fix again after this one)"
        changes = _changes(candidates, self.texts)
        if len(changes) != len({e.path for c in candidates for e in c.proposal.edits}):
            return "a file it edits cannot be read back as UTF-8 text"
        files = {self.settings.root / path: self.texts.encoded(path, new)
                 for path, (_, new) in changes.items()}
        key = tuple(sorted((path, hashlib.sha256(new.encode("utf-8", "surrogatepass")).hexdigest())
                           for path, (_, new) in changes.items()))
        if key not in self._scans:
            try:
                with overlaid(files):
                    self._scans[key] = scan_named(self._around(changes))
            except Exception as exc:  # noqa: BLE001 - a failed re-analysis refuses the fix
                return internal_message("re-analysing the project with the fix", exc)
        return self._scans[key]

    def _around(self, changes: Mapping[str, object]) -> Settings:
        """The settings of the re-analysis of ``changes``: when every edited file is a source
        file of a whole-project scan, only its import neighbourhood is linked (what an edit of
        it can change), with all of that neighbourhood's findings reported; otherwise (a
        dependency file such as ``setup.py``, a scan of named files) the scan as it was."""
        options = self.settings.options
        if len(options.paths) != 1 or not options.paths[0].is_dir() \
                or not all(path.endswith((".py", ".ipynb")) and not is_dependency_file(PurePosixPath(path))
                           for path in changes):
            return self.settings
        return replace(self.settings, options=replace(options, linked_around=tuple(sorted(changes))))

    def judge(self, candidates: Sequence[Candidate]) -> str | None:
        """Why the candidates, applied together, do not fix their findings (None: they do)."""
        after = self.after(candidates)
        if isinstance(after, str):
            return after
        new = self._new(after, min(c.finding.severity.rank for c in candidates))
        if new:
            return "it would bring " + "; ".join(_described(f) for f in new)
        errors = self._new_errors(after)
        if errors:
            return errors
        for candidate in candidates:
            reason = self._unfixed(candidate, after)
            if reason is not None:
                return reason
        return None

    def held_together(self, candidates: Sequence[Candidate]) -> frozenset[int]:
        """The positions of the candidates that one scan with all of them applied confirms:
        their finding is gone, their own check holds and nothing at or above their severity is
        new in their pipeline or in a file they edit. Empty when the scan fails, has new errors,
        or brings a finding that no candidate's pipeline or edits account for (then none can be
        told apart and each is judged alone)."""
        after = self.after(candidates)
        if isinstance(after, str) or self._new_errors(after):
            return frozenset()
        new = self._new(after, min(c.finding.severity.rank for c in candidates))

        def touches(candidate: Candidate, found: Finding) -> bool:
            same_pipeline = found.pipeline is not None and found.pipeline == candidate.finding.pipeline
            return same_pipeline or found.span.path in {e.path for e in candidate.proposal.edits}

        if any(not any(touches(c, f) for c in candidates) for f in new):
            return frozenset()
        return frozenset(
            i for i, c in enumerate(candidates)
            if not any(touches(c, f) and (f.rule == UNPARSABLE or f.severity.rank >= c.finding.severity.rank)
                       for f in new)
            and self._unfixed(c, after) is None)

    def _new(self, after: ScanResult, threshold: int) -> list[Finding]:
        """The findings of ``after`` at or above ``threshold`` (any unparsable file) that the
        scan before did not have at that severity."""
        return [f for f in after.findings if (f.rule == UNPARSABLE or f.severity.rank >= threshold)
                and self._severity.get(_identity(f), -1) < f.severity.rank]

    def _new_errors(self, after: ScanResult) -> str | None:
        errors = [e for e in after.errors if e not in self.before.errors]
        if not errors:
            return None
        return "the project scanned with it has errors: " + "; ".join(
            f"{e.path}: {e.message}" for e in errors)

    def _unfixed(self, candidate: Candidate, after: ScanResult) -> str | None:
        finding = candidate.finding
        still = [f for f in after.findings if _identity(f) == _identity(finding)]
        if still:
            return f"{finding.rule} is still reported after it: {still[0].message}"
        return candidate.proposal.check(_outcome(after, finding.pipeline))

    def note(self, candidate: Candidate, among: Sequence[Candidate] = ()) -> str | None:
        """The proposal's note on the project scanned with it (and the fixes ``among`` which it
        was verified)."""
        after = self.after(among or [candidate])
        if isinstance(after, str):
            return None
        return candidate.proposal.consequence(_outcome(after, candidate.finding.pipeline))


def _identity(finding: Finding) -> tuple[str, str | None, str]:
    """A finding across edits: its rule, pipeline and file (its line may move)."""
    return finding.rule, finding.pipeline, finding.span.path


def _described(finding: Finding) -> str:
    return (f"{finding.rule} [{finding.severity.value}] at {finding.span.path}:"
            f"{finding.span.line}: {finding.message}")


def _outcome(after: ScanResult, entry: str | None) -> Outcome:
    pipeline = next((p for p in after.pipelines if p.entry == entry), None) if entry else None
    return Outcome(pipeline, tuple(f for f in after.findings if f.pipeline == entry))


def _pipeline(result: ScanResult, entry: str | None) -> Pipeline | None:
    return next((p for p in result.pipelines if p.entry == entry), None) if entry else None


def plan_fixes(settings: Settings, before: ScanResult, findings: Sequence[Finding], *,
               unsafe: bool = False, applying: bool = False) -> FixPlan:
    """The fix outcome of each of ``findings`` (the reported ones; ``before`` is the scan they
    come from, before any baseline or ``--new-since`` filter) whose rule declares fixes.
    ``applying``: also settle which of them ``--fix`` applies together (``FixPlan.applied``)."""
    registry = fix_registry()
    texts = ProjectTexts(settings.root)
    verifier = Verifier(settings, before, texts)

    def installed(library: str) -> InstalledLibrary | None:
        return find_installed(settings.root, library)

    proposed = []
    for finding in findings:
        fixes = registry.of(finding.rule)
        if fixes:
            site = FixSite(finding, _pipeline(before, finding.pipeline), texts.text, settings.root,
                           installed)
            proposed.append((finding, *_proposals(site, fixes)))
    # one re-scan for the first proposal of every finding; one per proposal only for those the
    # scan together does not confirm (a fix then is verified alone, as it would be applied alone)
    firsts = [candidates[0] for _, candidates, _ in proposed if candidates]
    held = {id(firsts[i]) for i in verifier.held_together(firsts)} if len(firsts) > 1 else set()
    outcomes = [
        FixOutcome(finding, candidates[0], note=verifier.note(candidates[0], firsts))
        if candidates and id(candidates[0]) in held else _verified(finding, candidates, reasons, verifier)
        for finding, candidates, reasons in proposed
    ]
    plan = FixPlan(outcomes, texts, unsafe)
    if applying:
        _settle(plan, verifier)
    return plan


def _proposals(site: FixSite, fixes: Sequence[RegisteredFix]) -> tuple[list[Candidate], list[str]]:
    """Every proposal of the rule's fixes for the finding, in order, and why the fixes that
    propose nothing do not."""
    candidates: list[Candidate] = []
    reasons: list[str] = []
    for fix in fixes:
        try:
            proposed = fix.definition.propose(site)
        except Exception as exc:  # noqa: BLE001 - a fix's bug costs that fix, never the scan
            reasons.append(internal_message(f"proposing the fix {fix.entry.id}", exc))
            continue
        if isinstance(proposed, NoFix):
            reasons.append(proposed.reason)
        else:
            candidates += [Candidate(site.finding, fix, proposal) for proposal in proposed]
    return candidates, reasons


def _verified(finding: Finding, candidates: Sequence[Candidate], reasons: list[str],
              verifier: Verifier) -> FixOutcome:
    """The first candidate the re-analysis confirms on its own, or why none is."""
    for candidate in candidates:
        reason = verifier.judge([candidate])
        if reason is None:
            return FixOutcome(finding, candidate, note=verifier.note(candidate))
        reasons = [*reasons, f"{candidate.proposal.message}: {reason}"]
    return FixOutcome(finding, reason="; ".join(dict.fromkeys(reasons)) or None)


def _settle(plan: FixPlan, verifier: Verifier) -> None:
    """Which enabled fixes ``--fix`` applies: all of them when they hold together, else each in
    turn that keeps the others holding."""
    enabled = [o for o in plan.outcomes if o.enabled(plan.unsafe)]
    if len(enabled) <= 1 or verifier.judge([o.candidate for o in enabled if o.candidate]) is None:
        plan.applied = enabled
        return
    for outcome in enabled:
        trial = [o.candidate for o in (*plan.applied, outcome) if o.candidate]
        reason = verifier.judge(trial)
        if reason is None:
            plan.applied.append(outcome)
        else:
            plan.left_out.append(FixOutcome(outcome.finding, outcome.candidate,
                                            f"not applied with the other fixes: {reason}"))
