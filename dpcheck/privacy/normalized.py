"""Per-pair analysis of normalized DP-SGD: EASGM, FEASGM, ASGM (math-spec §3.2-§3.5, §5.2).

The worst-case pair of §3.2 (every record's clipped gradient C e1, the target's -C e1) turns each
round into an index-revealed mixture over k = |B ∩ D| ~ Bin(N, q) and j (target sampled or not)
of components T(N(0, I_n), N(mu e1, s^2 I_n)) (``ScaledGaussianPair``): with s = d(N)/d(N+1),
mu = k(1-s)/sigma when the target is not sampled and (k(1-s) + s)/sigma when it is.

* ``normalized_mixture`` / ``easgm_mixture`` / ``feasgm_mixture`` / ``asgm_mixture`` build the
  one-round mixtures (label *reconstructed*: the papers' theorem texts were not recovered, and
  revealing (k, j) makes this a per-pair lower bound, not a certificate for the mechanism).
* ``normalized_rounds`` composes T rounds through PLDs. All components share s and n, and each is
  the product of a 1-D pair in x1 and the pure variance pair on the other n-1 coordinates, so the
  mixture factorises as (1-D index-revealed mixture) x (variance pair). T rounds are then
  (1-D mixture)^T x (variance pair on (n-1) T coordinates): exact, and fast for n ~ 1e6.
* The ASGM witness (§5.2, label *own*): at least as leaky as SGM at sigma/2 (batch size observed).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import ndtr
from scipy.stats import binom, norm

from dpcheck.errors import ParameterError
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
from dpcheck.privacy.pld import PrivacyLossDistribution, TwoSidedPLD, default_interval
from dpcheck.privacy.protocols import LossPair
from dpcheck.privacy.sgm import poisson_sgm_pld_bracket

BINOMIAL_SDS: float = 10.0
"""Keep k within N q +- this many standard deviations (§3.3) ..."""

BINOMIAL_TAIL: float = 1e-18
"""... widened to the binomial quantiles at this tail mass, so the dropped mass stays negligible
next to the PLD tail truncation (1e-16) even when N q is small and the tails are heavy."""


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
    lo, hi = min(math.floor(n_records * q), n_records), n_records
    if binom.sf(lo, n_records, q) <= tail:
        return lo
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if binom.sf(mid, n_records, q) <= tail else (mid, hi)
    return hi


def _batch_range(n_records: int, q: float) -> tuple[FloatArray, FloatArray, float]:
    """k values, their Bin(N, q) probabilities, and the mass outside the kept range."""
    centre, sd = n_records * q, math.sqrt(n_records * q * (1.0 - q))
    lo = min(math.floor(centre - BINOMIAL_SDS * sd), int(binom.ppf(BINOMIAL_TAIL, n_records, q)))
    hi = max(math.ceil(centre + BINOMIAL_SDS * sd), _upper_quantile(n_records, q, BINOMIAL_TAIL))
    k = np.arange(max(lo, 0), min(hi, n_records) + 1, dtype=float)
    pmf = binom.pmf(k, n_records, q)
    return k, pmf, max(1.0 - float(pmf.sum()), 0.0)


def normalized_components(
    n_records: int, q: float, sigma: float, one_minus_s: float
) -> Components:
    """The index (k, j) for |D| = N, divisor ratio s = 1 - ``one_minus_s`` (§3.2).

    w(k,1) = b(k)(1-q) with mu = k(1-s)/sigma; w(k,2) = b(k) q with mu = (k(1-s) + s)/sigma.
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
    """EASGM (Thm 3.8, reconstructed): s = N/(N+1), 1 - s = 1/(N+1) exactly."""
    return normalized_mixture(n_records, q, sigma, dim, 1.0 / (int(n_records) + 1))


def feasgm_mixture(check: DivisorCheck, q: float, sigma: float, dim: int) -> Mixture:
    """FEASGM (§3.5): the EASGM-style mixture with s = d(N)/d(N+1) from the code's divisor.

    When the two divisors are equal the mixture is exactly the revealed-index SGM mixture."""
    return normalized_mixture(check.n, q, sigma, dim, check.one_minus_s_add)


