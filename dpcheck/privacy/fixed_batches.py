"""Batches that hold the changed example once per epoch: shuffled, sequential, locally shuffled
or randomly allocated (docs/theory.md#shuffle-deterministic).

Adjacency is **zero-out**: D' is D with one example replaced by one whose clipped gradient is 0,
so N is the same on both sides. For the Poisson subsampled Gaussian this relation gives the same
curve as add/remove (a zeroed example adds what an absent one adds), so the claims of Opacus,
TF-Privacy and dp_accounting are compared like with like.

* **Guarantee** (standard; Chua, Ghazi, Kamath, Kumar, Manurangsi, Sinha, Zhang, "How Private
  are DP-SGD Implementations?", ICML 2024): with the batches fixed in advance, an epoch is M
  Gaussian mechanisms of which exactly one sees the changed example, with sensitivity C and noise
  sigma C, so an epoch is 1/sigma-GDP and E epochs are sqrt(E)/sigma-GDP (adaptive composition;
  exact for fixed batches; a last partial batch changes nothing). A shuffled, locally shuffled or
  randomly allocated run is a mixture of fixed-batch runs with the same weights under D and D',
  and the hockey-stick divergence is jointly convex, so the same mu holds for it.
* **Witness** (the max-statistic pair, docs/theory.md#shuffle-max-statistic): the adversary who
  knows every other gradient subtracts their sums and divides by sigma C; of the M per-batch
  statistics one, at a position it does not know, is shifted by ``high``/sigma under D and
  ``low``/sigma under D'. With every other gradient equal to -C e1 and fixed batch sizes, (low,
  high) = (1, 2) (the pair of Chua et al., ICML 2024 and NeurIPS 2024); with every other gradient
  0, (0, 1) (the model of Ertan & van Dijk 2026, docs/theory.md#shuffle-rounds), which also holds
  for batches of random size. The largest statistic Y has the CDF (1 - p) Phi(y - s/sigma)
  Phi(y)^(M-1) + p Phi(y)^M, p being the chance that the example is in no batch (``drop_last``). Y
  is cut into slices: the pair of slice probabilities is a post-processing of the mechanism's
  output, so its trade-off curve lies above the mechanism's, and an optimistic PLD of it (a
  dominated pair) keeps that side. Epochs with independent shuffles are independent repetitions, so
  the E-fold composition is the E-epoch witness. A persistent order, a sequential order or a local
  shuffle buffer is at least as leaky: relabelling the batch positions of every epoch by an
  independent uniform permutation (a post-processing) turns each of them into independent uniform
  positions.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import log_ndtr

from dpcheck.errors import ParameterError
from dpcheck.privacy._numerics import FloatArray, log_sub_exp, require_positive, require_sigma, require_steps
from dpcheck.privacy.pld import (
    COMPOSED_POINTS,
    MAX_LOSS,
    SPREAD_SDS,
    LossTails,
    PrivacyLossDistribution,
    TwoSidedPLD,
    default_interval,
)

FIXED_SIZE_SHIFTS: tuple[float, float] = (1.0, 2.0)
"""(low, high) of the max-statistic pair when batches have a fixed size (others at -C e1)."""
ZERO_OTHERS_SHIFTS: tuple[float, float] = (0.0, 1.0)
"""(low, high) when every other gradient is 0: valid for any one-batch-per-epoch scheme."""
MAX_SLICES: int = 400_000
"""The most slices the largest statistic is cut into: fewer, wider slices lose a little
tightness (never validity) and bound the work for a tiny sigma."""
_TAIL_LOG: float = -80.0
"""The sliced range of Y ends where the outer tails have probability e^-80 (they stay as two
slices of their own)."""
EPOCH_POINTS: int = 1 << 19
"""The most grid points of one epoch's PLD (a coarser grid only loses tightness)."""
_SPREAD_STEPS: float = 32.0
"""Grid steps per standard deviation of one epoch's loss, at least."""


