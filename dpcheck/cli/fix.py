"""``dpcheck scan``'s fix options, in ruff's terms: ``--fix`` writes the verified fixes,
``--diff`` prints them as a unified diff instead (exit 1 when there is one), ``--unsafe-fixes``
lets both apply the fixes that change how training behaves.

Without these options a scan still marks its fixable findings (``[*]``, the JSON ``fix``
object, SARIF ``fixes``): every fix shown is one that re-analysis confirmed
(``dpcheck.fixing``). The fix stage runs only when a reported finding's rule declares fixes;
otherwise nothing of it is imported. A rescan whose linking inputs and findings are unchanged
(an edit of a file linking never read changes neither) takes the marks from the scan's cache
(``ScanResult.cache_key``) without verifying again.
"""

from __future__ import annotations

import argparse
import sys
import hashlib
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from dpcheck.engine import Settings, default_cache_dir
from dpcheck.errors import internal_message
from dpcheck.gate import GateOptions, GateOutcome, gated_scan
from dpcheck.model import Finding, FindingFix, ScanResult
from dpcheck.parse.cache import CACHE_SETTINGS, AnalysisCache
from dpcheck.report import PathView, location
from dpcheck.report.escape import printable

if TYPE_CHECKING:
    from dpcheck.fixing import FixOutcome, FixPlan


def add_fix_options(p: argparse.ArgumentParser) -> None:
    """``--fix``, ``--diff`` and ``--unsafe-fixes``."""
    p.add_argument("--fix", action="store_true",
                   help="apply the fixes that re-analysis confirms (safe ones; unsafe ones too "
                   "with --unsafe-fixes), then report what remains")
    p.add_argument("--diff", action="store_true",
                   help="print the fixes --fix would apply as a unified diff instead of the "
                   "report, without writing (exit 1 when there is a diff)")
    p.add_argument("--unsafe-fixes", action="store_true",
                   help="let --fix and --diff apply the fixes that change how training behaves "
                   "(the sampling scheme)")


@dataclass(frozen=True)
class FixedRun:
    """What the fix stage leaves: the result to report (None: ``--diff`` printed instead), the
    diff, and the exit code it decides (None: the report's findings decide)."""

    result: ScanResult | None
    diff: str = ""
    exit_code: int | None = None


def _has_fixes(settings: Settings, findings: list[Finding]) -> bool:
    fixable = {rule.id for rule in settings.catalog.rules if rule.fixes}
    return any(f.rule in fixable for f in findings)


def fix_stage(args: argparse.Namespace, settings: Settings, gate: GateOptions,
              outcome: GateOutcome) -> FixedRun:
    """Annotate the findings with their fixes; with ``--diff`` give the diff instead, with
    ``--fix`` write the fixes and report the scan of the fixed project. A dpcheck bug in the
    stage costs the fixes, never the report: it is one line on stderr (``--diff``: exit 2)."""
    if not _has_fixes(settings, outcome.result.findings):
        return FixedRun(None, "", 0) if args.diff else FixedRun(outcome.result)
    try:
        return _fixed(args, settings, gate, outcome)
    except Exception as exc:  # noqa: BLE001 - the scan's results are kept
        sys.stderr.write(f"dpcheck: {printable(internal_message('fixing', exc))} "
                         "(please report)\n")
        return FixedRun(None, "", 2) if args.diff else FixedRun(outcome.result)


def _marked(args: argparse.Namespace, settings: Settings, outcome: GateOutcome) -> list[Finding]:
    """The reported findings with their verified fixes (or why none), from the scan's cache
    when the same inputs gave the same findings before."""
    result = outcome.result
    directory = default_cache_dir(settings.options, settings.root) if result.cache_key else None
    cache = AnalysisCache(directory, CACHE_SETTINGS) if directory is not None else None
    text = "\n".join([str(result.cache_key), str(args.unsafe_fixes),
                      *(f"{f.rule}:{f.fingerprint}:{f.span.line}:{f.span.column}" for f in result.findings)])
    key = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    marks: list[Any] | None = cache.fix_plans.get(key) if cache is not None else None
    if marks is None:
        from dpcheck.fixing import plan_fixes

        annotated = plan_fixes(settings, outcome.scanned or result, result.findings,
                               unsafe=args.unsafe_fixes, applying=False).annotate(result.findings)
        marks = [[f.fix.to_json() if f.fix else None, f.fix_reason] for f in annotated]
        if cache is not None:
            cache.fix_plans[key] = marks
            cache.save()
    return [replace(f, fix=FindingFix.from_json(fix) if fix else None, fix_reason=reason)
            for f, (fix, reason) in zip(result.findings, marks)]


def _fixed(args: argparse.Namespace, settings: Settings, gate: GateOptions,
           outcome: GateOutcome) -> FixedRun:
    result = outcome.result
    if not (args.fix or args.diff):
        return FixedRun(replace(result, findings=_marked(args, settings, outcome)))
    from dpcheck.fixing import plan_fixes, unified_diff, write_changes

    plan = plan_fixes(settings, outcome.scanned or result, result.findings,
                      unsafe=args.unsafe_fixes, applying=True)
    view = PathView.here(settings.root)
    if not args.quiet:
        _note_unapplied(plan, view, result)
    if args.diff:
        diff = unified_diff(plan.changes(), lambda path: printable(view.show(path)))
        return FixedRun(None, diff, 1 if diff else 0)
    if not plan.applied:
        return FixedRun(replace(result, findings=plan.annotate(result.findings)))
    changes = plan.changes()
    failed = write_changes(settings.root, changes, plan.texts.encoded)
    for path, why in failed.items():
        sys.stderr.write(f"dpcheck: {printable(view.show(path))}: fix not applied: "
                         f"{printable(why)}\n")
    written = {path for path in changes if path not in failed}
    fixed = [o for o in plan.applied if o.candidate is not None
             and {e.path for e in o.candidate.proposal.edits} <= written]
    if fixed and not args.quiet:
        files = ", ".join(printable(view.show(path)) for path in sorted(written))
        sys.stderr.write(f"dpcheck: fixed {len(fixed)} finding{'' if len(fixed) == 1 else 's'} "
                         f"in {files}\n")
    refreshed = gated_scan(settings, gate)
    findings = refreshed.result.findings
    if _has_fixes(settings, findings):
        findings = plan_fixes(settings, refreshed.scanned or refreshed.result, findings,
                              unsafe=args.unsafe_fixes).annotate(findings)
    return FixedRun(replace(refreshed.result, findings=findings))


def _note_unapplied(plan: FixPlan, view: PathView, result: ScanResult) -> None:
    """One stderr line per finding whose fix ``--fix`` does not apply, with why, and a count of
    the unsafe fixes left for ``--unsafe-fixes``."""
    unapplied: list[FixOutcome] = [o for o in plan.outcomes if o.candidate is None]
    for outcome in [*unapplied, *plan.left_out]:
        where = location(outcome.finding.span, view, result.cells)
        sys.stderr.write(f"dpcheck: {printable(where)}: {outcome.finding.rule} fix not applied: "
                         f"{printable(outcome.reason or 'no fix')}\n")
    hidden = [o for o in plan.outcomes if o.candidate is not None and not o.enabled(plan.unsafe)]
    if hidden:
        count = len(hidden)
        sys.stderr.write(f"dpcheck: {count} unsafe fix{'' if count == 1 else 'es'} not applied "
                         "(they change how training behaves): add --unsafe-fixes\n")
