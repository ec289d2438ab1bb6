"""What the mechanism the code really implements can and cannot guarantee
(docs/theory.md#verdicts, docs/theory.md#sgm-mismatch, docs/theory.md#normalized-mechanisms,
docs/theory.md#undecided-normalization, docs/theory.md#shuffling).

One function per mechanism, each giving the witness (the mechanism is no better than this), the
guarantee (it is at least this good) and notes. Every number comes from ``dpcheck.privacy``;
this module only chooses which result applies, with which parameters and which label.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np
from scipy.special import ndtr

from dpcheck.bounds.profiles import Bound, GdpProfile, PointwiseMax, RdpProfile, sample
from dpcheck.bounds.request import BoundRequest
from dpcheck.privacy.clt import clt_mu_poisson
from dpcheck.privacy.divisor import DivisorCheck, check_divisor, easgm_rule
from dpcheck.privacy.fixed_batches import (
    FIXED_SIZE_SHIFTS,
    ZERO_OTHERS_SHIFTS,
    MaxStatisticPair,
    deterministic_mu,
    max_statistic_witnesses,
)
from dpcheck.privacy.fixed_subsets import wor_rdp
from dpcheck.privacy.labels import Kind, Label
from dpcheck.privacy.normalized import normalized_components, normalized_rounds
from dpcheck.privacy.pld import TwoSidedPLD
from dpcheck.privacy.sgm import sgm_pld
from dpcheck.privacy.shuffle_threshold import sigma_threshold
from dpcheck.privacy.shuffle import (
    chi2_delta,
    kappa_closed_form,
    kappa_sub,
    poisson_miss_probability,
    thm41_candidate_delta,
    thm41_regime,
)
from dpcheck.privacy.variance_witness import VarianceWitness
from dpcheck.samplers import SamplerKind, sampler_kind


ADD_REMOVE = "add/remove"
ZERO_OUT = "zero-out"
ADJACENCY_WORDS: dict[str, str] = {
    ADD_REMOVE: "add/remove: D' is D with one example more or less",
    ZERO_OUT: "zero-out: D' is D with one example replaced by one whose clipped gradient is 0 (N fixed); "
              "the Poisson claim has the same value under it as under add/remove",
}


@dataclass(frozen=True)
class Corrected:
    """The corrected side of a report. ``witness`` is the strongest witness (all epochs);
    ``witness_one_epoch`` the one-epoch witness of a once-per-epoch sampler; ``numbers`` the
    structured numbers of the text (M, E, thresholds, separations, mu, ...); ``computation``
    how each bound was computed (closed form, RDP or PLD, with the PLD's cost)."""

    witness: Bound | None
    guarantee: Bound | None
    notes: tuple[str, ...] = ()
    divisor: DivisorCheck | None = None
    witness_one_epoch: Bound | None = None
    numbers: dict[str, Any] = field(default_factory=dict)
    adjacency: str = ADD_REMOVE
    computation: dict[str, str] = field(default_factory=dict)


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


def _worse_side(check: DivisorCheck) -> tuple[float, int]:
    """(1 - s, |D|) of the neighbouring direction whose divisor ratio is further from 1."""
    remove_worse = abs(check.one_minus_s_remove) > abs(check.one_minus_s_add)
    if remove_worse:
        return check.one_minus_s_remove, check.n - 1
    return check.one_minus_s_add, check.n


def _variance_witness(request: BoundRequest, claim: Claim, one_minus_s: float,
                      title: str) -> tuple[Bound, list[str]]:
    """The variance witness over n T coordinates (own, exact; docs/theory.md#variance-witness)
    and the note saying which n it assumed."""
    steps = request.rounds
    dim = request.dim or 1
    notes = [] if request.dim is not None else [
        "dim unknown: the witness uses n=1, the smallest model (it only gets stronger with n)"]
    pair = VarianceWitness(dim * steps, 1.0 - one_minus_s, one_minus_s)
    witness = _sampler(claim)(
        pair, Label.OWN, Kind.WITNESS, f"{title} variance witness (all gradients zero)",
        (f"N(0,I_m) vs N(0,s^2 I_m), m = n T = {dim * steps:.6g}, 1-s = {one_minus_s:.6g}, "
         "both directions; exact for any sigma, C, q",
         f"mu_eq={pair.mu_eq:.4g} (Gaussian scale, display only)"))
    return witness, notes


def normalized(request: BoundRequest, claim: Claim) -> Corrected:
    """EASGM / FEASGM: the divisor at N-1, N, N+1; where it changes, the variance witness over
    n T coordinates (own, exact) and the per-pair T-round guarantee (reconstructed); where it
    does not, the update is SGM divided by a constant and the SGM guarantee holds."""
    check = request.divisor_check()
    q, steps, sigma = request.rate, request.rounds, float(request.sigma)  # type: ignore[arg-type]
    bound = _sampler(claim)
    notes = list(check.notes())
    if not check.changes:
        upper = sgm_upper(q, sigma, steps)
        guarantee = bound(upper, Label.STANDARD, Kind.GUARANTEE, "SGM (the divisor is constant at N-1, N, N+1)",
                          ("the release is the SGM sum divided by a constant: post-processing of SGM",))
        return Corrected(None, guarantee, tuple(notes), check)
    one_minus_s, size = _worse_side(check)
    witness, assumed = _variance_witness(request, claim, one_minus_s, request.mechanism.upper())
    notes.extend(assumed)
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
                      ("worst-case pair with the batch index (k, j) revealed (docs/theory.md#per-pair-guarantee); "
                       "the theorem text of Wang, Cui, Cui, Yuan (2026) was not recovered, so weights and "
                       "index set may differ",
                       f"|D|={size} vs {size + 1}, 1-s={one_minus_s:.6g}, n={request.dim}, T={steps}"))
    return Corrected(witness, guarantee, tuple(notes), check)


