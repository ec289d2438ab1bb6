"""Attach a corrected bound to every DP101-DP106 finding (issue 6).

Each finding's pipeline gives a bound plan; the report is built once per distinct request
(``build_report`` is cached) and attached as ``finding.bound``: the report's JSON plus
``summary`` (two lines, printed verbatim by the text renderer) and ``missing``. A FEASGM
divisor that does not change at N-1, N, N+1 turns DP101 into an ``info`` note. A bound that
cannot be computed never stops the scan: the finding keeps a bound that says why.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from dpcheck.bounds.pipeline import Plan, plan
from dpcheck.bounds.report import BoundReport, build_report
from dpcheck.bounds.summary import missing_lines, summary_lines
from dpcheck.errors import DpcheckError
from dpcheck.model import Finding, Pipeline, Severity
from dpcheck.samplers import kind_of_pipeline

BOUND_RULES: frozenset[str] = frozenset({"DP101", "DP102", "DP103", "DP104", "DP105", "DP106"})
#: Rules whose pipeline has no decided mechanism: only the claimed side can be stated, with
#: what would decide it.
CLAIM_ONLY_RULES: dict[str, str] = {
    "DP105": "the update rule depends on the library release: pin it, or run "
             "`dpcheck bound asgm|easgm|feasgm` with these inputs",
    "DP106": "dpcheck could not decide the update rule or the sampling: check them by hand and "
             "run `dpcheck bound asgm|easgm|feasgm|shuffle` with these inputs",
}


def _unknown(plan_: Plan, notes: Sequence[str], summary: Sequence[str]) -> dict[str, Any]:
    return {
        "mechanism": plan_.mechanism,
        "inputs": plan_.known,
        "claimed": None,
        "witness": None,
        "guarantee": None,
        "verdict": "unknown",
        "notes": list(notes),
        "missing": [m.to_json() for m in plan_.missing],
        "summary": list(summary),
    }


def _from_report(rule: str, plan_: Plan, report: BoundReport) -> dict[str, Any]:
    bound = report.to_json()
    summary = summary_lines(report, plan_.missing)
    if rule in CLAIM_ONLY_RULES:
        bound.update(mechanism="unknown", witness=None, guarantee=None, verdict="unknown", crossing=None)
        bound["computation"] = {**bound["computation"], "witness": None, "guarantee": None}
        bound["notes"] = [CLAIM_ONLY_RULES[rule]]
        summary = [summary[0], "the mechanism is undecided, so no corrected bound → unknown"]
    bound["missing"] = [m.to_json() for m in plan_.missing]
    bound["summary"] = summary
    return bound


def bound_for(finding: Finding, pipeline: Pipeline) -> tuple[dict[str, Any] | None, BoundReport | None]:
    """The bound object of one finding (None for a rule without one) and its report."""
    plan_ = plan(finding.rule, pipeline)
    if plan_ is None:
        return None, None
    if plan_.request is None:
        return _unknown(plan_, [], missing_lines(plan_.mechanism, plan_.missing)), None
    try:
        report = build_report(plan_.request)
    except (DpcheckError, ValueError, ArithmeticError) as exc:
        reason = f"bound not computed: {exc}"
        return _unknown(plan_, [reason], [reason, "check the parameters dpcheck resolved (--param)"]), None
    return _from_report(finding.rule, plan_, report), report


def _by_sampler(finding: Finding, pipeline: Pipeline) -> Finding:
    """DP102 takes the severity the sampler table gives the scheme (balls-and-bins: ``info``,
    its privacy is close to Poisson's) when that is milder than the rule's."""
    kind = kind_of_pipeline(pipeline.sampler, pipeline.sampling)
    if finding.rule != "DP102" or kind is None or kind.dp102 is None:
        return finding
    severity = Severity(kind.dp102)
    return replace(finding, severity=severity) if severity.rank < finding.severity.rank else finding


def _downgraded(finding: Finding, report: BoundReport | None) -> Finding:
    """DP101 on a FEASGM whose divisor is the same at N-1, N, N+1 becomes an info note."""
    check = None if report is None else report.corrected.divisor
    if finding.rule != "DP101" or check is None or check.changes:
        return finding
    sizes = ", ".join(str(n) for n in check.nearest_changes) or "none within 10000"
    return replace(finding, severity=Severity.INFO,
                   message=f"{finding.message}; no leak at this N={check.n}; leaks at N ∈ {{{sizes}}}")


def attach_bounds(findings: Sequence[Finding], pipelines: Sequence[Pipeline]) -> list[Finding]:
    """``findings`` with ``bound`` set on every DP101-DP106 finding of a known pipeline."""
    by_entry = {p.entry: p for p in pipelines}
    out: list[Finding] = []
    for finding in findings:
        pipeline = by_entry.get(finding.pipeline or "")
        if finding.rule not in BOUND_RULES or pipeline is None:
            out.append(finding)
            continue
        bound, report = bound_for(finding, pipeline)
        out.append(_by_sampler(_downgraded(replace(finding, bound=bound), report), pipeline))
    return out
