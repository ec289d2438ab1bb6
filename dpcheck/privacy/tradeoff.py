"""Trade-off functions as numbers (docs/theory.md#tradeoff-conversions,
docs/theory.md#loss-pairs): the (eps, delta) curve, the
conversions between a curve and its privacy profile delta(eps), the inverse, symmetrisation by
the lower convex envelope, the exact Neyman-Pearson curve of any ``LossPair``, and a validity
check used by the tests.

A trade-off curve is passed around either as a vectorised callable ``f(alpha) -> beta`` or as
samples (alpha, beta) on an increasing grid."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike

from dpcheck.privacy._numerics import (
    FloatArray,
    as_array,
    bisect_decreasing,
    require_alpha,
    scalar_or_array,
)
from dpcheck.privacy.protocols import LossPair

TradeoffFn = Callable[[FloatArray], FloatArray]

# Loss thresholds beyond +-2^40 carry no mass for any pair dpcheck builds.
_MAX_DOUBLINGS = 40


def scaled_by_exp(eps: ArrayLike, alpha: ArrayLike) -> FloatArray:
    """e^eps * alpha (broadcast), formed as exp(eps + log alpha) where alpha > 0 and 0 where
    alpha = 0, for every eps up to +inf: the direct product is inf * 0 = NaN once e^eps
    overflows (eps >~ 709)."""
    e, a = np.broadcast_arrays(as_array(eps), as_array(alpha))
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        return np.where(a > 0.0, np.exp(e + np.log(a)), 0.0)


def eps_delta_tradeoff(alpha: ArrayLike, eps: float, delta: float) -> FloatArray | float:
    """f_{eps,delta}(alpha) = max{0, 1 - delta - e^eps alpha, e^-eps (1 - delta - alpha)}.

    The trade-off curve of (eps, delta)-DP (docs/theory.md#tradeoff-conversions); e^eps alpha is
    formed in log space, so eps may be as large as +inf.

    Parameters
    ----------
    alpha : array_like
        Type-I error levels in [0, 1].
    eps : float
        The epsilon of the claim, >= 0.
    delta : float
        The delta of the claim, in [0, 1].

    Returns
    -------
    float or ndarray
        The curve at ``alpha``, shaped like it.

    Examples
    --------
    >>> from dpcheck.privacy.tradeoff import eps_delta_tradeoff
    >>> round(eps_delta_tradeoff(0.05, 1.0, 1e-5), 6)
    0.864076
    >>> eps_delta_tradeoff([0.0, 0.5], 1.0, 0.0).round(6).tolist()
    [1.0, 0.18394]
    """
    a = require_alpha(alpha)
    beta = np.maximum.reduce(
        [np.zeros_like(a), 1.0 - delta - scaled_by_exp(eps, a), np.exp(-eps) * (1.0 - delta - a)]
    )
    return scalar_or_array(beta, alpha)


def default_alpha_grid(extra: ArrayLike = ()) -> FloatArray:
    """The alpha grid curves are sampled on: dense near 0, uniform elsewhere, with requested points.

    Log-spaced from 1e-15 to 0.1 (561 points), uniform on [0, 1] (1001 points), the ends 0 and 1,
    and ``extra`` merged in, so that the points a report asks for are sampled exactly (a curve is
    never interpolated: a chord of a convex curve overstates a guarantee).

    Parameters
    ----------
    extra : array_like, optional
        Alphas in [0, 1] the grid must contain.

    Returns
    -------
    ndarray
        The sorted, de-duplicated grid.

    Examples
    --------
    >>> from dpcheck.privacy.tradeoff import default_alpha_grid
    >>> grid = default_alpha_grid([0.0505])
    >>> grid.size, float(grid[1]), bool(0.0505 in grid)
    (1560, 1e-15, True)
    """
    grid = np.concatenate(
        [[0.0, 1.0], np.logspace(-15, -1, 561), np.linspace(0.0, 1.0, 1001), as_array(extra).ravel()]
    )
    return np.unique(np.clip(grid, 0.0, 1.0))


def profile_from_curve(
    f: TradeoffFn, eps: ArrayLike, alpha_grid: ArrayLike | None = None
) -> FloatArray | float:
    """delta(eps) = sup_alpha (1 - f(alpha) - e^eps alpha): the privacy profile of a trade-off curve.

    The convex conjugate of Dong, Roth, Su 2022, Prop. 2.12 (docs/theory.md#tradeoff-conversions),
    the sup taken over ``alpha_grid``; the grid sup is a lower estimate that tightens as the grid is
    refined.

    Parameters
    ----------
    f : callable
        Vectorised trade-off curve, alpha -> beta.
    eps : array_like
        Privacy-loss levels.
    alpha_grid : array_like, optional
        Where to take the sup; ``default_alpha_grid()`` when omitted.

    Returns
    -------
    float or ndarray
        delta(eps) >= 0, shaped like ``eps``.

    Examples
    --------
    >>> from dpcheck.privacy.gdp import gaussian_tradeoff, gdp_delta
    >>> from dpcheck.privacy.tradeoff import profile_from_curve
    >>> round(profile_from_curve(lambda a: gaussian_tradeoff(a, 1.0), 1.0), 6)
    0.126937
    >>> round(gdp_delta(1.0, 1.0), 6)
    0.126937
    """
    grid = default_alpha_grid() if alpha_grid is None else as_array(alpha_grid).ravel()
    beta = as_array(f(grid))
    e = as_array(eps)
    gains = 1.0 - beta[None, :] - scaled_by_exp(e.reshape(-1, 1), grid[None, :])
    delta = np.maximum(gains.max(axis=1), 0.0)
    return scalar_or_array(delta.reshape(e.shape), eps)


def curve_from_profile(alpha: ArrayLike, eps: ArrayLike, delta: ArrayLike) -> FloatArray | float:
    """f(alpha) = max_j f_{eps_j, delta_j}(alpha): the curve implied by sampled points of a profile.

    Each point (eps_j, delta_j) of a privacy profile is an (eps, delta)-DP statement; the mechanism
    satisfies all of them, so its curve is at least their pointwise maximum
    (docs/theory.md#tradeoff-conversions). Fewer points give a lower (weaker) curve.

    Parameters
    ----------
    alpha : array_like
        Type-I error levels in [0, 1].
    eps : array_like
        The sampled epsilons.
    delta : array_like
        delta(eps_j) at each of them.

    Returns
    -------
    float or ndarray
        The implied curve at ``alpha``, shaped like it.

    Examples
    --------
    Three points of the 1-GDP profile give a curve a little below G_1 itself:

    >>> from dpcheck.privacy.gdp import gaussian_tradeoff, gdp_delta
    >>> from dpcheck.privacy.tradeoff import curve_from_profile
    >>> eps = [0.5, 1.0, 2.0]
    >>> round(curve_from_profile(0.05, eps, gdp_delta(eps, 1.0)), 6)
    0.737149
    >>> round(gaussian_tradeoff(0.05, 1.0), 6)
    0.740489
    """
    a = require_alpha(alpha)
    e = as_array(eps).reshape(-1, 1)
    d = as_array(delta).reshape(-1, 1)
    flat = a.reshape(1, -1)
    beta = np.maximum(
        np.maximum(1.0 - d - scaled_by_exp(e, flat), np.exp(-e) * (1.0 - d - flat)), 0.0
    ).max(axis=0)
    return scalar_or_array(beta.reshape(a.shape), alpha)


def inverse(f: TradeoffFn, beta: ArrayLike) -> FloatArray | float:
    """f^-1(beta) = inf{alpha in [0, 1] : f(alpha) <= beta}, by vectorised bisection.

    The result is the right end of the final bracket, so f(result) <= beta holds exactly; used to
    symmetrise a one-directional curve (docs/theory.md#tradeoff-conversions).

    Parameters
    ----------
    f : callable
        Vectorised non-increasing curve on [0, 1].
    beta : array_like
        Type-II error levels in [0, 1].

    Returns
    -------
    float or ndarray
        f^-1(beta), shaped like ``beta``.

    Examples
    --------
    G_1 is symmetric, so its inverse at 0.5 is G_1(0.5) = Phi(-1):

    >>> from dpcheck.privacy.gdp import gaussian_tradeoff
    >>> from dpcheck.privacy.tradeoff import inverse
    >>> round(inverse(lambda a: gaussian_tradeoff(a, 1.0), 0.5), 6)
    0.158655
    """
    b = require_alpha(beta)
    flat = b.reshape(-1)
    at_zero = as_array(f(np.zeros(1)))[0] <= flat
    _, hi = bisect_decreasing(f, flat, np.zeros_like(flat), np.ones_like(flat))
    return scalar_or_array(np.where(at_zero, 0.0, hi).reshape(b.shape), beta)


def lower_convex_envelope(x: ArrayLike, y: ArrayLike) -> tuple[FloatArray, FloatArray]:
    """The vertices of the greatest convex minorant of the points (x_i, y_i), x increasing
    (Andrew's monotone chain, lower hull)."""
    xs = as_array(x).ravel()
    ys = as_array(y).ravel()
    hull: list[int] = []
    for i in range(xs.size):
        while len(hull) >= 2:
            o, a = hull[-2], hull[-1]
            cross = (xs[a] - xs[o]) * (ys[i] - ys[o]) - (ys[a] - ys[o]) * (xs[i] - xs[o])
            if cross > 0.0:
                break
            hull.pop()
        hull.append(i)
    idx = np.array(hull)
    return xs[idx], ys[idx]


def convex_minorant(x: ArrayLike, y: ArrayLike) -> FloatArray:
    """The greatest convex minorant of the points (x_i, y_i), evaluated at the same x.

    Used to turn sampled curves into valid trade-off functions (convex) without raising any point
    (docs/theory.md#tradeoff-conversions).

    Parameters
    ----------
    x : array_like
        Increasing abscissae.
    y : array_like
        Values at ``x``.

    Returns
    -------
    ndarray
        The lower convex envelope at ``x``.

    Examples
    --------
    >>> from dpcheck.privacy.tradeoff import convex_minorant
    >>> convex_minorant([0.0, 0.5, 1.0], [1.0, 0.8, 0.0]).tolist()
    [1.0, 0.5, 0.0]
    """
    hx, hy = lower_convex_envelope(x, y)
    return np.interp(as_array(x).ravel(), hx, hy)


def symmetrize(f: TradeoffFn, alpha: ArrayLike, grid: ArrayLike | None = None) -> FloatArray | float:
    """The symmetric trade-off (min{f, f^-1})^** at ``alpha`` (docs/theory.md#tradeoff-conversions,
    docs/theory.md#sgm-one-step), with the
    envelope computed on ``grid`` merged with ``alpha``."""
    a = require_alpha(alpha)
    points = default_alpha_grid(a) if grid is None else np.unique(np.concatenate([as_array(grid).ravel(), a.ravel()]))
    lower = np.minimum(as_array(f(points)), as_array(inverse(f, points)))
    env = np.interp(a.ravel(), *lower_convex_envelope(points, lower))
    return scalar_or_array(env.reshape(a.shape), alpha)


def hockey_stick(pair: LossPair, eps: ArrayLike) -> FloatArray:
    """delta_{Q||P}(eps) = Q(l > eps) - e^eps P(l > eps): the privacy profile of a ``LossPair``.

    Uses the pair's own closed form when it has one (a ``hockey_stick`` method), which stays
    accurate in the far tails; otherwise 1 - beta(eps) - e^eps alpha(eps) (an atom at eps
    contributes zero, so P(l >= eps) may stand for P(l > eps)). See docs/theory.md#loss-pairs.

    Parameters
    ----------
    pair : LossPair
        The pair (P, Q), seen through its privacy loss l = log dQ/dP.
    eps : array_like
        Privacy-loss levels.

    Returns
    -------
    ndarray
        delta(eps) >= 0 in this direction, shaped like ``eps``.

    Examples
    --------
    >>> from dpcheck.privacy.gdp import GaussianShiftPair
    >>> from dpcheck.privacy.tradeoff import hockey_stick
    >>> hockey_stick(GaussianShiftPair(1.0), [0.0, 1.0]).round(6).tolist()
    [0.382925, 0.126937]
    """
    e = as_array(eps)
    own = getattr(pair, "hockey_stick", None)
    if own is not None:
        return np.maximum(as_array(own(e)), 0.0)
    return np.maximum(1.0 - pair.beta(e) - scaled_by_exp(e, pair.alpha(e)), 0.0)


def loss_pair_tradeoff(pair: LossPair, alpha: ArrayLike) -> FloatArray | float:
    """The exact Neyman-Pearson trade-off T(P, Q)(alpha) of a pair given by its loss law.

    Root-finds the loss threshold tau with P(l >= tau) = alpha (bracket by doubling, then bisection
    to float resolution) and reads beta on the chord between the two bracketing curve points, which
    is exact on an atom (the randomised segment of slope -e^tau, e.g. the slope -1 segment of
    trivial components at tau = 0) and within float resolution elsewhere
    (docs/theory.md#loss-pairs).

    Parameters
    ----------
    pair : LossPair
        The pair (P, Q).
    alpha : array_like
        Type-I error levels in [0, 1].

    Returns
    -------
    float or ndarray
        beta = T(P, Q)(alpha), shaped like ``alpha``.

    Examples
    --------
    >>> from dpcheck.privacy.gdp import GaussianShiftPair, TrivialPair
    >>> from dpcheck.privacy.tradeoff import loss_pair_tradeoff
    >>> round(loss_pair_tradeoff(GaussianShiftPair(1.0), 0.05), 6)  # G_1(0.05)
    0.740489
    >>> loss_pair_tradeoff(TrivialPair(), [0.25, 0.5]).tolist()
    [0.75, 0.5]
    """
    a = require_alpha(alpha)
    t = a.ravel()
    lo, hi = -1.0, 1.0
    for _ in range(_MAX_DOUBLINGS):
        if float(pair.alpha(np.array(lo))) >= t.max():
            break
        lo *= 2.0
    for _ in range(_MAX_DOUBLINGS):
        if float(pair.alpha(np.array(hi))) <= t.min():
            break
        hi *= 2.0
    alpha_lo, beta_lo = float(pair.alpha(np.array(lo))), float(pair.beta(np.array(lo)))
    alpha_hi, beta_hi = float(pair.alpha(np.array(hi))), float(pair.beta(np.array(hi)))
    inside = (t < alpha_lo) & (t >= alpha_hi)
    lo_t, hi_t = bisect_decreasing(
        pair.alpha, t[inside], np.full(inside.sum(), lo), np.full(inside.sum(), hi), xtol=1e-13
    )
    beta = np.empty_like(t)
    beta[inside] = _chord(t[inside], pair.alpha(hi_t), pair.beta(hi_t), pair.alpha(lo_t), pair.beta(lo_t))
    # Beyond the brackets: the chord to (1, 0) on the left end, and beta(hi) (a lower value
    # than the true curve, which is non-increasing) on the right end.
    left = t >= alpha_lo
    beta[left] = _chord(t[left], alpha_lo, beta_lo, 1.0, 0.0)
    beta[t < alpha_hi] = beta_hi
    return scalar_or_array(np.clip(beta, 0.0, 1.0).reshape(a.shape), alpha)


def _chord(
    t: FloatArray, a0: ArrayLike, b0: ArrayLike, a1: ArrayLike, b1: ArrayLike
) -> FloatArray:
    """Linear interpolation at t between (a0, b0) and (a1, b1), a0 <= t <= a1."""
    a0, b0, a1, b1 = (np.broadcast_to(as_array(v), t.shape) for v in (a0, b0, a1, b1))
    width = a1 - a0
    frac = np.divide(t - a0, width, out=np.zeros_like(t), where=width > 0.0)
    return b0 + (b1 - b0) * frac


def is_valid_tradeoff(alpha: ArrayLike, beta: ArrayLike, atol: float = 1e-9) -> bool:
    """Whether samples of a curve (alpha increasing) are a trade-off function: values in
    [0, 1], beta <= 1 - alpha, non-increasing, and convex (each point at or below the chord of
    its neighbours), all up to ``atol``."""
    a = as_array(alpha).ravel()
    b = as_array(beta).ravel()
    if a.size != b.size or np.any(np.diff(a) <= 0.0) or not np.all(np.isfinite(b)):
        return False
    in_range = bool(np.all(b >= -atol) and np.all(b <= 1.0 + atol) and np.all(b <= 1.0 - a + atol))
    decreasing = bool(np.all(np.diff(b) <= atol))
    if a.size < 3:
        return in_range and decreasing
    chord = (b[:-2] * (a[2:] - a[1:-1]) + b[2:] * (a[1:-1] - a[:-2])) / (a[2:] - a[:-2])
    return in_range and decreasing and bool(np.all(b[1:-1] <= chord + atol))