ASGM_NO_GUARANTEE = ("the reconstructed ASGM per-pair bound (docs/theory.md#asgm) mixes components of different "
                     "scale per |B|, whose T-round PLD dpcheck does not compute")


def _asgm_witness(request: BoundRequest, claim: Claim) -> Bound:
    """SGM with noise multiplier sigma/2 from the optimistic PLD (own, docs/theory.md#asgm)."""
    q, steps, sigma = request.rate, request.rounds, float(request.sigma)  # type: ignore[arg-type]
    return _sampler(claim)(
        sgm_lower(q, sigma / 2.0, steps), Label.OWN, Kind.WITNESS, "ASGM witness: SGM at sigma/2",
        (f"q={q:.6g}, sigma/2={sigma / 2:g}, T={steps}; optimistic PLD, both directions (a lower "
         "bound of the SGM(sigma/2) profile, so the witness never overstates the leak)",
         "assumes the batch size |B| is observable (logged, or released with the update)"))


def asgm(request: BoundRequest, claim: Claim) -> Corrected:
    """ASGM: at least as leaky as SGM with noise multiplier sigma/2 (own, docs/theory.md#asgm)."""
    return Corrected(_asgm_witness(request, claim), None, (f"no guarantee attached: {ASGM_NO_GUARANTEE}",))


