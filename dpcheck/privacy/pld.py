"""Privacy-loss distributions on a grid and their T-fold composition (docs/theory.md#sgm-pld).

A ``PrivacyLossDistribution`` holds the law under Q of the loss L = log dQ/dP, discretised on
l_k = k h: Q-masses at consecutive grid points from ``offset`` on, plus the mass at +inf. It is
built from any ``LossPair`` (``from_pair``) or from the pair's four loss tails on the grid
(``from_tails``, for pairs that compute them in one pass). Write x = e^eps and
g(x) = delta(eps); g is convex in x, and a grid PLD is exactly a pair whose g is piecewise
linear with kinks at the grid points.

* pessimistic, "connect the dots" (Doroshenko et al. 2022, the default): the chords of g
  between grid points; they lie above the convex g, and the pair they define dominates the true
  one (second-order error in h);
* optimistic, "connect the dots from below" (the default, own construction): a convex piecewise
  linear minorant of g with kinks at the grid points, built from g and its slopes
  -P(L >= eps) there (``_connect_dots_below``); a genuine pair dominated by the true one, whose
  few off-grid atoms are rounded down; also second order in h;
* pessimistic / optimistic by rounding the loss up / down (``connect_dots=False``): first order.

Every construction is a dominating (pessimistic) or dominated (optimistic) pair, or a pointwise
rounding of one, so the bracket survives composition.

Composition is FFT convolution by repeated squaring. After each product, entries under the
round-off floor (1e-13 of the largest) and tails of mass 1e-16 are moved to the next kept atom
(up for pessimistic, down for optimistic; past the ends to +inf / dropped to -inf), so every
step keeps its direction.

One module over 500 lines on purpose: the grid, its construction from a pair, its composition
and its read-outs share the rounding invariants (pessimistic and optimistic, the mass at +inf)
that each of them must keep; split, every part would have to re-state them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import ArrayLike
from scipy.fft import irfft, next_fast_len, rfft
from scipy.signal import lfilter

from dpcheck.errors import ParameterError
from dpcheck.privacy._numerics import (
    FloatArray,
    as_array,
    require_alpha,
    require_delta,
    require_positive,
    require_steps,
    scalar_or_array,
)
from dpcheck.privacy.protocols import LossPair
from dpcheck.privacy.tradeoff import convex_minorant, default_alpha_grid, hockey_stick

TAIL_MASS = 1e-16
ROUNDOFF_FLOOR = 1e-13
MAX_POINTS = 20_000_000
MAX_LOSS = 500.0
"""The grid ends at |loss| <= this (e^500 ~ 1e217 keeps every product finite); a one-round loss
beyond it is a leak no guarantee survives, and its mass goes to +inf (pessimistic)."""
COMPOSED_POINTS: int = 1 << 18
"""Largest T-round grid (points) aimed for by ``composed_interval``."""
SPREAD_SDS: float = 10.0
"""Half-width, in standard deviations, of the T-round loss range that the grid must hold."""
_SLACK = 8.0 * np.finfo(float).eps
OPTIMISTIC_REFINEMENT = 2
_MAX_DOUBLINGS = 40
_REFINE_STEPS = 6


def default_interval(steps: int) -> float:
    """The grid step h of the loss for ``steps`` rounds.

    The connect-the-dots error in eps grows like T^0.7 h^2 (measured on SGM), so h shrinks slowly
    with T: 5e-4 at T = 10^4, 8.9e-4 at T = 1000, within [1e-4, 1e-3]. At T = 1000 and 10^4
    (q = 0.01, sigma = 1) this is 1.3x and 3.5x more accurate than dp_accounting at h = 1e-3, in
    less time (bench/bench_sgm_accounting.py; docs/theory.md#sgm-pld).

    Parameters
    ----------
    steps : int
        Number of rounds T, >= 1.

    Returns
    -------
    float
        h.

    Examples
    --------
    >>> from dpcheck.privacy.pld import default_interval
    >>> round(default_interval(1000), 6), default_interval(10_000), default_interval(10)
    (0.000889, 0.0005, 0.001)
    """
    return float(np.clip(5e-4 * (1e4 / require_steps("steps", steps)) ** 0.25, 1e-4, 1e-3))


def composed_interval(steps: int, loss_variance: float) -> float:
    """``default_interval(T)``, coarsened so that the T-round loss fits in COMPOSED_POINTS points.

    The T-round loss is taken to span 2 SPREAD_SDS standard deviations, one round's loss variance
    being ``loss_variance``. A leak that large has an eps in the hundreds or more, where a coarser
    grid costs little relative accuracy and the work of composing stays bounded; a coarser grid
    keeps every estimate on its side, pessimistic or optimistic (docs/theory.md#sgm-pld).

    Parameters
    ----------
    steps : int
        Number of rounds T, >= 1.
    loss_variance : float
        Variance of one round's privacy loss (the larger of its laws under P and Q).

    Returns
    -------
    float
        The grid step.

    Examples
    --------
    >>> from dpcheck.privacy.pld import composed_interval
    >>> round(composed_interval(1000, 0.01), 6), round(composed_interval(1000, 1e4), 4)
    (0.000889, 0.2413)
    """
    spread = 2.0 * SPREAD_SDS * math.sqrt(require_steps("steps", steps) * max(float(loss_variance), 0.0))
    return max(default_interval(steps), spread / COMPOSED_POINTS)


@dataclass(frozen=True)
class LossTails:
    """The four tails of the loss l = log dQ/dP of a pair on the grid l_k = (offset + k) h:
    P(l >= l_k), P(l < l_k), Q(l >= l_k), Q(l < l_k), each accurate where it is small.

    Mass at l = +inf (Q only) belongs to ``q_above``, mass at -inf (P only) to ``p_below``.
    At an atom of the loss on a grid point the >= / < split may fall either way: every
    construction here only needs the tails up to that ambiguity."""

    interval: float
    offset: int
    p_above: FloatArray
    p_below: FloatArray
    q_above: FloatArray
    q_below: FloatArray

    @property
    def losses(self) -> FloatArray:
        """The grid points."""
        return (self.offset + np.arange(self.p_above.size)) * self.interval

    def reversed(self) -> LossTails:
        """The tails of (Q, P), whose loss is -l, on the mirrored grid: P'(l' >= t) = Q(l <= -t)."""
        return LossTails(
            self.interval,
            -(self.offset + self.p_above.size - 1),
            self.q_below[::-1],
            self.q_above[::-1],
            self.p_below[::-1],
            self.p_above[::-1],
        )


@dataclass(frozen=True)
class PrivacyLossDistribution:
    """Q-law of the privacy loss on the grid l_k = k * interval, k = offset, offset + 1, ...

    ``probs[i]`` is the Q-mass at loss (offset + i) * interval; ``infinity_mass`` is Q(L = +inf);
    any mass missing from the total is at -inf (it carries no Q-weight in delta)."""

    interval: float
    offset: int
    probs: FloatArray
    infinity_mass: float
    pessimistic: bool

    @property
    def losses(self) -> FloatArray:
        """The loss value of each entry of ``probs``."""
        return (self.offset + np.arange(self.probs.size)) * self.interval

    @classmethod
    def from_pair(
        cls,
        pair: LossPair,
        interval: float,
        *,
        pessimistic: bool = True,
        connect_dots: bool = True,
        tail_mass: float = TAIL_MASS,
    ) -> PrivacyLossDistribution:
        """Discretise the loss of ``pair`` (Q-side) on the grid of step ``interval``:
        connect-the-dots (from above when ``pessimistic``, from below otherwise) or, with
        ``connect_dots=False``, rounding the loss up / down."""
        h = require_positive("interval", interval)
        k_lo, k_hi = grid_range(pair, h, tail_mass)
        eps = np.arange(k_lo, k_hi + 1) * h
        if not connect_dots:
            probs, inf_mass = _rounded(pair.beta(eps), pessimistic)
            return cls(h, k_lo, probs, inf_mass, pessimistic)._trimmed(tail_mass, floor=0.0)
        delta = hockey_stick(pair, eps)
        reverse = np.exp(eps) * hockey_stick(pair.reversed(), -eps)
        if pessimistic:
            probs, inf_mass = _connect_dots(delta, reverse, h)
            return cls(h, k_lo, probs, inf_mass, True)._trimmed(tail_mass, floor=0.0)
        # P(l < eps) = (reverse + Q(l < eps)) e^-eps keeps its digits where it is small.
        below = (reverse + pair.beta(eps)) * np.exp(-eps)
        probs = _connect_dots_below(np.exp(eps), delta, reverse, pair.alpha(eps), below)
        return cls(h, k_lo, probs, 0.0, False)._trimmed(tail_mass, floor=0.0)

    @classmethod
    def from_tails(
        cls, tails: LossTails, *, pessimistic: bool, tail_mass: float = TAIL_MASS
    ) -> PrivacyLossDistribution:
        """Connect-the-dots (from above when ``pessimistic``, from below otherwise) from the
        pair's loss tails on the grid; delta and its mirror come from whichever tails are small."""
        x = np.exp(tails.losses)
        delta = np.maximum(tails.q_above - x * tails.p_above, 0.0)
        reverse = np.maximum(x * tails.p_below - tails.q_below, 0.0)
        if pessimistic:
            probs, inf_mass = _connect_dots(delta, reverse, tails.interval)
        else:
            probs, inf_mass = _connect_dots_below(x, delta, reverse, tails.p_above, tails.p_below), 0.0
        pld = cls(tails.interval, tails.offset, probs, inf_mass, pessimistic)
        return pld._trimmed(tail_mass, floor=0.0)

    def compose(self, other: PrivacyLossDistribution) -> PrivacyLossDistribution:
        """The PLD of the pair product: convolution of the finite parts, infinity masses combined
        as 1 - (1 - p1)(1 - p2)."""
        if other.interval != self.interval or other.pessimistic != self.pessimistic:
            raise ValueError("composing PLDs needs the same interval and the same direction")
        size = self.probs.size + other.probs.size - 1
        n = next_fast_len(size, real=True)
        spectrum = rfft(self.probs, n)
        # A square (``self_compose``) transforms once: the same input has the same transform.
        # Both factors are named, so numpy multiplies out of place, with the same complex
        # loop (and the same last bits) as for two temporaries; a temporary right factor
        # would be overwritten in place, by another loop.
        other_spectrum = spectrum if other is self else rfft(other.probs, n)
        conv = irfft(spectrum * other_spectrum, n)[:size]
        inf_mass = 1.0 - (1.0 - self.infinity_mass) * (1.0 - other.infinity_mass)
        product = replace(self, offset=self.offset + other.offset, probs=conv, infinity_mass=inf_mass)
        return product._trimmed(TAIL_MASS, floor=ROUNDOFF_FLOOR)

    def self_compose(self, steps: int) -> PrivacyLossDistribution:
        """T-fold composition by repeated squaring (about 2 log2 T FFT products)."""
        remaining = require_steps("steps", steps)
        result: PrivacyLossDistribution | None = None
        power = self
        while True:
            if remaining & 1:
                result = power if result is None else result.compose(power)
            remaining >>= 1
            if not remaining:
                assert result is not None
                return result
            power = power.compose(power)

    def _trimmed(self, tail_mass: float, floor: float) -> PrivacyLossDistribution:
        """Zero the entries under ``floor`` times the largest (FFT round-off) and the two tails
        of mass ``tail_mass``, moving their mass in the estimate's direction; cut the zero ends."""
        p = np.clip(self.probs, 0.0, None)
        keep = (p > 0.0) & (p >= floor * p.max())
        keep &= np.cumsum(p) > tail_mass
        keep &= np.cumsum(p[::-1])[::-1] > tail_mass
        if not np.any(keep):
            keep[np.argmax(p)] = True
        p, beyond = _move_dropped(p, keep, up=self.pessimistic)
        first, last = np.flatnonzero(keep)[[0, -1]]
        inf_mass = self.infinity_mass + (beyond if self.pessimistic else 0.0)
        return replace(
            self, offset=self.offset + int(first), probs=p[first : last + 1], infinity_mass=inf_mass
        )

    def _suffix_sums(self) -> tuple[FloatArray, FloatArray]:
        """mass_j = sum_{k >= j} p_k and tilted_j = sum_{k >= j} p_k e^{-(l_k - l_j)}, computed
        from the top (a stable first-order recursion) so that small tails keep their digits."""
        rev = self.probs[::-1]
        mass = np.cumsum(rev)[::-1]
        decay = np.exp(-self.interval)
        tilted = lfilter([1.0], [1.0, -decay], rev)[::-1]
        return mass, tilted

    def delta(self, eps: ArrayLike) -> FloatArray | float:
        """delta_{Q||P}(eps) = p_inf + sum_{l_k > eps} p_k (1 - e^{eps - l_k})."""
        e = as_array(eps)
        mass, tilted = self._suffix_sums()
        mass = np.append(mass, 0.0)
        tilted = np.append(tilted, 0.0)
        j = np.searchsorted(self.losses, e.ravel(), side="right")
        l_j = (self.offset + j) * self.interval
        # l_j > eps except past the last atom, where tilted is 0 (and the exponent may overflow)
        tail = mass[j] - np.exp(np.minimum(e.ravel() - l_j, 0.0)) * tilted[j]
        out = self.infinity_mass + np.maximum(tail, 0.0)
        return scalar_or_array(np.minimum(out, 1.0).reshape(e.shape), eps)

    def epsilon(self, delta: float) -> float:
        """The smallest eps >= 0 with delta(eps) <= ``delta``, solved exactly on the segment
        where delta crosses (between grid points delta is A - e^eps B); +inf if the infinity
        mass alone exceeds ``delta``."""
        d = require_delta("delta", delta)
        if self.infinity_mass >= d:
            return float("inf")
        at_grid = as_array(self.delta(self.losses))
        j = int(np.searchsorted(-at_grid, -d, side="left"))
        # eps lies in (l_{j-1}, l_j]: there delta(eps) = p_inf + A_j - e^{eps - l_j} B_j.
        mass, tilted = self._suffix_sums()
        l_j = (self.offset + j) * self.interval
        eps = l_j + np.log((self.infinity_mass + mass[j] - d) / tilted[j])
        return max(float(eps), 0.0)

    def tradeoff(self, alpha: ArrayLike) -> FloatArray | float:
        """The trade-off of the discretised pair (docs/theory.md#sgm-pld): the P-mass of
        atom l is e^{-l} q_l; reject the largest losses first, randomising on the boundary
        atom. The +inf atom has no P-mass, so beta(0) = 1 - p_inf."""
        a = require_alpha(alpha)
        p_mass = self.probs * np.exp(-self.losses)
        alpha_above = np.concatenate([np.cumsum(p_mass[::-1])[::-1], [0.0]])
        beta_below = np.concatenate([[0.0], np.cumsum(self.probs)])
        flat = a.ravel()
        # Atom j is the boundary: alpha_above[j+1] <= alpha < alpha_above[j]; j = -1 when
        # alpha exceeds the whole finite P-mass (then every finite atom is rejected).
        j = np.searchsorted(-alpha_above, -flat, side="left") - 1
        jj = np.clip(j, 0, self.probs.size - 1)
        frac = np.divide(
            flat - alpha_above[jj + 1], p_mass[jj], out=np.zeros_like(flat), where=p_mass[jj] > 0
        )
        beta = beta_below[jj] + (1.0 - np.clip(frac, 0.0, 1.0)) * self.probs[jj]
        beta = np.where(j < 0, 0.0, beta)
        return scalar_or_array(np.clip(beta, 0.0, 1.0).reshape(a.shape), alpha)


@dataclass(frozen=True)
class TwoSidedPLD:
    """The remove-direction PLD (pair) and the add-direction PLD (pair.reversed()), composed
    alike; every read-out is the worse of the two directions."""

    remove: PrivacyLossDistribution
    add: PrivacyLossDistribution

    def delta(self, eps: ArrayLike) -> FloatArray | float:
        """max of the two directions' delta(eps)."""
        both = np.maximum(as_array(self.remove.delta(eps)), as_array(self.add.delta(eps)))
        return scalar_or_array(both, eps)

    def epsilon(self, delta: float) -> float:
        """max of the two directions' eps(delta)."""
        return max(self.remove.epsilon(delta), self.add.epsilon(delta))

    def tradeoff(self, alpha: ArrayLike) -> FloatArray | float:
        """The symmetric curve: lower convex envelope of min(remove curve, add curve), formed
        on a dense grid that contains ``alpha``."""
        a = require_alpha(alpha)
        grid = default_alpha_grid(a)
        lower = np.minimum(as_array(self.remove.tradeoff(grid)), as_array(self.add.tradeoff(grid)))
        env = np.interp(a.ravel(), grid, convex_minorant(grid, lower))
        return scalar_or_array(env.reshape(a.shape), alpha)


def compose_both_directions(
    pair: LossPair, steps: int, interval: float, *, optimistic: bool = True
) -> tuple[TwoSidedPLD | None, TwoSidedPLD]:
    """T rounds of ``pair`` in both directions as the bracket (optimistic, pessimistic) of PLDs.

    The truth lies between (docs/theory.md#sgm-pld). The optimistic PLD is built at
    ``interval / OPTIMISTIC_REFINEMENT``: connect-the-dots from below lowers the profile at the grid
    points too, where the one from above is exact, and on a loss law that spans few grid steps per
    round (SGM with small q) its error is 4-8 times larger at equal interval; halving the interval
    brings the two sides to about the same error.

    Parameters
    ----------
    pair : LossPair
        One round's pair (remove direction; ``pair.reversed()`` is the add direction).
    steps : int
        Number of rounds T, >= 1.
    interval : float
        Grid step of the pessimistic PLD.
    optimistic : bool, default True
        Also build the optimistic PLD; False skips it (None).

    Returns
    -------
    tuple of (TwoSidedPLD or None, TwoSidedPLD)
        (optimistic, pessimistic).

    Examples
    --------
    Four rounds of 1-GDP are 2-GDP exactly:

    >>> from dpcheck.privacy.gdp import GaussianShiftPair, gdp_epsilon
    >>> from dpcheck.privacy.pld import compose_both_directions
    >>> low, high = compose_both_directions(GaussianShiftPair(1.0), 4, 1e-3)
    >>> round(low.epsilon(1e-5), 4), round(high.epsilon(1e-5), 4), round(gdp_epsilon(1e-5, 2.0), 4)
    (9.9973, 9.9973, 9.9973)
    """
    steps = require_steps("steps", steps)

    def composed(pessimistic: bool) -> TwoSidedPLD:
        h = interval if pessimistic else interval / OPTIMISTIC_REFINEMENT
        sides = [compose_direction(p, steps, h, pessimistic=pessimistic) for p in (pair, pair.reversed())]
        return TwoSidedPLD(*sides)

    return (composed(False) if optimistic else None), composed(True)


def compose_direction(
    pair: LossPair, steps: int, interval: float, *, pessimistic: bool = True
) -> PrivacyLossDistribution:
    """T rounds of ``pair`` in its own direction only: its grid PLD at ``interval`` (connect the
    dots from above when ``pessimistic``, from below otherwise), self-composed. One side of
    ``compose_both_directions``, for a caller that may not need the other.

    Parameters
    ----------
    pair : LossPair
        One round's pair, in the direction wanted.
    steps : int
        Number of rounds T, >= 1.
    interval : float
        Grid step of the loss.
    pessimistic : bool, default True
        Connect the dots from above (read-outs are upper bounds) or from below (lower bounds).

    Returns
    -------
    PrivacyLossDistribution
        The T-round PLD of ``pair``'s direction.

    Examples
    --------
    >>> from dpcheck.privacy.gdp import GaussianShiftPair
    >>> from dpcheck.privacy.pld import compose_both_directions, compose_direction
    >>> side = compose_direction(GaussianShiftPair(1.0), 4, 1e-3)
    >>> side.epsilon(1e-5) == compose_both_directions(GaussianShiftPair(1.0), 4, 1e-3)[1].remove.epsilon(1e-5)
    True
    """
    return PrivacyLossDistribution.from_pair(pair, interval, pessimistic=pessimistic).self_compose(steps)


def grid_range(pair: LossPair, h: float, tail_mass: float = TAIL_MASS) -> tuple[int, int]:
    """Grid indices covering all but about ``tail_mass`` of the Q-law of the loss at each end.

    Each end is found by doubling, then narrowed by bisection to 1/64 of the last doubling (the grid
    size sets the cost of everything downstream). The upper end is measured from the CDF's limit, so
    mass at +inf (a fully distinguishable component) does not stall it, and it allows one ulp, so a
    sum of weights one rounding short of 1 cannot either. The ends only set the accuracy: mass
    beyond them goes to +inf (pessimistic) or down (optimistic). They are clipped to +-MAX_LOSS, so
    that e^eps stays representable.

    Parameters
    ----------
    pair : LossPair
        The pair whose loss is gridded.
    h : float
        Grid step.
    tail_mass : float, default TAIL_MASS
        Mass allowed beyond each end.

    Returns
    -------
    tuple of int
        (k_lo, k_hi): the grid spans k_lo h .. k_hi h.

    Raises
    ------
    ParameterError
        If the span would need more than MAX_POINTS grid points at this step.

    Examples
    --------
    >>> from dpcheck.privacy.gdp import GaussianShiftPair
    >>> from dpcheck.privacy.pld import grid_range
    >>> grid_range(GaussianShiftPair(1.0), 0.01)
    (-775, 875)
    """
    top = float(pair.beta(np.array(2.0**_MAX_DOUBLINGS)))

    def upper_ok(t: float) -> bool:
        return float(pair.beta(np.array(t))) >= top - tail_mass

    def lower_ok(t: float) -> bool:
        return float(pair.beta(np.array(t))) <= tail_mass

    hi = min(_end(upper_ok, 1.0), MAX_LOSS)
    lo = max(_end(lower_ok, -1.0), -MAX_LOSS)
    k_lo, k_hi = int(np.floor(lo / h)), int(np.ceil(hi / h))
    if k_hi - k_lo > MAX_POINTS:
        raise ParameterError(
            f"the privacy loss spans [{lo:g}, {hi:g}], {k_hi - k_lo} grid points at interval {h:g}; "
            "use a coarser interval"
        )
    return k_lo, k_hi


def _end(ok: Callable[[float], bool], start: float) -> float:
    """The first of start, 2 start, 4 start, ... where ``ok`` holds, then bisected towards the
    previous one; ``ok`` must hold from some point on in that direction."""
    outer, inner = start, 0.0
    for _ in range(_MAX_DOUBLINGS):
        if ok(outer):
            break
        inner, outer = outer, 2.0 * outer
    for _ in range(_REFINE_STEPS):
        middle = 0.5 * (inner + outer)
        inner, outer = (inner, middle) if ok(middle) else (middle, outer)
    return outer


def _connect_dots(delta: FloatArray, reverse: FloatArray, h: float) -> tuple[FloatArray, float]:
    """Atoms on the grid whose delta(eps), linear in e^eps between grid points, interpolates
    ``delta``: with c = 1 - e^-h, p_i = [e^-h (delta_{i+1} - delta_i) - (delta_i - delta_{i-1})]/c,
    p_inf = delta at the top.

    ``reverse`` is e^eps P(L <= eps) - Q(L <= eps) = delta(eps) - (1 - e^eps). The two differ by
    a function linear in e^eps, which the stencil annihilates, so the masses are the same; the
    stencil is applied to whichever of the two is small, keeping its digits (the direct delta is
    close to 1 - e^eps in the lower tail, where its second differences are pure round-off)."""
    c = -np.expm1(-h)

    def stencil(values: FloatArray) -> FloatArray:
        step = np.diff(values)
        return (np.exp(-h) * step[1:] - step[:-1]) / c

    probs = np.empty_like(delta)
    probs[1:-1] = np.where((delta <= reverse)[1:-1], stencil(delta), stencil(reverse))
    probs[-1] = -(delta[-1] - delta[-2]) / c
    # The lowest atom closes the chord from (e^eps, delta) = (0, 1): p_0 = e^-h (r_1 - r_0)/c - r_0
    # in the ``reverse`` form, which keeps the total P-mass 1 - r_0 e^-eps_0 <= 1.
    probs[0] = np.exp(-h) * (reverse[1] - reverse[0]) / c - reverse[0]
    probs = np.clip(probs, 0.0, None)
    inf_mass = float(delta[-1])
    # Round-off in the stencils leaves the total a little short of 1 (~1e-12 at h = 1e-4);
    # the deficit goes to the largest finite loss, the pessimistic place for it.
    probs[-1] += max(1.0 - inf_mass - math.fsum(probs), 0.0)
    return probs, inf_mass


def _connect_dots_below(
    x: FloatArray, delta: FloatArray, reverse: FloatArray, above: FloatArray, below: FloatArray
) -> FloatArray:
    """Optimistic grid masses: a convex, piecewise linear f <= g with kinks at the grid.

    Inputs on the grid x_i = e^eps_i: g = delta, its mirror r = g - (1 - x) (``reverse``), and
    the slopes -g' = P(l >= eps) (``above``), r' = P(l < eps) (``below``); g is used where
    x >= 1 and r below, whichever is small (f - g is the same in both forms).

    On a segment [a, b], g lies above the two tangents at its ends, so it lies at most
    gap = (b - a) A B / (A + B) below its chord, with A = m - g'(a), B = g'(b) - m and m the
    chord's slope (0 <= A, B). Lowering both ends of every chord by the larger gap of their two
    segments puts every chord under g; the lower convex hull of those points, of the tangent at
    the first point shifted down alike (extended to x = 0), and of the zero of the shifted
    tangent at the last point, is still under g. f = max(hull, 1 - x, 0) is then the profile of
    a genuine pair (Q-mass 1 at x = 0, P-mass <= 1) dominated by the true pair. Its atoms are
    the kinks of f; the ones off the grid are rounded down (and dropped below the first point),
    which only lowers the loss. Returns the Q-mass at each grid point (no mass at +inf)."""
    upper = x >= 1.0
    value = np.where(upper, delta, reverse)
    slope = np.where(upper, -above, below)
    # Segment i joins points i and i + 1, in the form of point i.
    seg_upper = upper[:-1]
    u_a, u_b = value[:-1], np.where(seg_upper, delta[1:], reverse[1:])
    s_a, s_b = slope[:-1], np.where(seg_upper, -above[1:], below[1:])
    width = np.diff(x)
    chord = (u_b - u_a) / width
    a_part, b_part = np.maximum(chord - s_a, 0.0), np.maximum(s_b - chord, 0.0)
    total = a_part + b_part
    gap = width * np.divide(a_part * b_part, total, out=np.zeros_like(total), where=total > 0.0)
    gap += _SLACK * (np.abs(u_a) + np.abs(u_b) + width * (np.abs(s_a) + np.abs(s_b)))
    lowered = np.zeros_like(x)
    lowered[:-1] = gap
    lowered[1:] = np.maximum(lowered[1:], gap)
    w_delta, w_reverse = delta - lowered, reverse - lowered
    # The shifted tangent at the first point, continued to x = 0 (in the reverse form).
    points_x = [np.zeros(1), x]
    points_r = [np.array([w_reverse[0] - below[0] * x[0]]), w_reverse]
    top, slope_top = float(w_delta[-1]), float(above[-1])
    if top > 0.0 and slope_top > 0.0:
        zero = x[-1] + top / slope_top
        points_x.append(np.array([zero]))
        points_r.append(np.array([zero - 1.0]))
    elif top > 0.0:
        w_delta[-1], w_reverse[-1] = 0.0, x[-1] - 1.0
    px, pr = np.concatenate(points_x), np.concatenate(points_r)
    pd = np.concatenate([[pr[0] + 1.0], w_delta, pr[x.size + 1 :] + 1.0 - px[x.size + 1 :]])
    hull = _lower_hull(px, pd, pr)
    hull_d = np.interp(x, px[hull], pd[hull])
    hull_r = np.interp(x, px[hull], pr[hull])
    # Left slope of the hull at each grid point: the hull segment that ends at or after it.
    seg = np.searchsorted(px[hull], x, side="left") - 1
    dx = px[hull][1:] - px[hull][:-1]
    left_r = ((pr[hull][1:] - pr[hull][:-1]) / dx)[seg]
    left_d = ((pd[hull][1:] - pd[hull][:-1]) / dx)[seg]
    # f = max(hull, 1 - x, 0): in the delta form the competitors are 0 (slope 0) and 1 - x
    # (slope -1); in the reverse form 1 - x becomes 0 and 0 becomes x - 1 (slope 1). At a tie
    # the left slope is the smallest of the tied pieces'.
    f_d, slope_d = _max_of_lines(hull_d, left_d, [(np.zeros_like(x), 0.0), (1.0 - x, -1.0)])
    f_r, slope_r = _max_of_lines(hull_r, left_r, [(np.zeros_like(x), 0.0), (x - 1.0, 1.0)])
    # Q-mass of the atoms at x_i and above (delta form) / below x_i (reverse form).
    at_or_above = f_d - x * slope_d
    below_mass = x * slope_r - f_r
    probs = np.empty_like(x)
    both_up = upper[:-1] & upper[1:]
    both_down = ~upper[:-1] & ~upper[1:]
    probs[:-1] = np.where(
        both_up,
        at_or_above[:-1] - at_or_above[1:],
        np.where(both_down, below_mass[1:] - below_mass[:-1], (1.0 - below_mass[:-1]) - at_or_above[1:]),
    )
    probs[-1] = at_or_above[-1] if upper[-1] else 1.0 - below_mass[-1]
    return np.clip(probs, 0.0, None)


def _max_of_lines(
    value: FloatArray, slope: FloatArray, others: list[tuple[FloatArray, float]]
) -> tuple[FloatArray, FloatArray]:
    """max of lines through each point (value, left slope) pairs: the largest value and, among
    the pieces attaining it, the smallest slope (the piece active just left of the point)."""
    best, best_slope = value, slope
    for other, other_slope in others:
        bigger = other > best
        tie = other == best
        best_slope = np.where(bigger, other_slope, np.where(tie, np.minimum(best_slope, other_slope), best_slope))
        best = np.maximum(best, other)
    return best, best_slope


def _lower_hull(x: FloatArray, y_delta: FloatArray, y_reverse: FloatArray) -> FloatArray:
    """Indices of the lower convex hull of points with increasing x, vectorised: repeatedly drop
    every point on or above the chord of its current neighbours (such a point is never a hull
    vertex, so dropping many at once is safe). The test at a point uses the reverse form left
    of x = 1 and the delta form right of it (the forms differ by a linear function, which the
    test ignores), keeping the digits of small values."""
    keep = np.arange(x.size)
    use_reverse = x < 1.0
    while keep.size > 2:
        i, j, k = keep[:-2], keep[1:-1], keep[2:]
        y = np.where(use_reverse[j][None, :], y_reverse[np.stack([i, j, k])], y_delta[np.stack([i, j, k])])
        cross = (y[1] - y[0]) * (x[k] - x[i]) - (y[2] - y[0]) * (x[j] - x[i])
        drop = cross >= 0.0
        if not np.any(drop):
            break
        keep = np.concatenate([keep[:1], j[~drop], keep[-1:]])
    return keep


def _rounded(cdf: FloatArray, up: bool) -> tuple[FloatArray, float]:
    """Masses from Q(L < l_k) on the grid: round the loss up (mass of [l_{k-1}, l_k) to l_k, the
    top remainder to +inf) or down (to l_{k-1}; below the grid to -inf, the top remainder to
    the last grid point)."""
    cdf = np.maximum.accumulate(np.clip(cdf, 0.0, 1.0))
    between = np.diff(cdf)
    top = 1.0 - cdf[-1]
    if up:
        return np.concatenate([[cdf[0]], between]), top
    return np.concatenate([between, [top]]), 0.0


def _move_dropped(p: FloatArray, keep: FloatArray, *, up: bool) -> tuple[FloatArray, float]:
    """Move the mass of dropped entries to the next kept entry above (``up``) or below; mass
    with no kept entry in that direction is returned (it goes to +inf, or is lost to -inf)."""
    kept = np.flatnonzero(keep)
    dropped = np.flatnonzero(~keep)
    out = np.where(keep, p, 0.0)
    if dropped.size == 0:
        return out, 0.0
    pos = np.searchsorted(kept, dropped, side="right" if up else "left") - (0 if up else 1)
    valid = (pos >= 0) & (pos < kept.size)
    np.add.at(out, kept[pos[valid]], p[dropped[valid]])
    return out, float(p[dropped[~valid]].sum())
