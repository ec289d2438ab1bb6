"""What the mechanism the code really implements can and cannot guarantee (math-spec §7).

One function per mechanism, each giving the witness (the mechanism is no better than this), the
guarantee (it is at least this good) and notes. Every number comes from ``dpcheck.privacy``;
this module only chooses which result applies, with which parameters and which label.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache

from dpcheck.bounds.profiles import Bound, CurveProfile, ZeroDeltaProfile, sample
from dpcheck.bounds.request import BoundRequest
from dpcheck.privacy.clt import clt_mu_poisson
from dpcheck.privacy.divisor import (
    Divisor,
    DivisorCheck,
    DivisorRule,
    Rate,
    batch_over_n_rule,
    check_divisor,
    easgm_rule,
    feasgm_rule,
)
from dpcheck.privacy.labels import Kind, Label
from dpcheck.privacy.normalized import normalized_components, normalized_rounds
from dpcheck.privacy.pld import TwoSidedPLD
from dpcheck.privacy.sgm import sgm_pld
from dpcheck.privacy.shuffle import (
    chi2_delta,
    f_sub,
    kappa_closed_form,
    kappa_sub,
    poisson_miss_probability,
    sigma_threshold,
    thm41_candidate_delta,
    thm41_regime,
)
from dpcheck.privacy.variance_witness import VarianceWitness


@dataclass(frozen=True)
class Corrected:
    """The corrected side of a report."""

    witness: Bound | None
    guarantee: Bound | None
    notes: tuple[str, ...] = ()
    divisor: DivisorCheck | None = None


@dataclass(frozen=True)
class Claim:
    """The claim the corrected side is read at: eps at ``delta`` and delta at ``epsilon``."""

    epsilon: float
    delta: float
    alphas: tuple[float, ...] = field(default=())


TOTAL_LEAK = 1.0 - 1e-9
"""A witness delta this close to 1 means the claim is void whatever the guarantee says."""


@lru_cache(maxsize=256)
def sgm_upper(q: float, sigma: float, steps: int) -> TwoSidedPLD:
    """The pessimistic T-round PLD of SGM, cached: the claimed side and the corrected side share
    it whenever their (q, sigma, T) agree."""
    return sgm_pld(q, sigma, steps)[1]


@lru_cache(maxsize=256)
def sgm_lower(q: float, sigma: float, steps: int) -> TwoSidedPLD:
    """The optimistic T-round PLD of SGM: its profile lies below the true one, so a witness
    built on it never overstates the leak."""
    lower, _ = sgm_pld(q, sigma, steps, optimistic=True)
    assert lower is not None
    return lower


def _sampler(claim: Claim) -> Callable[..., Bound]:
    def bound(source: object, label: Label, kind: Kind, name: str, notes: tuple[str, ...] = ()) -> Bound:
        return sample(source, label=label, kind=kind, name=name, alphas=claim.alphas,  # type: ignore[arg-type]
                      epsilon=claim.epsilon, delta=claim.delta, notes=notes)
    return bound


PLD_NOTE = "pessimistic PLD, both directions (discretisation error about 1e-3 in eps)"


def sgm(request: BoundRequest, claim: Claim) -> Corrected:
    """SGM at the code's actual (q, T). When the accountant was given other values (DP103) the
    actual PLD is a witness against the claim as well as the guarantee; otherwise the mechanism
    is exactly what the accountant assumes and only the guarantee is shown."""
    q, steps, sigma = request.rate, request.rounds, float(request.sigma)  # type: ignore[arg-type]
    upper = sgm_upper(q, sigma, steps)
    bound = _sampler(claim)
    where = f"q={q:.6g}, T={steps}, sigma={sigma:g}; {PLD_NOTE}"
    notes = [f"CLT mu={clt_mu_poisson(q, sigma, steps):.4g} at the code's (q, T) (display only, not a bound)"]
    witness = None
    if (request.accounted_rate, request.accounted_rounds) != (q, steps):
        notes.insert(0, f"recomputed with the code's actual q={q:.6g}, T={steps}; the accountant was "
                        f"given q={request.accounted_rate:.6g}, T={request.accounted_rounds}")
        witness = bound(upper, Label.STANDARD, Kind.WITNESS, "SGM at the actual (q, T)", (where,))
    guarantee = bound(upper, Label.STANDARD, Kind.GUARANTEE, "SGM at the actual (q, T)", (where,))
    return Corrected(witness, guarantee, tuple(notes))


def divisor_rule(request: BoundRequest) -> DivisorRule:
    """The code's divisor d(N): Opacus' int(N * (1/len(loader))), N q with a fixed q, or N b/N."""
    kind = Divisor.FLOOR if request.mechanism == "feasgm" else Divisor.EXPECTED
    if request.opacus_divisor:
        return DivisorRule(kind, Rate.LOADER, batch_size=request.batch_size, drop_last=request.drop_last)
    if request.q is not None:
        return feasgm_rule(request.q) if kind is Divisor.FLOOR else easgm_rule(request.q)
    return batch_over_n_rule(int(request.batch_size or 0), kind)


def normalized(request: BoundRequest, claim: Claim) -> Corrected:
    """EASGM / FEASGM: the divisor at N-1, N, N+1; where it changes, the variance witness over
    n T coordinates (own, exact) and the per-pair T-round guarantee (reconstructed); where it
    does not, the update is SGM divided by a constant and the SGM guarantee holds."""
    check = check_divisor(divisor_rule(request), int(request.n_records))  # type: ignore[arg-type]
    q, steps, sigma = request.rate, request.rounds, float(request.sigma)  # type: ignore[arg-type]
    bound = _sampler(claim)
    notes = list(check.notes())
    if not check.changes:
        upper = sgm_upper(q, sigma, steps)
        guarantee = bound(upper, Label.STANDARD, Kind.GUARANTEE, "SGM (the divisor is constant at N-1, N, N+1)",
                          ("the release is the SGM sum divided by a constant: post-processing of SGM",))
        return Corrected(None, guarantee, tuple(notes), check)
    remove_worse = abs(check.one_minus_s_remove) > abs(check.one_minus_s_add)
    one_minus_s = check.one_minus_s_remove if remove_worse else check.one_minus_s_add
    size = check.n - 1 if remove_worse else check.n
    dim = request.dim or 1
    if request.dim is None:
        notes.append("dim unknown: the witness uses n=1, the smallest model (it only gets stronger with n)")
    witness_pair = VarianceWitness(dim * steps, 1.0 - one_minus_s, one_minus_s)
    witness = bound(witness_pair, Label.OWN, Kind.WITNESS,
                    f"{request.mechanism.upper()} variance witness (all gradients zero)",
                    (f"N(0,I_m) vs N(0,s^2 I_m), m = n T = {dim * steps:.6g}, 1-s = {one_minus_s:.6g}, "
                     "both directions; exact for any sigma, C, q",
                     f"mu_eq={witness_pair.mu_eq:.4g} (Gaussian scale, display only)"))
    if request.dim is None:
        notes.append("per-pair guarantee not computed: it needs the model size n (it weakens as n grows)")
        return Corrected(witness, None, tuple(notes), check)
    if (witness.curve.delta_at_epsilon or 0.0) >= TOTAL_LEAK:
        notes.append("per-pair guarantee not computed: the witness already shows delta = 1 at the claimed "
                     "eps, so no guarantee can be better")
        return Corrected(witness, None, tuple(notes), check)
    components = normalized_components(size, q, sigma, one_minus_s)
    upper, _ = normalized_rounds(components, request.dim, steps, optimistic=False)
    guarantee = bound(upper, Label.RECONSTRUCTED, Kind.GUARANTEE,
                      f"{request.mechanism.upper()} per-pair guarantee, T rounds by PLD",
                      ("worst-case pair of math-spec §3.2 with the batch index (k, j) revealed; the paper's "
                       "theorem text was not recovered, so weights and index set may differ",
                       f"|D|={size} vs {size + 1}, 1-s={one_minus_s:.6g}, n={request.dim}, T={steps}"))
    return Corrected(witness, guarantee, tuple(notes), check)


def asgm(request: BoundRequest, claim: Claim) -> Corrected:
    """ASGM: at least as leaky as SGM with noise multiplier sigma/2 (own, §5.2)."""
    q, steps, sigma = request.rate, request.rounds, float(request.sigma)  # type: ignore[arg-type]
    witness = _sampler(claim)(
        sgm_lower(q, sigma / 2.0, steps), Label.OWN, Kind.WITNESS, "ASGM witness: SGM at sigma/2",
        (f"q={q:.6g}, sigma/2={sigma / 2:g}, T={steps}; optimistic PLD, both directions (a lower "
         "bound of the SGM(sigma/2) profile, so the witness never overstates the leak)",
         "assumes the batch size |B| is observable (logged, or released with the update)"))
    notes = ("no guarantee attached: the reconstructed ASGM per-pair bound (§3.4) mixes components of "
             "different scale per |B|, whose T-round PLD dpcheck does not compute",)
    return Corrected(witness, None, notes)


def shuffle(request: BoundRequest, claim: Claim) -> Corrected:
    """Shuffled batches accounted as Poisson: the max-test witness f_sub of one epoch (paper B),
    and the chi-square (0, delta) guarantee for E epochs of the papers' model (own)."""
    rounds, epochs, sigma = request.shuffle_rounds, request.shuffle_epochs, float(request.sigma)  # type: ignore[arg-type]
    bound = _sampler(claim)
    threshold = sigma_threshold(rounds)
    regime = (f"sigma={sigma:g} < 1/sqrt(2 ln M)={threshold:.4f}: separation >= kappa bound "
              f"{kappa_closed_form(rounds):.4f}" if sigma < threshold
              else f"sigma={sigma:g} >= 1/sqrt(2 ln M)={threshold:.4f}")
    witness = bound(CurveProfile(lambda a: f_sub(a, rounds, sigma)), Label.PAPER, Kind.WITNESS,
                    "shuffle max-test witness f_sub (one epoch)",
                    (f"M={rounds} batches per epoch; kappa_sub={kappa_sub(rounds, sigma):.4g}", regime,
                     f"Poisson reference p=(1-1/M)^M={poisson_miss_probability(rounds):.4f} (reconstructed)"))
    try:
        delta_chi2 = min(chi2_delta(rounds, sigma, epochs), 1.0)
    except OverflowError:  # the chi-square divergence itself overflows: the bound says nothing
        delta_chi2 = 1.0
    guarantee = bound(ZeroDeltaProfile(delta_chi2), Label.OWN, Kind.GUARANTEE,
                      f"chi-square (0, delta) bound, E={epochs} epochs",
                      (f"(0, {delta_chi2:.4g})-DP for the papers' model (one round per epoch holds the target); "
                       "adaptive composition included",))
    notes = ((f"Thm 4.1 candidate delta={thm41_candidate_delta(rounds, sigma):.4g} per epoch (unverified)"
              if thm41_regime(rounds, sigma) else
              f"Thm 4.1 (paper C) does not apply: sigma={sigma:g} < sqrt(3/ln M)={math.sqrt(3 / math.log(rounds)):.4f}"),)
    return Corrected(witness, guarantee, notes)


BUILDERS: dict[str, Callable[[BoundRequest, Claim], Corrected]] = {
    "sgm": sgm,
    "easgm": normalized,
    "feasgm": normalized,
    "asgm": asgm,
    "shuffle": shuffle,
}