def asgm_or_easgm(request: BoundRequest, claim: Claim) -> Corrected:
    """A divisor that sizes the private data, the batch (ASGM) or the dataset (EASGM) undecided:
    the witness is the pointwise maximum of the ASGM witness's and the EASGM variance witness's
    trade-off curves, valid whichever of the two the code runs (own,
    docs/theory.md#undecided-normalization). The dataset's size N divides as N q does: the
    divisor ratio between neighbours is N/(N + 1) either way. No guarantee: ASGM has none."""
    one_minus_s, _ = _worse_side(check_divisor(easgm_rule(request.rate), int(request.n_records)))  # type: ignore[arg-type]
    first = _asgm_witness(request, claim)
    second, assumed = _variance_witness(request, claim, one_minus_s, "EASGM")
    notes = [
        "the divisor is a size of the private data, but dpcheck cannot decide whether of the sampled batch (ASGM) "
        "or of the dataset (EASGM): the witness is the larger of the two witnesses' trade-off curves at every alpha, "
        "beta(alpha) = max(f_ASGM(alpha), f_EASGM(alpha)), an upper bound on the true curve whichever of the two the "
        "code runs (docs/theory.md#undecided-normalization)",
        *assumed,
        f"no guarantee attached: none holds for both mechanisms, as ASGM has none ({ASGM_NO_GUARANTEE})",
    ]
    separate = "; ".join(f"{bound.curve.name}: eps={bound.curve.epsilon_at_delta:.4g} at delta={claim.delta:g}, "
                         f"delta={bound.curve.delta_at_epsilon:.4g} at eps={claim.epsilon:.4g}"
                         for bound in (first, second))
    witness = _sampler(claim)(
        PointwiseMax((first.source, second.source)), Label.OWN, Kind.WITNESS,
        "ASGM or EASGM witness: the larger of the two witness curves",
        (*first.curve.notes, *second.curve.notes, f"each alone: {separate}",
         "delta(eps) and eps(delta) read off the combined curve on a dense alpha grid (a lower estimate of its "
         "delta, so the witness never overstates the leak)"))
    return Corrected(witness, None, tuple(notes))


def pld_cost(pld: TwoSidedPLD, steps: int) -> str:
    """How a T-round PLD was computed: its grid and the number of FFT products."""
    products = max(steps.bit_length() - 1, 0) + max(bin(steps).count("1") - 1, 0)
    return (f"PLD of T={steps:,} rounds: {products} FFT products by repeated squaring, result on "
            f"{pld.remove.probs.size:,} grid points at step {pld.remove.interval:.3g}")


def separation(bound: Bound) -> float:
    """max over the sampled alphas of ((1 - alpha) - beta)/sqrt 2: the distance of the sampled
    curve from random guessing (for a witness a lower estimate of the mechanism's separation)."""
    c = bound.curve
    return float(np.max((1.0 - c.curve_alpha - c.curve_beta) / math.sqrt(2.0)))


def shuffle(request: BoundRequest, claim: Claim) -> Corrected:
    """Batches that are not Poisson, accounted as Poisson: the bound of the sampler's kind."""
    kind = sampler_kind(request.sampler)
    if kind.guarantee == "subsets-without-replacement":
        return _fixed_subsets(request, claim, kind)
    if kind.guarantee == "none":
        q, steps = request.rate, request.rounds
        note = (f"no valid accountant computed for {kind.title} (q={q:.6g}, T={steps}): an example can enter a "
                "batch several times, and dpcheck has no rigorous bound for it")
        return Corrected(None, None, (note,), adjacency=ZERO_OUT, numbers={"sampler": kind.name})
    return _once_per_epoch(request, claim, kind)


def _fixed_subsets(request: BoundRequest, claim: Claim, kind: SamplerKind) -> Corrected:
    """B distinct indices drawn afresh every step: the replace-one RDP of the subsampled
    Gaussian without replacement (standard; Wang, Balle & Kasiviswanathan 2019, Thm 9;
    docs/theory.md#fixed-subsets)."""
    q, steps, sigma = request.rate, request.rounds, float(request.sigma)  # type: ignore[arg-type]
    orders, values = wor_rdp(q, sigma, steps)
    guarantee = _sampler(claim)(
        RdpProfile(orders, values), Label.STANDARD, Kind.GUARANTEE,
        "subsampled Gaussian without replacement (RDP, replace-one)",
        (f"q=B/N={q:.6g}, T={steps}, sigma={sigma:g}; Wang, Balle & Kasiviswanathan (AISTATS 2019), Thm 9, with the "
         "replace-one sensitivity 2C, improved RDP conversion",
         "replace-one neighbours include zero-out ones, so it holds where the Poisson claim is compared"))
    notes = (f"{kind.title}: {kind.meaning}",
             "no witness computed: with the other gradients at 0 the per-step pair is the Poisson one the claim uses")
    return Corrected(None, guarantee, notes, adjacency=ZERO_OUT, numbers={"sampler": kind.name, "q": q, "steps": steps},
                     computation={"guarantee": f"RDP at {len(orders)} integer orders, closed form in T"})


