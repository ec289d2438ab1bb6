"""Per-pair analysis of normalized DP-SGD: EASGM, FEASGM, ASGM
(docs/theory.md#normalized-mechanisms; Wang, Cui, Cui, Yuan 2026, "Rethinking the Security of
DP-SGD").

The worst-case pair (docs/theory.md#worst-case-pair: every record's clipped gradient C e1, the
target's -C e1) turns each round into an index-revealed mixture over k = |B ∩ D| ~ Bin(N, q) and j
(target sampled or not) of components T(N(0, I_n), N(mu e1, s^2 I_n)) (``ScaledGaussianPair``):
with s = d(N)/d(N+1), mu = k(1-s)/sigma when the target is not sampled and (k(1-s) + s)/sigma when
it is.

* ``normalized_mixture`` / ``easgm_mixture`` / ``feasgm_mixture`` / ``asgm_mixture`` build the
  one-round mixtures (docs/theory.md#per-pair-guarantee; label *reconstructed*: the papers' theorem
  texts were not recovered, and revealing (k, j) makes this a per-pair lower bound, not a
  certificate for the mechanism).
  Revealing j (target sampled or not) forfeits amplification by subsampling, so over many
  rounds the guarantee is far looser than the claim even where n adds little: at N = 60000,
  q = 256/60000, sigma = 1.1, T = 3500 the revealed-index SGM part alone has eps(1e-5) = 25.43
  (claimed: 1.13), the variance part alone 8.24, and the T-round guarantee 28.18.
* ``normalized_rounds`` composes T rounds through PLDs. All components share s and n, and each is
  the product of a 1-D pair in x1 and the pure variance pair on the other n-1 coordinates, so the
  mixture factorises as (1-D index-revealed mixture) x (variance pair): exact, and fast for
  n ~ 1e6; T rounds are its PLD self-composed.
  The 1-D mixture's PLDs (both directions, both estimates) come from one pass over its loss
  tails on the grid, each component evaluated only where its tails are not 0 or 1; neighbouring
  shifts are merged (within a budget on the mean loss), rounding the shift up for the
  pessimistic PLD and down for the optimistic one. That is rigorous: for P = N(0,1),
  Q = N(mu, s^2), s <= 1, delta(eps) = int (q_mu - e^eps p)_+ has derivative in mu equal to
  int_A (x - mu)/s^2 q_mu over A = {q_mu > e^eps p}, an interval centred at mu/(1 - s^2) >= mu
  (a half-line to the right when s = 1), where the integrand is odd about mu: so it is >= 0.
  In the other direction A is replaced by its complement and the sign by -e^eps, and
  int_R (x - mu) q_mu = 0, so it is >= 0 too. A larger shift is thus less private for every eps
  in both directions, and the merged mixtures dominate / are dominated by the exact one.
* The ASGM witness (docs/theory.md#asgm, label *own*): at least as leaky as SGM at sigma/2
  (batch size observed).

One module over 500 lines on purpose: the mixture components, their T-round composition and
the EASGM, FEASGM and ASGM bounds are one analysis of one worst-case pair.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Literal, overload

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import ndtr

from dpcheck.errors import ParameterError
from dpcheck.privacy._laws import normal_isf
from dpcheck.privacy._numerics import (
    FloatArray,
    as_array,
    require_positive,
    require_probability,
    require_steps,
)
from dpcheck.privacy.divisor import DivisorCheck
from dpcheck.privacy.gaussian_pair import (
    ScaledGaussianPair,
    chunked,
    first_coordinate_probs,
    mixed_probability,
)
from dpcheck.privacy.gdp import TrivialPair
from dpcheck.privacy.mixture import Mixture
from dpcheck.privacy.pld import (
    LossTails,
    PrivacyLossDistribution,
    TwoSidedPLD,
    composed_interval,
    grid_range,
)
from dpcheck.privacy.protocols import LossPair
from dpcheck.privacy.sgm import poisson_sgm_pld_bracket

BINOMIAL_SDS: float = 10.0
"""Keep k within N q +- this many standard deviations (docs/theory.md#per-pair-guarantee) ..."""

BINOMIAL_TAIL: float = 1e-18
"""... widened to the binomial quantiles at this tail mass, so the dropped mass stays negligible
next to the PLD tail truncation (1e-16) even when N q is small and the tails are heavy."""


MERGE_BUDGET: float = 0.25
"""Default budget of ``normalized_rounds`` for merging components, in grid steps over all T
rounds: the merged mixtures' mean loss over T rounds moves by at most this many intervals h."""

_MERGE_BISECTIONS = 16

SUPPORT_SDS: float = 12.0
"""A 1-D component's tails are evaluated only where its loss can be reached with |z| <= this
many standard deviations under P or Q; beyond, they are 0 or 1 up to 2e-33."""


@dataclass(frozen=True)
class DisjointPair:
    """P and Q mutually singular (loss -inf under P, +inf under Q): beta = 0 at alpha = 0.

    Carries the binomial mass dropped from a mixture, pessimistically as fully distinguishable."""

    def alpha(self, tau: FloatArray) -> FloatArray:
        """P(l >= tau) = 0 for every finite tau."""
        return np.zeros_like(as_array(tau))

    def beta(self, tau: FloatArray) -> FloatArray:
        """Q(l < tau) = 0 for every finite tau."""
        return np.zeros_like(as_array(tau))

    def reversed(self) -> DisjointPair:
        """Mutual singularity is symmetric."""
        return self


@dataclass(frozen=True)
class Components:
    """The (k, j) index of one round: weights, shifts mu, the shared 1 - s, and the dropped mass."""

    weights: FloatArray
    mus: FloatArray
    one_minus_s: float
    dropped: float


def _require_setting(n_records: int, q: float, sigma: float, dim: int) -> tuple[int, float, float, int]:
    if isinstance(n_records, bool) or int(n_records) != n_records or n_records < 1:
        raise ParameterError(f"dataset size N must be an integer >= 1, got {n_records!r}")
    if isinstance(dim, bool) or int(dim) != dim or dim < 1:
        raise ParameterError(f"dimension n must be an integer >= 1, got {dim!r}")
    return int(n_records), require_probability("q", q), require_positive("sigma", sigma), int(dim)


def _upper_quantile(n_records: int, q: float, tail: float) -> int:
    """The smallest k with P(Bin(N, q) > k) <= tail, by integer bisection on the survival
    function (``binom.isf`` saturates at N for tails this small)."""
    from scipy.stats import binom  # its sf has no public scipy.special form

    lo, hi = min(math.floor(n_records * q), n_records), n_records
    if binom.sf(lo, n_records, q) <= tail:
        return lo
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if binom.sf(mid, n_records, q) <= tail else (mid, hi)
    return hi


def _batch_range(n_records: int, q: float) -> tuple[FloatArray, FloatArray, float]:
    """k values, their Bin(N, q) probabilities, and the mass outside the kept range."""
    from scipy.stats import binom

    centre, sd = n_records * q, math.sqrt(n_records * q * (1.0 - q))
    lo = min(math.floor(centre - BINOMIAL_SDS * sd), int(binom.ppf(BINOMIAL_TAIL, n_records, q)))
    hi = max(math.ceil(centre + BINOMIAL_SDS * sd), _upper_quantile(n_records, q, BINOMIAL_TAIL))
    k = np.arange(max(lo, 0), min(hi, n_records) + 1, dtype=float)
    pmf = binom.pmf(k, n_records, q)
    return k, pmf, max(1.0 - float(pmf.sum()), 0.0)


def normalized_components(
    n_records: int, q: float, sigma: float, one_minus_s: float
) -> Components:
    """The (k, j) index of one round of the worst-case pair, for |D| = N and divisor ratio s.

    k = |B ∩ D| ~ Bin(N, q) is kept within N q +- 10 standard deviations (widened to the 1e-18
    binomial quantiles); component (k, not sampled) has weight b(k)(1 - q) and shift
    mu = k(1 - s)/sigma, component (k, sampled) weight b(k) q and mu = (k(1 - s) + s)/sigma
    (docs/theory.md#worst-case-pair, docs/theory.md#per-pair-guarantee).

    Parameters
    ----------
    n_records : int
        Dataset size N, >= 1.
    q : float
        Poisson sampling rate in (0, 1].
    sigma : float
        Noise multiplier, > 0.
    one_minus_s : float
        1 - s, s = d(N)/d(N + 1), carried exactly (e.g. 1/(N + 1) for EASGM).

    Returns
    -------
    Components
        Weights, shifts, the shared 1 - s and the binomial mass dropped.

    Examples
    --------
    >>> from dpcheck.privacy.normalized import normalized_components
    >>> c = normalized_components(4, 0.5, 10.0, 1 / 5)  # EASGM, N = 4: 1 - s = 1/(N + 1)
    >>> c.weights.size, c.dropped
    (10, 0.0)
    >>> c.mus.round(2).tolist()
    [0.0, 0.02, 0.04, 0.06, 0.08, 0.08, 0.1, 0.12, 0.14, 0.16]
    """
    n_records, q, sigma, _ = _require_setting(n_records, q, sigma, 1)
    k, pmf, dropped = _batch_range(n_records, q)
    e = float(one_minus_s)
    s = 1.0 - e
    weights = np.concatenate([pmf * (1.0 - q), pmf * q])
    mus = np.abs(np.concatenate([k * e, k * e + s])) / sigma
    keep = weights > 0.0
    return Components(weights[keep], mus[keep], e, dropped)


def _mixture_of(components: Components, dim: int) -> Mixture:
    """The exact one-round index-revealed mixture of n-dimensional components."""
    pairs: list[LossPair] = [
        ScaledGaussianPair(dim, mu, 1.0 - components.one_minus_s, components.one_minus_s)
        for mu in components.mus
    ]
    weights = list(components.weights)
    if components.dropped > 0.0:
        pairs.append(DisjointPair())
        weights.append(components.dropped)
    return Mixture(np.array(weights) / math.fsum(weights), pairs)


def normalized_mixture(
    n_records: int, q: float, sigma: float, dim: int, one_minus_s: float
) -> Mixture:
    """The per-pair one-round guarantee for divisor ratio s = 1 - one_minus_s (*reconstructed*)."""
    n_records, q, sigma, dim = _require_setting(n_records, q, sigma, dim)
    return _mixture_of(normalized_components(n_records, q, sigma, one_minus_s), dim)


def easgm_mixture(n_records: int, q: float, sigma: float, dim: int) -> Mixture:
    """EASGM (Thm 3.8 of Wang, Cui, Cui, Yuan 2026, reconstructed;
    docs/theory.md#per-pair-guarantee): s = N/(N+1), 1 - s = 1/(N+1) exactly."""
    return normalized_mixture(n_records, q, sigma, dim, 1.0 / (int(n_records) + 1))


def feasgm_mixture(check: DivisorCheck, q: float, sigma: float, dim: int) -> Mixture:
    """FEASGM (docs/theory.md#divisor-dependence): the EASGM-style mixture with s = d(N)/d(N+1)
    from the code's divisor.

    When the two divisors are equal the mixture is exactly the revealed-index SGM mixture."""
    return normalized_mixture(check.n, q, sigma, dim, check.one_minus_s_add)


def asgm_mixture(n_records: int, q: float, sigma: float, dim: int) -> Mixture:
    """ASGM (Thm 3.10 of Wang, Cui, Cui, Yuan 2026, reconstructed; docs/theory.md#asgm): j = 1
    trivial; j = 2 has s = k/(k+1), mu = 2k/((k+1) sigma); the empty batch (k = 0) is taken as
    divisor max(|B|, 1), giving G_{1/sigma}."""
    n_records, q, sigma, dim = _require_setting(n_records, q, sigma, dim)
    k, pmf, dropped = _batch_range(n_records, q)
    pairs: list[LossPair] = [TrivialPair()]
    weights = [float(pmf.sum()) * (1.0 - q)]
    for kk, w in zip(k, pmf * q):
        if w <= 0.0:
            continue
        if kk == 0:
            pairs.append(ScaledGaussianPair(dim, 1.0 / sigma, 1.0))
        else:
            pairs.append(ScaledGaussianPair(dim, 2.0 * kk / ((kk + 1.0) * sigma), kk / (kk + 1.0), 1.0 / (kk + 1.0)))
        weights.append(float(w))
    if dropped > 0.0:
        pairs.append(DisjointPair())
        weights.append(dropped)
    return Mixture(np.array(weights) / math.fsum(weights), pairs)


@dataclass(frozen=True)
class FirstCoordinateMixture:
    """The index-revealed mixture of 1-D pairs N(0,1) vs N(mu_i, s^2) sharing s, vectorised over
    components (a ``LossPair``). ``swapped`` gives the reversed direction: alpha(tau) of the
    reversed pair is beta(-tau) of this one, and vice versa (the loss is continuous).

    Requires s <= 1; a ratio s > 1 is handled by reversing a pair with 1/s (see ``_factorised``)."""

    weights: FloatArray
    mus: FloatArray
    one_minus_s: float
    swapped: bool = False

    def _probs(self, tau: FloatArray) -> tuple[FloatArray, FloatArray]:
        flat = as_array(tau).reshape(-1)

        def both(chunk: FloatArray) -> FloatArray:
            in_p, out_p, in_q, out_q = first_coordinate_probs(
                chunk[:, None], self.mus[None, :], self.one_minus_s
            )
            alpha = mixed_probability(in_p, out_p, self.weights)
            beta = mixed_probability(out_q, in_q, self.weights)
            return np.stack([alpha, beta], axis=1)

        out = chunked(flat, self.mus.size, both) if flat.size else np.zeros((0, 2))
        return out[:, 0].reshape(np.shape(tau)), out[:, 1].reshape(np.shape(tau))

    def alpha(self, tau: FloatArray) -> FloatArray:
        if self.swapped:
            return self._probs(-as_array(tau))[1]
        return self._probs(as_array(tau))[0]

    def beta(self, tau: FloatArray) -> FloatArray:
        if self.swapped:
            return self._probs(-as_array(tau))[0]
        return self._probs(as_array(tau))[1]

    def reversed(self) -> FirstCoordinateMixture:
        if self.one_minus_s == 0.0:
            return self  # Gaussian shifts and trivial pairs are their own reverses
        return FirstCoordinateMixture(self.weights, self.mus, self.one_minus_s, not self.swapped)

    def tails(self, offset: int, size: int, interval: float) -> LossTails:
        """The four loss tails on the grid (offset + k) interval, k < size, in one pass over the
        components; the weight missing from 1 is the fully distinguishable part (+inf under Q)."""
        if self.swapped:
            return replace(self, swapped=False).tails(-(offset + size - 1), size, interval).reversed()
        grid = (offset + np.arange(size)) * interval
        lo, hi = self._loss_support()
        first = np.searchsorted(grid, lo, side="left")
        stop = np.searchsorted(grid, hi, side="right")
        # Left of a component's support all of its mass has l >= tau; right of it, l < tau.
        starts, ends = np.zeros(size + 1), np.zeros(size + 1)
        np.add.at(starts, first, self.weights)
        np.add.at(ends, stop, self.weights)
        above = np.cumsum(starts[::-1])[::-1][1:]
        below = np.cumsum(ends)[:size]
        p_above, p_below, q_above, q_below = above.copy(), below.copy(), above.copy(), below
        for w, mu, i, j in zip(self.weights, self.mus, first, stop):
            if i < j:
                in_p, out_p, in_q, out_q = first_coordinate_probs(grid[i:j], mu, self.one_minus_s)
                p_above[i:j] += w * in_p
                p_below[i:j] += w * out_p
                q_above[i:j] += w * in_q
                q_below[i:j] += w * out_q
        disjoint = max(1.0 - math.fsum(self.weights), 0.0)
        return LossTails(interval, offset, p_above, p_below + disjoint, q_above + disjoint, q_below)

    def _loss_support(self) -> tuple[FloatArray, FloatArray]:
        """Per component, the range of l1(x) = x^2/2 - (x - mu)^2/(2 s^2) - log s over x within
        SUPPORT_SDS standard deviations of the mean under P (0) or Q (mu): l1 is concave (linear
        when s = 1), so its minimum is at an end and its maximum at the vertex mu/(1 - s^2)
        clipped to the range."""
        e = self.one_minus_s
        s = 1.0 - e
        x_lo = np.full_like(self.mus, -SUPPORT_SDS)
        x_hi = np.maximum(SUPPORT_SDS, self.mus + s * SUPPORT_SDS)

        def loss(x: FloatArray) -> FloatArray:
            return 0.5 * x**2 - 0.5 * (x - self.mus) ** 2 / s**2 - math.log1p(-e)

        peak = x_hi if e == 0.0 else np.clip(self.mus / (e * (2.0 - e)), x_lo, x_hi)
        return np.minimum(loss(x_lo), loss(x_hi)), loss(peak)


def _factorised(components: Components, dim: int) -> tuple[FirstCoordinateMixture, ScaledGaussianPair | None]:
    """(1-D index-revealed mixture, variance pair on the other n-1 coordinates or None).

    A ratio s = 1 makes the 1-D components Gaussian shifts (or trivial) and drops the variance
    pair; s > 1 is the reversal of the pair with ratio 1/s and shifts mu/s.
    """
    e = components.one_minus_s
    weights = components.weights / (components.weights.sum() + components.dropped)
    variance = None if dim == 1 or e == 0.0 else ScaledGaussianPair(dim - 1, 0.0, 1.0 - e, e)
    if e >= 0.0:
        return FirstCoordinateMixture(weights, components.mus, e), variance
    s = 1.0 - e
    return FirstCoordinateMixture(weights, components.mus / s, -e / s, swapped=True), variance


def merged_components(components: Components, budget: float) -> tuple[Components, Components]:
    """Components merged into groups of neighbouring shifts, each group one component with the
    group's largest / smallest shift: (dominating, dominated) index-revealed mixtures (module
    docstring).

    Rounding a shift mu to mu' changes the component's mean loss E_Q[l] (its KL divergence) by
    (mu'^2 - mu^2)/2; the groups are the coarsest greedy ones whose weighted changes, either
    way, sum to at most ``budget`` per round (fine where the weights are large, coarse in the
    binomial tails).
    ``budget`` 0 merges equal shifts only."""
    if budget < 0.0 or not math.isfinite(budget):
        raise ParameterError(f"merge budget must be a finite number >= 0, got {budget!r}")
    order = np.argsort(components.mus, kind="stable")
    mus, weights = components.mus[order], components.weights[order]
    if budget > 0.0:
        starts = _group_starts(mus, weights, budget)
    else:
        starts = np.flatnonzero(np.concatenate([[True], np.diff(mus) > 0.0]))
    merged_weights = np.add.reduceat(weights, starts)
    e, dropped = components.one_minus_s, components.dropped
    return (
        Components(merged_weights, np.maximum.reduceat(mus, starts), e, dropped),
        Components(merged_weights, np.minimum.reduceat(mus, starts), e, dropped),
    )


def _group_starts(mus: FloatArray, weights: FloatArray, budget: float) -> FloatArray:
    """First indices of greedy groups of the sorted shifts. A group i..j costs its weight times
    (mu_j^2 - mu_i^2)/2, which bounds the change of its mean loss when rounded either way; the
    per-group allowance is bisected so that the costs sum to at most ``budget``."""

    def groups(allowance: float) -> tuple[FloatArray, float]:
        starts, total, i = [], 0.0, 0
        while i < mus.size:
            cost = 0.5 * np.cumsum(weights[i:]) * (mus[i:] ** 2 - mus[i] ** 2)  # increasing in j
            j = i + max(int(np.searchsorted(cost, allowance, side="right")) - 1, 0)
            starts.append(i)
            total += float(cost[j - i])
            i = j + 1
        return np.array(starts), total

    lo, hi = 0.0, budget
    best = groups(0.0)[0]
    for _ in range(_MERGE_BISECTIONS):
        middle = 0.5 * (lo + hi)
        starts, total = groups(middle)
        if total <= budget:
            lo, best = middle, starts
        else:
            hi = middle
    return best


def _two_sided_range(pair: LossPair, h: float) -> tuple[int, int]:
    """One grid for both directions: the pair's range joined with the mirror of its reverse's."""
    k_lo, k_hi = grid_range(pair, h)
    r_lo, r_hi = grid_range(pair.reversed(), h)
    return min(k_lo, -r_hi), max(k_hi, -r_lo)


@overload
def normalized_rounds(
    components: Components,
    dim: int,
    steps: int,
    interval: float | None = None,
    *,
    merge_budget: float | None = None,
    optimistic: Literal[True] = True,
) -> tuple[TwoSidedPLD, TwoSidedPLD]: ...


@overload
def normalized_rounds(
    components: Components,
    dim: int,
    steps: int,
    interval: float | None = None,
    *,
    merge_budget: float | None = None,
    optimistic: Literal[False],
) -> tuple[TwoSidedPLD, None]: ...


def normalized_rounds(
    components: Components,
    dim: int,
    steps: int,
    interval: float | None = None,
    *,
    merge_budget: float | None = None,
    optimistic: bool = True,
) -> tuple[TwoSidedPLD, TwoSidedPLD | None]:
    """T rounds of the per-pair mixture via PLDs: (pessimistic, optimistic), both directions.

    Built as (1-D mixture x variance pair on the other n - 1 coordinates)^T, each factor from its
    loss tails evaluated once for both directions (per round, the variance pair's chi-square has
    n - 1 degrees of freedom, not (n - 1) T, and a small grid). Components are merged
    (``merged_components``) rounding shifts up for the pessimistic PLD and down for the optimistic
    one (docs/theory.md#per-pair-guarantee).

    Parameters
    ----------
    components : Components
        One round's index, from ``normalized_components``.
    dim : int
        Model dimension n, >= 1.
    steps : int
        Number of rounds T, >= 1.
    interval : float, optional
        Grid step; by default ``composed_interval``: ``default_interval(T)``, coarsened where the
        T-round loss would need more than COMPOSED_POINTS grid points (a leak so large that eps is
        in the hundreds or more).
    merge_budget : float, optional
        Grid steps of mean loss over the T rounds the merging may move (default MERGE_BUDGET; 0
        merges equal shifts only).
    optimistic : bool, default True
        Also build the optimistic PLD; False skips it (None), halving the time.

    Returns
    -------
    tuple of (TwoSidedPLD, TwoSidedPLD or None)
        The pessimistic and the optimistic T-round PLDs.

    Examples
    --------
    >>> from dpcheck.privacy.normalized import normalized_components, normalized_rounds
    >>> c = normalized_components(4, 0.5, 10.0, 1 / 5)
    >>> high, low = normalized_rounds(c, 10, 10)
    >>> round(low.epsilon(1e-5), 3), round(high.epsilon(1e-5), 3)
    (25.543, 25.543)
    """
    steps = require_steps("steps", steps)
    if interval is None:
        h = composed_interval(steps, _loss_variance(components, dim))
    else:
        h = require_positive("interval", interval)
    budget = MERGE_BUDGET if merge_budget is None else float(merge_budget)
    per_round = budget * h / steps
    up, down = merged_components(components, per_round)
    upper_first, variance = _factorised(up, dim)
    k_lo, k_hi = _two_sided_range(upper_first, h)
    rest = None if variance is None else _tabulated(variance, h)

    def two_sided(pessimistic: bool) -> TwoSidedPLD:
        first = upper_first if pessimistic else _factorised(down, dim)[0]
        remove = first.tails(k_lo, k_hi - k_lo + 1, h)
        pairs = [(remove, rest), (remove.reversed(), None if rest is None else rest.reversed())]
        sides = []
        for one_d, other in pairs:
            pld = PrivacyLossDistribution.from_tails(one_d, pessimistic=pessimistic)
            if other is not None:
                pld = pld.compose(PrivacyLossDistribution.from_tails(other, pessimistic=pessimistic))
            sides.append(pld.self_compose(steps))
        return TwoSidedPLD(*sides)

    return two_sided(True), (two_sided(False) if optimistic else None)


def _loss_variance(components: Components, dim: int) -> float:
    """The variance of one round's loss, the larger of its laws under P and Q. With z ~ N(0, 1), the 1-D
    component's loss is mu^2/2 + mu s z - (1 - s^2) z^2/2 - log s under Q and
    mu z/s^2 - (1/s^2 - 1) z^2/2 - mu^2/(2 s^2) - log s under P; each variance coordinate adds
    the same with mu = 0."""
    e = components.one_minus_s
    s2 = (1.0 - e) ** 2
    w = components.weights / components.weights.sum()
    mu = components.mus
    spreads = []
    for linear, quadratic, offset in (
        (mu * math.sqrt(s2), (1.0 - s2) / 2.0, mu**2 / 2.0),
        (mu / s2, (1.0 / s2 - 1.0) / 2.0, -(mu**2) / (2.0 * s2)),
    ):
        # a z + b z^2: mean b, variance a^2 + 2 b^2 (the sign of b does not matter)
        means, variances = offset - quadratic, linear**2 + 2.0 * quadratic**2
        mixed = float(np.sum(w * (variances + means**2)) - np.sum(w * means) ** 2)
        spreads.append(max(mixed, 0.0) + (dim - 1) * 2.0 * quadratic**2)
    return max(spreads)


def _tabulated(pair: ScaledGaussianPair, h: float) -> LossTails:
    """The pair's loss tails on one grid that serves both directions."""
    k_lo, k_hi = _two_sided_range(pair, h)
    return pair.tails(k_lo, k_hi - k_lo + 1, h)


def asgm_witness_tradeoff(alpha: ArrayLike, q: float, sigma: float) -> FloatArray:
    """q G_{2/sigma}(alpha) + (1 - q)(1 - alpha): one ASGM step is no better than this
    (docs/theory.md#asgm)."""
    a = np.atleast_1d(as_array(alpha))
    q = require_probability("q", q)
    mu = 2.0 / require_positive("sigma", sigma)
    return q * ndtr(normal_isf(a) - mu) + (1.0 - q) * (1.0 - a)


def asgm_witness_epsilon(
    q: float, sigma: float, steps: int, delta: float, interval: float | None = None
) -> tuple[float, float]:
    """(low, high) bracket of eps_SGM(q, sigma/2, T; delta) (docs/theory.md#asgm).

    ASGM's eps is at least the true value when |B| is observed; only ``low`` (optimistic PLD) is
    a rigorous witness, ``high`` (pessimistic PLD) shows the bracket's width."""
    half = require_positive("sigma", sigma) / 2.0
    return poisson_sgm_pld_bracket(q, half, steps, delta=delta, interval=interval)