def deterministic_mu(epochs: int, sigma: float) -> float:
    """sqrt(E)/sigma: the GDP parameter of E epochs of batches holding each example once an epoch.

    Exact for batches fixed in advance, and by joint convexity a guarantee for shuffled, locally
    shuffled or randomly allocated ones, under the zero-out relation
    (docs/theory.md#shuffle-deterministic).

    Parameters
    ----------
    epochs : int
        Epochs E, >= 1.
    sigma : float
        Noise multiplier, >= 1e-3.

    Returns
    -------
    float
        mu = sqrt(E)/sigma.

    Examples
    --------
    >>> from dpcheck.privacy.fixed_batches import deterministic_mu
    >>> from dpcheck.privacy.gdp import gdp_epsilon
    >>> mu = deterministic_mu(10, 1.0)
    >>> round(mu, 4), round(gdp_epsilon(1e-5, mu), 2)
    (3.1623, 17.86)
    """
    return math.sqrt(require_steps("epochs", epochs)) / require_sigma("sigma", sigma)


@dataclass(frozen=True)
class MaxStatisticPair:
    """The law of the largest of M per-batch statistics under D' (shift ``low``/sigma) and D
    (shift ``high``/sigma), the changed example missing from the epoch with probability
    ``miss``. ``log_cdf`` and ``log_sf`` are exact in log space at both ends."""

    rounds: int
    sigma: float
    low: float
    high: float
    miss: float = 0.0

    def __post_init__(self) -> None:
        require_steps("rounds per epoch M", self.rounds)
        require_sigma("sigma", self.sigma)
        if not 0.0 <= self.low < self.high:
            raise ParameterError(f"the max-statistic shifts must satisfy 0 <= low < high, got {self.low}, {self.high}")
        if not 0.0 <= self.miss < 1.0:
            raise ParameterError(f"the miss probability must lie in [0, 1), got {self.miss!r}")

    def log_cdf(self, y: FloatArray, shift: float) -> FloatArray:
        """log P(Y <= y) with the changed example's batch shifted by ``shift``/sigma."""
        present = log_ndtr(y - shift / self.sigma) + (self.rounds - 1) * log_ndtr(y)
        if self.miss == 0.0:
            return present
        absent = self.rounds * log_ndtr(y)
        return np.logaddexp(math.log1p(-self.miss) + present, math.log(self.miss) + absent)

    def log_sf(self, y: FloatArray, shift: float) -> FloatArray:
        """log P(Y > y). From the CDF's logarithm while the CDF is below 1 - 1e-8; beyond, the
        union bound sum_i P(X_i > y), whose relative error is at most P(Y > y) itself (the
        CDF's logarithm has underflowed to 0 long before the tail does)."""
        log_cdf = np.minimum(self.log_cdf(y, shift), 0.0)
        far = -log_cdf < 1e-8
        with np.errstate(divide="ignore"):
            direct = np.log(-np.expm1(log_cdf))
            rest = math.log(self.rounds - 1) + log_ndtr(-y) if self.rounds > 1 else np.full_like(y, -np.inf)
            present = np.logaddexp(log_ndtr(-(y - shift / self.sigma)), rest)
            union = present if self.miss == 0.0 else np.logaddexp(
                math.log1p(-self.miss) + present, math.log(self.miss) + math.log(self.rounds) + log_ndtr(-y))
        return np.where(far, union, direct)

    def _end(self, log_tail: float, upper: bool) -> float:
        """The y where the lower tail under D' (``upper=False``) or the upper tail under D falls
        to e^log_tail: bisection between -40 (where the lower tail is below e^-800 and the upper
        one is 1) and a point found by doubling."""
        def rising(y: float) -> float:
            arr = np.array([y])
            value = -self.log_sf(arr, self.high) if upper else self.log_cdf(arr, self.low)
            return float(value[0]) - (-log_tail if upper else log_tail)

        inner, outer = -40.0, 1.0
        while rising(outer) < 0.0:
            outer *= 2.0
        for _ in range(100):
            middle = 0.5 * (inner + outer)
            inner, outer = (middle, outer) if rising(middle) < 0.0 else (inner, middle)
        return outer

    def slice_edges(self, interval: float) -> FloatArray:
        """Edges y_0 < ... < y_K of the slices: wide enough that the loss changes by about
        ``interval`` across one, at most MAX_SLICES of them."""
        lo, hi = self._end(_TAIL_LOG, upper=False), self._end(_TAIL_LOG, upper=True)
        coarse = np.linspace(lo, hi, 2001)
        _, _, loss = self._masses(coarse)
        with np.errstate(invalid="ignore"):
            slopes = np.abs(np.diff(loss[1:-1])) / np.diff(coarse)[:-1]
        finite = slopes[np.isfinite(slopes)]
        slope = float(finite.max()) if finite.size else 1.0
        count = int(min(max((hi - lo) * max(slope, 1e-12) / interval, 1.0), MAX_SLICES))
        return np.linspace(lo, hi, count + 1)

    def _masses(self, edges: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
        """(log P-mass, log Q-mass, loss) of the slices (-inf, y_0], (y_k, y_k+1], (y_K, inf)."""
        logs = []
        for shift in (self.low, self.high):
            cdf, sf = self.log_cdf(edges, shift), self.log_sf(edges, shift)
            lower_half = cdf[1:] < math.log(0.5)
            with np.errstate(invalid="ignore"):
                inner = np.where(lower_half, log_sub_exp(cdf[1:], cdf[:-1]), log_sub_exp(sf[:-1], sf[1:]))
            logs.append(np.concatenate([[cdf[0]], inner, [sf[-1]]]))
        log_p, log_q = logs
        with np.errstate(invalid="ignore"):
            return log_p, log_q, np.where(np.isfinite(log_p) & np.isfinite(log_q), log_q - log_p, np.nan)

    def atoms(self, interval: float) -> tuple[FloatArray, FloatArray, FloatArray]:
        """(P-mass, Q-mass, loss) of the sliced pair, sorted by loss; slices of zero mass on
        either side (underflow far in a tail) are dropped, which only lowers the leak shown."""
        log_p, log_q, loss = self._masses(self.slice_edges(interval))
        keep = np.isfinite(log_p) & np.isfinite(log_q)
        order = np.argsort(loss[keep], kind="stable")
        return np.exp(log_p[keep][order]), np.exp(log_q[keep][order]), loss[keep][order]


def _atom_tails(p: FloatArray, q: FloatArray, loss: FloatArray, interval: float) -> LossTails:
    """The four loss tails of a discrete pair (atoms sorted by loss) on the grid of step
    ``interval`` spanning its losses (clipped to +-MAX_LOSS): sums from the top for the upper
    tails and from the bottom for the lower ones, so small tails keep their digits."""
    lo = max(float(loss[0]), -MAX_LOSS)
    hi = min(float(loss[-1]), MAX_LOSS)
    k_lo, k_hi = int(math.floor(lo / interval)), int(math.ceil(hi / interval))
    grid = np.arange(k_lo, k_hi + 1) * interval
    first = np.searchsorted(loss, grid, side="left")

    def above(mass: FloatArray) -> FloatArray:
        return np.concatenate([np.cumsum(mass[::-1])[::-1], [0.0]])[first]

    def below(mass: FloatArray) -> FloatArray:
        return np.concatenate([[0.0], np.cumsum(mass)])[first]

    return LossTails(interval, k_lo, above(p), below(p), above(q), below(q))


def _loss_variance(p: FloatArray, q: FloatArray, loss: FloatArray) -> float:
    """The larger variance of one epoch's loss under P and under Q."""
    finite = np.clip(loss, -MAX_LOSS, MAX_LOSS)
    out = []
    for mass in (p, q):
        w = mass / mass.sum()
        mean = float(np.sum(w * finite))
        out.append(float(np.sum(w * (finite - mean) ** 2)))
    return max(out)


def epoch_interval(epochs: int, loss_variance: float) -> float:
    """The grid step for E epochs of a loss of the given one-epoch variance: the default step,
    finer where one epoch's loss spans few of them (at least _SPREAD_STEPS per standard
    deviation), never so fine that the E-epoch loss needs more than COMPOSED_POINTS points."""
    e = require_steps("epochs", epochs)
    sd = math.sqrt(max(loss_variance, 0.0))
    finest = 2.0 * SPREAD_SDS * sd * math.sqrt(e) / COMPOSED_POINTS
    wanted = min(default_interval(e), sd / _SPREAD_STEPS) if sd > 0.0 else default_interval(e)
    return max(wanted, finest, 1e-7)


@dataclass(frozen=True)
class EpochWitness:
    """A max-statistic witness over ``epochs`` epochs: both directions, optimistic (dominated)
    PLDs, and what it cost (slices of Y, grid step and points of one epoch)."""

    pld: TwoSidedPLD
    epochs: int
    slices: int
    interval: float
    points: int

    def describe(self) -> str:
        """How it was computed, for notes and the computation record."""
        times = "not composed" if self.epochs == 1 else f"composed {self.epochs} times by FFT"
        return (f"max-statistic PLD: Y cut into {self.slices} slices, one epoch on {self.points} grid points "
                f"at step {self.interval:.3g}, {times} (optimistic, both directions)")


def max_statistic_witnesses(
    pair: MaxStatisticPair, epochs: int, interval: float | None = None
) -> tuple[EpochWitness, EpochWitness]:
    """One epoch and E epochs of the sliced max-statistic pair: optimistic PLDs, both directions.

    Valid witnesses: their delta never exceeds the mechanism's and their curves never lie below it
    (docs/theory.md#shuffle-max-statistic). Both come from one grid; the work does not grow with E
    beyond the 2 log2 E products of the composition.

    Parameters
    ----------
    pair : MaxStatisticPair
        M, sigma, the shifts (low, high) and the chance the example misses an epoch.
    epochs : int
        Epochs E, >= 1.
    interval : float, optional
        Grid step of the loss; by default ``epoch_interval(E, ...)``, coarsened so that one epoch
        needs at most EPOCH_POINTS points.

    Returns
    -------
    tuple of EpochWitness
        (one epoch, E epochs); the same object twice when E = 1.

    Examples
    --------
    At sigma = 0.35 shuffling buys nothing: two epochs of the witness meet the deterministic-batch
    guarantee sqrt(2)/sigma-GDP.

    >>> from dpcheck.privacy.fixed_batches import (
    ...     FIXED_SIZE_SHIFTS, MaxStatisticPair, deterministic_mu, max_statistic_witnesses)
    >>> from dpcheck.privacy.gdp import gdp_epsilon
    >>> pair = MaxStatisticPair(1000, 0.35, *FIXED_SIZE_SHIFTS)
    >>> one, two = max_statistic_witnesses(pair, 2)
    >>> round(one.pld.epsilon(1e-5), 3), round(two.pld.epsilon(1e-5), 3)
    (15.658, 24.716)
    >>> round(gdp_epsilon(1e-5, deterministic_mu(2, 0.35)), 3)
    24.716
    """
    e = require_steps("epochs", epochs)
    first = 1e-3 if interval is None else require_positive("interval", interval)
    p, q, loss = pair.atoms(first)
    h = first
    if interval is None:
        span = min(float(loss[-1]), MAX_LOSS) - max(float(loss[0]), -MAX_LOSS)
        h = max(epoch_interval(e, _loss_variance(p, q, loss)), span / EPOCH_POINTS)
        if h < first:
            p, q, loss = pair.atoms(h)
    tails = _atom_tails(p, q, loss, h)
    one = [PrivacyLossDistribution.from_tails(t, pessimistic=False) for t in (tails, tails.reversed())]
    size = int(tails.p_above.size)
    single = EpochWitness(TwoSidedPLD(*one), 1, int(p.size), h, size)
    if e == 1:
        return single, single
    composed = EpochWitness(TwoSidedPLD(*(side.self_compose(e) for side in one)), e, int(p.size), h, size)
    return single, composed