def _witness_pair(kind: SamplerKind, rounds: int, sigma: float, miss: float) -> MaxStatisticPair:
    shifts = FIXED_SIZE_SHIFTS if kind.witness == "max-statistic-fixed-size" else ZERO_OTHERS_SHIFTS
    return MaxStatisticPair(rounds, sigma, *shifts, miss=miss)


WITNESS_WORDS: dict[str, str] = {
    "max-statistic-fixed-size": "the other gradients at -C e1, so the changed example's batch is shifted by 2/sigma "
                                "under D and 1/sigma under D' (Chua et al., ICML 2024 / NeurIPS 2024); largest "
                                "batch statistic per epoch",
    "max-statistic-zero-others": "the other gradients at 0, so one batch of the epoch is shifted by 1/sigma under D "
                                 "(Ertan & van Dijk 2026, §6.1); largest batch statistic per epoch",
    "deterministic-batches": "the batch holding the changed example is known: one Gaussian mechanism per epoch, exact",
}


def _epoch_witnesses(request: BoundRequest, claim: Claim, kind: SamplerKind,
                     ) -> tuple[Bound | None, Bound | None, str]:
    """(one-epoch witness, witness over the complete epochs, how it was computed):
    docs/theory.md#shuffle-max-statistic."""
    rounds, full, sigma = request.shuffle_rounds, request.full_epochs, float(request.sigma)  # type: ignore[arg-type]
    bound = _sampler(claim)
    if full < 1:
        return None, None, "no witness: the run does not complete one epoch"
    words = WITNESS_WORDS[kind.witness]
    if kind.witness == "deterministic-batches":
        one = bound(GdpProfile(1.0 / sigma), Label.STANDARD, Kind.WITNESS, "known batch, one epoch", (words,))
        many = bound(GdpProfile(math.sqrt(full) / sigma), Label.STANDARD, Kind.WITNESS,
                     f"known batches, E={full} epochs", (words, f"mu = sqrt(E)/sigma = {math.sqrt(full) / sigma:.4g}"))
        return one, many, "closed form (GDP), independent of E"
    pair = _witness_pair(kind, rounds, sigma, request.miss_probability)
    single, composed = max_statistic_witnesses(pair, full)
    where = (f"M={rounds} batches per epoch, sigma={sigma:g}"
             + (f", the example left out of an epoch with probability {pair.miss:.4g} (drop_last)" if pair.miss else ""))
    one = bound(single.pld, Label.PAPER, Kind.WITNESS, "max-statistic witness, one epoch", (words, where))
    many = bound(composed.pld, Label.PAPER, Kind.WITNESS, f"max-statistic witness, E={full} epochs",
                 (words, where, "epochs with independent shuffles compose; a persistent, sequential or buffered order "
                                "is at least as leaky"))
    return one, many, composed.describe()


