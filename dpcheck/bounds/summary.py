"""Words for a bound report: the two summary lines a finding carries, and the full text report
of ``dpcheck bound``."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence

from dpcheck.bounds.defaults import MECHANISM_TITLES
from dpcheck.bounds.pipeline import Missing
from dpcheck.bounds.profiles import Bound
from dpcheck.bounds.report import BoundReport


def _num(value: float | None, digits: int = 3) -> str:
    if value is None:
        return "n/a"
    if math.isinf(value):
        return "inf"
    return f"{value:.{digits}g}"


def _eps(value: float | None) -> str:
    return "inf" if value is not None and math.isinf(value) else ("n/a" if value is None else f"{value:.2f}")


def claimed_line(report: BoundReport) -> str:
    """"claimed eps=3.00 at delta=1e-05 (Opacus PRV, SGM+Poisson)"."""
    name = report.claimed.curve.name.replace(" (SGM+Poisson)", ", SGM+Poisson")
    target = report.request.target_epsilon
    how = f"sigma={report.request.sigma:.3g} calibrated to the target ε; " if target else ""
    return f"claimed ε={_eps(report.claim.epsilon)} at δ={report.claim.delta:g} ({how}{name})"


def corrected_line(report: BoundReport) -> str:
    """What the mechanism really gives, ending in the verdict."""
    r, claim = report.request, report.claim
    title = MECHANISM_TITLES[r.mechanism]
    check = report.corrected.divisor
    arrow = f"→ {report.verdict}"
    if check is not None and not check.changes:
        sizes = ", ".join(str(n) for n in check.nearest_changes) or "none nearby"
        return (f"no leak at this N={check.n} (divisor {check.code[1]:g} at N−1, N, N+1); "
                f"leaks at N ∈ {{{sizes}}} {arrow}")
    witness, guarantee = report.witness, report.guarantee
    crossing = report.crossing
    if crossing is not None:
        arrow += (f" (the witness crosses the {crossing.against} at α={crossing.alpha:.3g}: "
                  f"β={crossing.beta_witness:.3g} < {crossing.beta_claimed:.3g})")
    if r.mechanism == "sgm" and witness is not None:
        return (f"at the code's q={r.rate:.3g}, T={r.rounds}: ε={_eps(witness.curve.epsilon_at_delta)} at "
                f"δ={claim.delta:g} ({witness.curve.label.value}, PLD) {arrow}")
    if r.mechanism == "shuffle":
        return f"{_sampler_witness(report)}; {_sampler_guarantee(report)}; at δ={claim.delta:g}, zero-out {arrow}"
    if witness is not None:
        return (f"witness: this {title} update is no better than δ={_num(witness.curve.delta_at_epsilon, 2)} "
                f"at ε={claim.epsilon:.3g} ({_label_words(witness)}) {arrow}")
    if guarantee is not None:
        return (f"guarantee: ε={_eps(guarantee.curve.epsilon_at_delta)} at δ={claim.delta:g} "
                f"({guarantee.curve.label.value}) {arrow}")
    return f"no guarantee for this {title} update reaches the claim {arrow}"


def _sampler_witness(report: BoundReport) -> str:
    """"witness [paper] ε ≥ 0.0188 (one epoch), ≥ 0.155 (E=100 epochs)"."""
    one, many = report.corrected.witness_one_epoch, report.witness
    if many is None:
        return "no witness"
    label = many.curve.label.value
    first = one.curve.epsilon_at_delta if one is not None else None
    full = report.request.full_epochs
    if one is None or full == 1:
        return f"witness [{label}] ε ≥ {_num(many.curve.epsilon_at_delta)} (one epoch)"
    return (f"witness [{label}] ε ≥ {_num(first)} (one epoch), ≥ {_num(many.curve.epsilon_at_delta)} "
            f"(E={full} epochs)")


def _sampler_guarantee(report: BoundReport) -> str:
    """"guarantee [standard] ε ≤ 91.8 (deterministic batches, μ=10 GDP)"."""
    guarantee = report.guarantee
    if guarantee is None:
        return "no valid accountant computed"
    mu = report.corrected.numbers.get("mu")
    how = f"deterministic batches, μ={mu:.3g} GDP" if mu is not None else "RDP, subsets without replacement"
    return f"guarantee [{guarantee.curve.label.value}] ε ≤ {_num(guarantee.curve.epsilon_at_delta)} ({how})"


def _label_words(bound: Bound) -> str:
    label = bound.curve.label.value
    return f"{label}, exact" if label == "own" and "PLD" not in " ".join(bound.curve.notes) else label


def summary_lines(report: BoundReport, missing: Sequence[Missing] = ()) -> list[str]:
    """The two lines the text renderer prints verbatim under a finding."""
    second = corrected_line(report)
    assumed = [f"{m.param} ({m.assumed})" for m in missing if m.assumed]
    if assumed:
        second += " · assumed: " + "; ".join(assumed)
    return [claimed_line(report), second]


def missing_lines(mechanism: str, missing: Sequence[Missing]) -> list[str]:
    """The two lines of a finding whose bound could not be computed."""
    needed = [m for m in missing if m.assumed is None]
    names = ", ".join(m.param for m in needed)
    advice = "; ".join(f"--param {m.param}=VALUE" for m in needed)
    return [f"no {MECHANISM_TITLES.get(mechanism, mechanism)} bound: {names} could not be resolved",
            f"supply it with {advice} (or [tool.dpcheck.params] in pyproject.toml)"]


def _bound_block(title: str, bound: Bound | None, alphas: Sequence[float]) -> Iterator[str]:
    if bound is None:
        yield f"{title}: none"
        return
    c = bound.curve
    yield f"{title}: {c.name}  [{c.label.value}, {c.kind.value}]{'' if c.valid else '  (NOT VALID)'}"
    yield f"  ε at δ: {_num(c.epsilon_at_delta, 4)}    δ at ε: {_num(c.delta_at_epsilon, 4)}"
    betas = c.beta_at(alphas)
    yield "  curve:  " + "  ".join(f"β({a:g})={b:.4f}" for a, b in zip(alphas, betas))
    for note in c.notes:
        yield f"  note: {note}"


def _number_words(value: object) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_number_words(v)}" for k, v in value.items()) + "}"
    if isinstance(value, float):
        return _num(value, 4)
    return str(value)


def text_report(report: BoundReport) -> str:
    """The human-readable report of ``dpcheck bound``."""
    r, alphas = report.request, list(report.request.alphas)
    inputs = ", ".join(f"{k}={v}" for k, v in report.inputs().items()
                       if v is not None and k not in ("alphas", "sigma_semantics"))
    lines = [f"mechanism: {MECHANISM_TITLES[r.mechanism]} ({r.mechanism})",
             f"inputs: {inputs}", "σ is the noise multiplier (noise std / clip norm)",
             f"adjacency: {report.corrected.adjacency}", ""]
    blocks = [("claimed", report.claimed)]
    if r.mechanism == "shuffle" and report.corrected.witness_one_epoch is not None and r.full_epochs > 1:
        blocks.append(("witness (one epoch)", report.corrected.witness_one_epoch))
    blocks += [("witness", report.witness), ("guarantee", report.guarantee)]
    for title, bound in blocks:
        lines.extend(_bound_block(title, bound, alphas))
        lines.append("")
    numbers = report.corrected.numbers
    if numbers:
        lines.append("numbers: " + ", ".join(f"{k}={_number_words(v)}" for k, v in numbers.items()))
    for part, how in report.computation().items():
        if how:
            lines.append(f"computed ({part}): {how}")
    lines.extend(f"note: {n}" for n in report.notes)
    if report.crossing is not None:
        c = report.crossing
        lines.append(f"crossing: at α={c.alpha:.4g} the witness has β={c.beta_witness:.4g}, the {c.against} "
                     f"β={c.beta_claimed:.4g}")
    lines.append(f"verdict: {report.verdict}")
    lines.extend(summary_lines(report))
    return "\n".join(lines) + "\n"