def asgm_mixture(n_records: int, q: float, sigma: float, dim: int) -> Mixture:
    """ASGM (Thm 3.10, reconstructed): j = 1 trivial; j = 2 has s = k/(k+1), mu = 2k/((k+1) sigma);
    the empty batch (k = 0) is taken as divisor max(|B|, 1), giving G_{1/sigma}."""
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

    def hockey_stick(self, eps: FloatArray) -> FloatArray:
        """delta_{Q||P}(eps) = 1 - beta(eps) - e^eps alpha(eps), from one pass over the components
        (the PLD builder's pessimistic route calls this on its whole grid)."""
        e = as_array(eps)
        first, second = self._probs(-e if self.swapped else e)
        alpha, beta = (second, first) if self.swapped else (first, second)
        return np.maximum(1.0 - beta - np.exp(e) * alpha, 0.0)

    def reversed(self) -> FirstCoordinateMixture:
        if self.one_minus_s == 0.0:
            return self  # Gaussian shifts and trivial pairs are their own reverses
        return FirstCoordinateMixture(self.weights, self.mus, self.one_minus_s, not self.swapped)


def _factorised(components: Components, dim: int) -> tuple[LossPair, LossPair | None]:
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


def normalized_rounds(
    components: Components, dim: int, steps: int, interval: float | None = None
) -> tuple[TwoSidedPLD, TwoSidedPLD]:
    """T rounds of the per-pair mixture via PLDs: (pessimistic, optimistic), both directions.

    Built as (1-D mixture)^T composed with the variance pair on (n-1) T coordinates."""
    steps = require_steps("steps", steps)
    h = default_interval(steps) if interval is None else require_positive("interval", interval)
    first, variance = _factorised(components, dim)
    many = None
    if variance is not None:
        assert isinstance(variance, ScaledGaussianPair)
        many = ScaledGaussianPair(variance.n * steps, 0.0, variance.s, variance.one_minus_s)

    def side(pair: LossPair, rest: LossPair | None, pessimistic: bool) -> PrivacyLossDistribution:
        pld = PrivacyLossDistribution.from_pair(pair, h, pessimistic=pessimistic).self_compose(steps)
        if rest is None:
            return pld
        return pld.compose(PrivacyLossDistribution.from_pair(rest, h, pessimistic=pessimistic))

    def two_sided(pessimistic: bool) -> TwoSidedPLD:
        return TwoSidedPLD(
            side(first, many, pessimistic),
            side(first.reversed(), None if many is None else many.reversed(), pessimistic),
        )

    return two_sided(True), two_sided(False)


def easgm_rounds(
    n_records: int, q: float, sigma: float, dim: int, steps: int, interval: float | None = None
) -> tuple[TwoSidedPLD, TwoSidedPLD]:
    """T rounds of the EASGM per-pair guarantee (reconstructed), pessimistic and optimistic."""
    n_records, q, sigma, dim = _require_setting(n_records, q, sigma, dim)
    components = normalized_components(n_records, q, sigma, 1.0 / (n_records + 1))
    return normalized_rounds(components, dim, steps, interval)


def asgm_witness_tradeoff(alpha: ArrayLike, q: float, sigma: float) -> FloatArray:
    """q G_{2/sigma}(alpha) + (1 - q)(1 - alpha): one ASGM step is no better than this (§5.2)."""
    a = np.atleast_1d(as_array(alpha))
    q = require_probability("q", q)
    mu = 2.0 / require_positive("sigma", sigma)
    return q * ndtr(norm.isf(a) - mu) + (1.0 - q) * (1.0 - a)


def asgm_witness_epsilon(
    q: float, sigma: float, steps: int, delta: float, interval: float | None = None
) -> tuple[float, float]:
    """(low, high) bracket of eps_SGM(q, sigma/2, T; delta) (§5.2).

    ASGM's eps is at least the true value when |B| is observed; only ``low`` (optimistic PLD) is
    a rigorous witness, ``high`` (pessimistic PLD) shows the bracket's width."""
    half = require_positive("sigma", sigma) / 2.0
    return poisson_sgm_pld_bracket(q, half, steps, delta=delta, interval=interval)


def asgm_witness_delta(
    q: float, sigma: float, steps: int, epsilon: float, interval: float | None = None
) -> tuple[float, float]:
    """(low, high) bracket of delta_SGM(q, sigma/2, T; eps): ASGM's delta at eps is at least
    the true value; ``low`` is the rigorous witness."""
    half = require_positive("sigma", sigma) / 2.0
    return poisson_sgm_pld_bracket(q, half, steps, epsilon=epsilon, interval=interval)
