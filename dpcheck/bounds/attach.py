"""Attach a corrected bound to every pipeline-rule finding that has a bound policy.

Each finding's pipeline gives a bound plan, following the rule's ``BoundPolicy`` (in the rule's
module under ``dpcheck/rules/``); the report is built once per distinct request (``build_report``
is cached) and attached as ``finding.bound``: the report's JSON plus ``summary`` (two lines,
printed verbatim by the text renderer) and ``missing``. The policy may then downgrade the finding
(DP101 on a FEASGM divisor that does not change at N-1, N, N+1 becomes ``info``). A bound that
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
from dpcheck.model import Finding, Pipeline
from dpcheck.rules import registry
from dpcheck.rules.rule import BoundPolicy


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


def _from_report(policy: BoundPolicy, plan_: Plan, report: BoundReport) -> dict[str, Any]:
    bound = report.to_json()
    summary = summary_lines(report, plan_.missing)
    if policy.claim_only is not None:
        bound.update(mechanism="unknown", witness=None, guarantee=None, verdict="unknown",
                     crossing=None)
        bound["computation"] = {**bound["computation"], "witness": None, "guarantee": None}
        bound["notes"] = [policy.claim_only]
        summary = [summary[0], "the mechanism is undecided, so no corrected bound → unknown"]
    bound["missing"] = [m.to_json() for m in plan_.missing]
    bound["summary"] = summary
    return bound


def bound_for(finding: Finding, pipeline: Pipeline) -> tuple[dict[str, Any] | None, BoundReport | None]:
    """The bound object of one finding (None for a rule without one) and its report."""
    policy = registry().bound_policy(finding.rule)
    plan_ = None if policy is None else plan(policy, pipeline)
    if policy is None or plan_ is None:
        return None, None
    if plan_.request is None:
        return _unknown(plan_, [], missing_lines(plan_.mechanism, plan_.missing)), None
    try:
        report = build_report(plan_.request)
    except (DpcheckError, ValueError, ArithmeticError) as exc:
        reason = f"bound not computed: {exc}"
        return _unknown(plan_, [reason], [reason, "check the parameters dpcheck resolved (--param)"]), None
    return _from_report(policy, plan_, report), report


def attach_bounds(findings: Sequence[Finding], pipelines: Sequence[Pipeline]) -> list[Finding]:
    """``findings`` with ``bound`` set on every finding of a known pipeline whose rule has a
    bound policy, downgraded where the policy says so."""
    by_entry = {p.entry: p for p in pipelines}
    out: list[Finding] = []
    for finding in findings:
        pipeline = by_entry.get(finding.pipeline or "")
        policy = registry().bound_policy(finding.rule)
        if policy is None or pipeline is None:
            out.append(finding)
            continue
        bound, report = bound_for(finding, pipeline)
        finding = replace(finding, bound=bound)
        if policy.downgrade is not None and report is not None:
            finding = policy.downgrade(finding, report)
        out.append(finding)
    return out
