"""The bound report of one request: claimed, witness, guarantee and the verdict
(docs/theory.md#verdicts).

``build_report`` is cached per distinct request (the request is the key), so a scan with many
findings of one training setup computes the numbers once. The JSON shape is the contract of
``dpcheck bound --format json`` and of ``finding.bound`` (README.md, "JSON output"):
``{"mechanism", "inputs", "claimed", "witness" | null, "guarantee" | null, "verdict", "notes"}``,
each bound as ``BoundCurve.to_json`` at the requested alphas, extended with
``adjacency`` (the neighbouring relation the three bounds are compared under), ``crossing``
(for a violation: the alpha where the witness crosses the claim and both betas, else null),
``computation`` (how each bound was computed: closed form, RDP or PLD with its cost), and for a
non-Poisson sampler ``sampler``, ``witness_one_epoch`` and ``numbers`` (M, epochs,
threshold_sigma, kappa_sub, separation, mu, ...).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from dpcheck.bounds.claimed import accountant_model, searched_sigma
from dpcheck.bounds.corrected import ADJACENCY_WORDS, BUILDERS, Claim, Corrected, pld_cost, sgm_upper
from dpcheck.bounds.profiles import (
    Bound,
    CurveProfile,
    GdpProfile,
    PointwiseMax,
    RdpProfile,
    ZeroDeltaProfile,
    sample,
)
from dpcheck.bounds.request import BoundRequest, validated
from dpcheck.privacy.labels import Kind, Label
from dpcheck.privacy.pld import TwoSidedPLD
from dpcheck.privacy.tradeoff import default_alpha_grid, eps_delta_tradeoff
from dpcheck.privacy.variance_witness import VarianceWitness
from dpcheck.samplers import sampler_kind

VERDICTS: tuple[str, ...] = ("violated", "unsupported", "consistent")
# A witness crosses the claim only by more than these margins: the PLD-based bounds carry a
# discretisation error of about 1e-4 in beta and 1e-3 (relative) in delta.
CURVE_TOLERANCE = 1e-4
RELATIVE_TOLERANCE = 1e-3


@dataclass(frozen=True)
class Crossing:
    """Where a witness crosses the claim: at ``alpha`` the witness's beta is below the claimed
    curve's (``against="claimed curve"``) or below the claimed (eps, delta) line
    (``against="claimed (eps, delta)"``, when only the witness's delta at the claimed eps
    shows it)."""

    alpha: float
    beta_witness: float
    beta_claimed: float
    against: str

    def to_json(self) -> dict[str, Any]:
        return {"alpha": self.alpha, "beta_witness": self.beta_witness, "beta_claimed": self.beta_claimed,
                "against": self.against}


@dataclass(frozen=True)
class BoundReport:
    """Everything computed for one request."""

    request: BoundRequest
    claimed: Bound
    corrected: Corrected
    claim: Claim
    verdict: str
    notes: tuple[str, ...]
    crossing: Crossing | None = None
    claimed_computation: str = ""

    @property
    def witness(self) -> Bound | None:
        return self.corrected.witness

    @property
    def guarantee(self) -> Bound | None:
        return self.corrected.guarantee

    def inputs(self) -> dict[str, Any]:
        """The resolved inputs, derived q and T included."""
        r = self.request
        out: dict[str, Any] = {
            "sigma": r.sigma,
            "sigma_semantics": "noise multiplier (noise std / clip norm C)",
            "clip": r.clip,
            "q": r.rate,
            "batch_size": r.batch_size,
            "N": r.n_records,
            "steps": r.rounds,
            "epochs": r.epochs,
            "dim": r.dim,
            "delta": r.delta,
            "epsilon": self.claim.epsilon,
            "alphas": list(r.alphas),
            "accountant": r.accountant,
            "opacus_divisor": r.opacus_divisor,
            "drop_last": r.drop_last,
        }
        if r.mechanism == "shuffle":
            out.update(rounds_per_epoch=r.shuffle_rounds, shuffle_epochs=r.shuffle_epochs, sampler=r.sampler)
        if (r.accounted_rate, r.accounted_rounds, r.claimed_sigma) != (r.rate, r.rounds, None):
            out.update(accountant_q=r.accounted_rate, accountant_steps=r.accounted_rounds,
                       accountant_sigma=r.claimed_sigma or r.sigma)
        if r.target_epsilon is not None:
            out["target_epsilon"] = r.target_epsilon
        return out

    def to_json(self) -> dict[str, Any]:
        alphas = list(self.request.alphas)

        def part(bound: Bound | None) -> dict[str, Any] | None:
            return None if bound is None else bound.curve.to_json(alphas)

        out: dict[str, Any] = {
            "mechanism": self.request.mechanism,
            "inputs": self.inputs(),
            "claimed": part(self.claimed),
            "witness": part(self.witness),
            "guarantee": part(self.guarantee),
            "verdict": self.verdict,
            "notes": list(self.notes),
            "adjacency": {"relation": self.corrected.adjacency, "meaning": ADJACENCY_WORDS[self.corrected.adjacency]},
            "crossing": None if self.crossing is None else self.crossing.to_json(),
            "computation": self.computation(),
        }
        if self.request.mechanism == "shuffle":
            kind = sampler_kind(self.request.sampler)
            out["sampler"] = {"kind": kind.name, "title": kind.title, "meaning": kind.meaning}
            out["witness_one_epoch"] = part(self.corrected.witness_one_epoch)
            out["numbers"] = dict(self.corrected.numbers)
        check = self.corrected.divisor
        if check is not None:
            out["divisor"] = {
                "rule": check.rule.describe(),
                "sizes": [check.n - 1, check.n, check.n + 1],
                "code": list(check.code),
                "exact": [str(e) for e in check.exact],
                "changes": check.changes,
                "nearest_changes": list(check.nearest_changes),
            }
        return out


    def computation(self) -> dict[str, str | None]:
        """How each bound was computed (the builder's account where it gave one)."""
        steps = self.request.rounds
        given = self.corrected.computation
        return {
            "claimed": self.claimed_computation,
            "witness": given.get("witness") or _how(self.witness, steps),
            "guarantee": given.get("guarantee") or _how(self.guarantee, steps),
        }


def _how(bound: Bound | None, steps: int) -> str | None:
    """The computation path of a bound, read off its source."""
    return None if bound is None else _source_how(bound.source, steps)


def _source_how(source: object, steps: int) -> str | None:
    """The computation path of one bound source (each part of a pointwise maximum)."""
    if isinstance(source, PointwiseMax):
        parts = "; ".join(str(_source_how(part, steps)) for part in source.parts)
        return f"pointwise maximum of the curves of: {parts}; delta(eps) on a dense alpha grid"
    if isinstance(source, TwoSidedPLD):
        return pld_cost(source, steps)
    if isinstance(source, VarianceWitness):
        return "closed form (chi-square law over n T coordinates), independent of T"
    if isinstance(source, GdpProfile):
        return "closed form (GDP)"
    if isinstance(source, RdpProfile):
        return "RDP, closed form in T"
    if isinstance(source, (CurveProfile, ZeroDeltaProfile)):
        return "closed form"
    return None


def _claimed(request: BoundRequest, claim_delta: float) -> tuple[Bound, float]:
    """The claimed bound at the accountant's (q, T, sigma), with its printed epsilon."""
    model = accountant_model(request.accountant, request.library_version)
    q, steps = request.accounted_rate, request.accounted_rounds
    sigma = float(request.claimed_sigma or request.sigma)  # type: ignore[arg-type]
    upper = sgm_upper(q, sigma, steps)
    exact = upper.epsilon(claim_delta)
    printed = exact if model.method == "pld" else model.epsilon(q, sigma, steps, claim_delta)
    claim_eps = request.epsilon or request.target_epsilon or printed
    notes = [model.describe(), f"accountant inputs: q={q:.6g}, sigma={sigma:g}, T={steps}"]
    delta_at_eps = None
    if model.method != "pld":
        delta_at_eps = model.delta(q, sigma, steps, claim_eps)
        notes.append(f"eps at delta and delta at eps are this accountant's ({model.method.upper()}); the curve "
                     f"shown is the exact SGM curve (pessimistic PLD), which gives eps={exact:.4g}, "
                     f"delta={float(upper.delta(claim_eps)):.4g}")
    bound = sample(upper, label=Label.STANDARD, kind=Kind.CLAIMED, name=f"{model.title} (SGM+Poisson)",
                   alphas=request.alphas, epsilon=claim_eps, delta=claim_delta, notes=notes,
                   epsilon_at_delta=printed, delta_at_epsilon=delta_at_eps)
    return bound, claim_eps


def _crosses(witness: Bound, claimed: Bound, claim: Claim) -> bool:
    """Whether the witness curve dips below the claimed curve, or its delta at the claimed eps
    exceeds the claimed delta."""
    below = np.any(witness.curve.curve_beta < claimed.curve.curve_beta - CURVE_TOLERANCE)
    delta = witness.curve.delta_at_epsilon or 0.0
    return bool(below) or delta > claim.delta * (1.0 + RELATIVE_TOLERANCE)


def _reaches(guarantee: Bound, claim: Claim) -> bool:
    """Whether a valid guarantee supports the claim (eps at delta and delta at eps)."""
    curve = guarantee.curve
    if not curve.valid:
        return False
    eps_ok = (curve.epsilon_at_delta or 0.0) <= claim.epsilon * (1.0 + RELATIVE_TOLERANCE) + 1e-9
    delta_ok = (curve.delta_at_epsilon or 0.0) <= claim.delta * (1.0 + RELATIVE_TOLERANCE)
    return eps_ok and delta_ok


def crossing(witness: Bound, claimed: Bound, claim: Claim) -> Crossing | None:
    """Where the witness crosses the claim (None when it does not): the sampled alpha where
    its curve is furthest below the claimed curve, else, when only its delta at the claimed eps
    exceeds the claimed delta, the alpha on a dense grid where it is furthest below the claimed
    (eps, delta) line (it must dip below that line somewhere: Dong, Roth, Su 2022, Prop. 2.12)."""
    w, c = witness.curve, claimed.curve
    gap = c.curve_beta - w.curve_beta
    best = int(np.argmax(gap))
    if gap[best] > CURVE_TOLERANCE:
        return Crossing(float(w.curve_alpha[best]), float(w.curve_beta[best]), float(c.curve_beta[best]),
                        "claimed curve")
    if (w.delta_at_epsilon or 0.0) <= claim.delta * (1.0 + RELATIVE_TOLERANCE) or not np.isfinite(claim.epsilon):
        return None
    grid = default_alpha_grid()
    beta = np.clip(np.atleast_1d(np.asarray(witness.source.tradeoff(grid), dtype=float)), 0.0, 1.0)
    line = np.atleast_1d(np.asarray(eps_delta_tradeoff(grid, claim.epsilon, claim.delta), dtype=float))
    i = int(np.argmax(line - beta))
    return Crossing(float(grid[i]), float(beta[i]), float(line[i]), "claimed (eps, delta)")


def verdict(claimed: Bound, corrected: Corrected, claim: Claim) -> str:
    """violated: a valid witness crosses the claim; unsupported: no valid guarantee reaches it;
    consistent otherwise."""
    witness, guarantee = corrected.witness, corrected.guarantee
    if witness is not None and witness.curve.valid and _crosses(witness, claimed, claim):
        return "violated"
    if guarantee is None or not _reaches(guarantee, claim):
        return "unsupported"
    return "consistent"


@lru_cache(maxsize=128)
def build_report(request: BoundRequest) -> BoundReport:
    """The full report of ``request`` (validated; ParameterError names a bad parameter)."""
    request = validated(request)
    notes: list[str] = []
    if request.sigma is None:
        target = float(request.target_epsilon)  # type: ignore[arg-type]
        sigma = searched_sigma(request.accountant, request.library_version, target, request.delta,
                               request.accounted_rate, request.accounted_rounds)
        request = request.with_sigma(sigma)
        notes.append(f"sigma={sigma:.6g}: what Opacus' make_private_with_epsilon picks for eps={target:g} "
                     f"at delta={request.delta:g} (same bisection, this accountant)")
    claimed, claim_eps = _claimed(request, request.delta)
    claim = Claim(claim_eps, request.delta, request.alphas)
    corrected = BUILDERS[request.mechanism](request, claim)
    notes.extend(corrected.notes)
    decided = verdict(claimed, corrected, claim)
    crossed = crossing(corrected.witness, claimed, claim) if decided == "violated" else None  # type: ignore[arg-type]
    model = accountant_model(request.accountant, request.library_version)
    curve = pld_cost(claimed.source, request.accounted_rounds)  # type: ignore[arg-type]
    how = f"curve: {curve}" if model.method == "pld" else (
        f"{model.method.upper()} accountant, closed form in T; curve: {curve}")
    return BoundReport(request, claimed, corrected, claim, decided, tuple(notes), crossed, how)
