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
    """f_{eps,delta}(alpha) = max{0, 1 - delta - e^eps alpha, e^-eps (1 - delta - alpha)}."""
    a = require_alpha(alpha)
    beta = np.maximum.reduce(
        [np.zeros_like(a), 1.0 - delta - scaled_by_exp(eps, a), np.exp(-eps) * (1.0 - delta - a)]
    )
    return scalar_or_array(beta, alpha)


def default_alpha_grid(extra: ArrayLike = ()) -> FloatArray:
    """A grid on [0, 1] dense near 0 (log-spaced down to 1e-15) and uniform elsewhere, merged
    with ``extra`` so that requested points are sampled exactly."""
    grid = np.concatenate(
        [[0.0, 1.0], np.logspace(-15, -1, 561), np.linspace(0.0, 1.0, 1001), as_array(extra).ravel()]
    )
    return np.unique(np.clip(grid, 0.0, 1.0))


def profile_from_curve(
    f: TradeoffFn, eps: ArrayLike, alpha_grid: ArrayLike | None = None
) -> FloatArray | float:
    """delta(eps) = sup_alpha (1 - f(alpha) - e^eps alpha) (Dong, Roth, Su 2022, Prop. 2.12),
    the sup taken over ``alpha_grid``; the grid sup is a lower estimate that tightens as the grid
    is refined."""
    grid = default_alpha_grid() if alpha_grid is None else as_array(alpha_grid).ravel()
    beta = as_array(f(grid))
    e = as_array(eps)
    gains = 1.0 - beta[None, :] - scaled_by_exp(e.reshape(-1, 1), grid[None, :])
    delta = np.maximum(gains.max(axis=1), 0.0)
    return scalar_or_array(delta.reshape(e.shape), eps)


def curve_from_profile(alpha: ArrayLike, eps: ArrayLike, delta: ArrayLike) -> FloatArray | float:
    """f(alpha) = max_j f_{eps_j, delta_j}(alpha): the curve implied by (eps_j, delta_j)-DP for
    every sampled point of a privacy profile."""
    a = require_alpha(alpha)
    e = as_array(eps).reshape(-1, 1)
    d = as_array(delta).reshape(-1, 1)
    flat = a.reshape(1, -1)
    beta = np.maximum(
        np.maximum(1.0 - d - scaled_by_exp(e, flat), np.exp(-e) * (1.0 - d - flat)), 0.0
    ).max(axis=0)
    return scalar_or_array(beta.reshape(a.shape), alpha)


def inverse(f: TradeoffFn, beta: ArrayLike) -> FloatArray | float:
    """f^-1(beta) = inf{alpha in [0, 1] : f(alpha) <= beta}, by vectorised bisection (the
    result is the right end of the final bracket, so f(result) <= beta)."""
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
    """The lower convex envelope of the points, evaluated at the same x."""
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
    """delta_{Q||P}(eps) = Q(l > eps) - e^eps P(l > eps) (docs/theory.md#loss-pairs): the pair's own
    closed form when it has one (``hockey_stick``), else from alpha and beta (an atom at eps
    contributes zero, so P(l >= eps) may stand for P(l > eps))."""
    e = as_array(eps)
    own = getattr(pair, "hockey_stick", None)
    if own is not None:
        return np.maximum(as_array(own(e)), 0.0)
    return np.maximum(1.0 - pair.beta(e) - scaled_by_exp(e, pair.alpha(e)), 0.0)


def loss_pair_tradeoff(pair: LossPair, alpha: ArrayLike) -> FloatArray | float:
    """The exact Neyman-Pearson trade-off T(P, Q)(alpha) of a pair given by its loss law.

    Root-finds the loss threshold tau with P(l >= tau) = alpha (bracket by doubling, then
    bisection to float resolution) and reads beta on the chord between the two bracketing
    curve points, which is exact on an atom (the randomised segment of slope -e^tau, e.g. the
    slope -1 segment of trivial components at tau = 0) and within float resolution elsewhere."""
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
