"""Attach a corrected bound to every pipeline-rule finding that has a bound policy.

Each finding's pipeline gives a bound plan, following the rule's ``BoundPolicy`` (in the rule's
module under ``dpcheck/rules/``); the report is built once per distinct request (``build_report``
is cached) and attached as ``finding.bound``: the report's JSON plus ``summary`` (two lines,
printed verbatim by the text renderer) and ``missing``. The policy may then downgrade the finding
(DP101 on a FEASGM divisor that does not change at N-1, N, N+1 becomes ``info``; that check needs
N and the divisor only, so it is made even when the bound lacks sigma or the steps). A bound that
cannot be computed never stops the scan: the finding keeps a bound that says why.

What a bound does to a finding (its bound, severity and message) depends only on the rule, the
finding's own severity and message and the plan, never on where the finding sits; ``effect_key``
names that, so a scan can keep effects across edits that move lines or touch other files and
recompute only the bounds whose parameter set is new.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import MutableMapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from dpcheck.bounds.pipeline import Plan, plan
from dpcheck.errors import DpcheckError
from dpcheck.model import Finding, Pipeline, Severity
from dpcheck.rules import registry
from dpcheck.rules.rule import BoundPolicy

if TYPE_CHECKING:
    from dpcheck.bounds.report import BoundReport
    from dpcheck.privacy.divisor import DivisorCheck


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
    from dpcheck.bounds.summary import summary_lines

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
    """The bound object of one finding (None for a rule without one) and its report. The
    numeric engine is loaded here, when a bound is computed, not by a scan the cache answers."""
    from dpcheck.bounds.report import build_report
    from dpcheck.bounds.summary import missing_lines

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


def effect_key(finding: Finding, pipeline: Pipeline) -> str | None:
    """The key of what a bound does to ``finding`` (None for a rule without a bound policy):
    a digest of the rule, the finding's severity and message, and the bound plan."""
    policy = registry().bound_policy(finding.rule)
    if policy is None:
        return None
    text = json.dumps([finding.rule, finding.severity.value, finding.message, repr(plan(policy, pipeline))])
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _effect(finding: Finding, pipeline: Pipeline) -> dict[str, Any]:
    """The bound, severity and message a finding of ``pipeline`` is reported with."""
    policy = registry().bound_policy(finding.rule)
    assert policy is not None
    bound, report = bound_for(finding, pipeline)
    bounded = replace(finding, bound=bound)
    check = report.corrected.divisor if report is not None else _divisor_check(plan(policy, pipeline))
    if policy.downgrade is not None and check is not None:
        bounded = policy.downgrade(bounded, check)
    return {"bound": bounded.bound, "severity": bounded.severity.value, "message": bounded.message}


def _divisor_check(plan_: Plan | None) -> DivisorCheck | None:
    """The divisor check of a plan whose bound could not be computed (sigma or the steps
    unknown) but whose N and divisor rule are known; None otherwise."""
    if plan_ is None or plan_.divisor is None:
        return None
    try:
        return plan_.divisor.divisor_check()
    except (DpcheckError, ValueError, ArithmeticError):
        return None


def attach_bounds(
    findings: Sequence[Finding],
    pipelines: Sequence[Pipeline],
    known: MutableMapping[str, Any] | None = None,
) -> list[Finding]:
    """``findings`` with ``bound`` set on every finding of a known pipeline whose rule has a
    bound policy, downgraded where the policy says so. ``known`` (by ``effect_key``) serves
    effects computed before and receives the new ones."""
    by_entry = {p.entry: p for p in pipelines}
    known = {} if known is None else known
    out: list[Finding] = []
    for finding in findings:
        pipeline = by_entry.get(finding.pipeline or "")
        key = None if pipeline is None else effect_key(finding, pipeline)
        if key is None or pipeline is None:
            out.append(finding)
            continue
        effect = known.get(key)
        if effect is None:
            effect = known[key] = _effect(finding, pipeline)
        out.append(replace(finding, bound=effect["bound"], severity=Severity(effect["severity"]),
                           message=effect["message"]))
    return out