def _once_per_epoch(request: BoundRequest, claim: Claim, kind: SamplerKind) -> Corrected:
    """Samplers that put every example in one batch per epoch: the deterministic-batch
    guarantee sqrt(E)/sigma-GDP (standard; Chua et al., ICML 2024), the max-statistic witness of
    one epoch and of the E complete epochs, and the numbers of the max test of Ertan & van Dijk
    (2026) (docs/theory.md#shuffle-deterministic, docs/theory.md#shuffle-threshold)."""
    rounds, epochs, sigma = request.shuffle_rounds, request.shuffle_epochs, float(request.sigma)  # type: ignore[arg-type]
    mu = deterministic_mu(epochs, sigma)
    guarantee = _sampler(claim)(
        GdpProfile(mu), Label.STANDARD, Kind.GUARANTEE, f"deterministic batches, E={epochs} epochs: sqrt(E)/sigma-GDP",
        (f"mu = sqrt({epochs})/{sigma:g} = {mu:.4g}; one Gaussian mechanism of sensitivity C per epoch for the changed "
         "example, composed adaptively (Chua, Ghazi, Kamath, Kumar, Manurangsi, Sinha, Zhang, ICML 2024)",
         f"{kind.title} is a mixture of fixed-batch runs with the same weights under D and D', so the bound holds by "
         "joint convexity; a last partial batch changes nothing"))
    one, many, how = _epoch_witnesses(request, claim, kind)
    numbers: dict[str, Any] = {
        "sampler": kind.name, "M": rounds, "epochs": epochs, "full_epochs": request.full_epochs,
        "miss_probability": request.miss_probability, "mu": mu,
        "separation": {"witness_one_epoch": None if one is None else separation(one),
                       "witness": None if many is None else separation(many),
                       "guarantee": (2.0 * float(ndtr(mu / 2.0)) - 1.0) / math.sqrt(2.0)},
    }
    notes = [f"{kind.title}: {kind.meaning}"]
    if kind.name == "balls-and-bins":
        notes.append("balls-and-bins is close to, but not the same as, Poisson subsampling (Feldman & Shenfeld, "
                     "'Privacy amplification by random allocation', 2025); the Poisson number is not its bound")
    if rounds >= 2:
        threshold = sigma_threshold(rounds)
        chi2 = _chi2_or_one(rounds, sigma, epochs)
        numbers.update(threshold_sigma=threshold, below_threshold=sigma < threshold, kappa_sub=kappa_sub(rounds, sigma),
                       kappa_closed_form=kappa_closed_form(rounds),
                       poisson_miss_probability=poisson_miss_probability(rounds),
                       chi2_delta_papers_model=chi2,
                       thm41_delta_papers_model=thm41_candidate_delta(rounds, sigma) if thm41_regime(rounds, sigma)
                       else None)
        regime = (f"sigma={sigma:g} < 1/sqrt(2 ln M)={threshold:.4f}: one epoch's separation is at least "
                  f"{kappa_closed_form(rounds):.4f} (Ertan & van Dijk 2026)" if sigma < threshold
                  else f"sigma={sigma:g} >= 1/sqrt(2 ln M)={threshold:.4f}")
        notes.append(f"{regime}; kappa_sub={numbers['kappa_sub']:.4g} (the max test of Ertan & van Dijk 2026, one epoch)")
        notes.append(f"for the papers' model alone (other gradients 0): chi-square (0, delta) bound {chi2:.4g} over "
                     f"E={epochs} epochs (own)"
                     + (f", Thm 4.1 candidate delta={numbers['thm41_delta_papers_model']:.4g} per epoch (unverified)"
                        if numbers["thm41_delta_papers_model"] is not None else "")
                     + "; not guarantees for fixed-size batches, whose worst pair leaks more")
    computation = {"witness": how, "guarantee": "closed form (GDP), independent of E and M"}
    return Corrected(many, guarantee, tuple(notes), witness_one_epoch=one, numbers=numbers, adjacency=ZERO_OUT,
                     computation=computation)


def _chi2_or_one(rounds: int, sigma: float, epochs: int) -> float:
    try:
        return min(chi2_delta(rounds, sigma, epochs), 1.0)
    except OverflowError:  # the chi-square divergence itself overflows: the bound says nothing
        return 1.0


BUILDERS: dict[str, Callable[[BoundRequest, Claim], Corrected]] = {
    "sgm": sgm,
    "easgm": normalized,
    "feasgm": normalized,
    "asgm": asgm,
    "asgm-or-easgm": asgm_or_easgm,
    "shuffle": shuffle,
}

