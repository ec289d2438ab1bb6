"""Shared numeric helpers of the privacy engine: array coercion, parameter checks and
stable log-space arithmetic. Pure functions; every check raises ``ParameterError`` naming the
parameter, so bad input never surfaces as a NaN or a traceback."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from scipy.optimize import brentq
from numpy.typing import ArrayLike, NDArray

from dpcheck.errors import ParameterError

FloatArray = NDArray[np.float64]


def as_array(values: ArrayLike) -> FloatArray:
    """``values`` as a float64 array (a scalar becomes a 0-d array)."""
    return np.asarray(values, dtype=np.float64)


def scalar_or_array(result: FloatArray, like: ArrayLike) -> FloatArray | float:
    """Give a Python float back when the caller passed a scalar, the array otherwise."""
    return float(result) if np.ndim(like) == 0 else result


def require_positive(name: str, value: float) -> float:
    """``value`` as a float if it is finite and > 0; otherwise a ParameterError naming it."""
    v = float(value)
    if not np.isfinite(v) or v <= 0.0:
        raise ParameterError(f"{name} must be a finite number > 0, got {value!r}")
    return v


MIN_SIGMA = 1e-3
"""The smallest noise multiplier dpcheck computes with. At sigma = 1e-3 a single Gaussian step
(mu = 1/sigma = 1000) already has delta(eps) = 1 to double precision for every eps up to 500,
the largest one-round loss the PLD grid holds: no privacy at all. Below it the arithmetic leaves
floating-point range (mu^2 overflows at sigma ~ 1e-154, the RDP exponents (i^2 - i)/(2 sigma^2)
much earlier), so a smaller sigma is refused instead of reported as a number."""


def require_sigma(name: str, value: float) -> float:
    """A noise multiplier >= MIN_SIGMA; otherwise a ParameterError naming it and the floor."""
    v = require_positive(name, value)
    if v < MIN_SIGMA:
        raise ParameterError(
            f"{name} must be >= {MIN_SIGMA:g}, got {value!r}: below it a single noisy step gives no "
            "privacy at all (delta = 1 at every eps up to 500) and the bounds leave floating-point range"
        )
    return v


def require_probability(name: str, value: float, *, open_low: bool = True) -> float:
    """``value`` in (0, 1] (or [0, 1] with ``open_low=False``); otherwise a ParameterError."""
    v = float(value)
    low_ok = v > 0.0 if open_low else v >= 0.0
    if not np.isfinite(v) or not low_ok or v > 1.0:
        interval = "(0, 1]" if open_low else "[0, 1]"
        raise ParameterError(f"{name} must lie in {interval}, got {value!r}")
    return v


def require_delta(name: str, value: float) -> float:
    """A target delta in the open interval (0, 1)."""
    v = float(value)
    if not np.isfinite(v) or not 0.0 < v < 1.0:
        raise ParameterError(f"{name} must lie in (0, 1), got {value!r}")
    return v


def require_steps(name: str, value: int) -> int:
    """A positive integer count of rounds."""
    if isinstance(value, bool) or int(value) != value or int(value) < 1:
        raise ParameterError(f"{name} must be an integer >= 1, got {value!r}")
    return int(value)


def require_alpha(values: ArrayLike) -> FloatArray:
    """Type-I error levels: an array of numbers in [0, 1]."""
    a = as_array(values)
    if not np.all(np.isfinite(a)) or np.any(a < 0.0) or np.any(a > 1.0):
        raise ParameterError(f"alpha must lie in [0, 1], got {values!r}")
    return a


def log_sub_exp(log_a: FloatArray, log_b: FloatArray) -> FloatArray:
    """log(e^a - e^b) for a >= b, without forming e^a (``-inf`` when a == b)."""
    with np.errstate(divide="ignore"):
        return log_a + np.log(-np.expm1(np.minimum(log_b - log_a, 0.0)))


def bisect_decreasing(
    func: Callable[[FloatArray], FloatArray],
    targets: FloatArray,
    lo: FloatArray,
    hi: FloatArray,
    xtol: float = 0.0,
    iterations: int = 200,
) -> tuple[FloatArray, FloatArray]:
    """Vectorised bisection for a non-increasing ``func``: shrink [lo, hi] keeping
    func(lo) > target >= func(hi), so ``hi`` converges to inf{x : func(x) <= target}. Returns the final (lo, hi); an interval stops once it is
    narrower than ``xtol`` plus float resolution."""
    lo = np.array(lo, dtype=np.float64, copy=True)
    hi = np.array(hi, dtype=np.float64, copy=True)
    for _ in range(iterations):
        mid = 0.5 * (lo + hi)
        moving = (hi - lo > xtol) & (mid != lo) & (mid != hi)
        if not np.any(moving):
            break
        above = func(mid) > targets
        lo = np.where(moving & above, mid, lo)
        hi = np.where(moving & ~above, mid, hi)
    return lo, hi


def smallest_nonpositive(
    excess: Callable[[float], float], *, cap: float = math.inf, xtol: float = 1e-12
) -> float:
    """The smallest eps >= 0 with ``excess(eps) <= 0`` for a non-increasing ``excess``: eps(delta)
    of a privacy profile, with ``excess = log delta(eps) - log target``. The root is bracketed by
    doubling; ``inf`` when ``excess`` is still positive beyond ``cap``."""
    if excess(0.0) <= 0.0:
        return 0.0
    hi = 1.0
    while excess(hi) > 0.0:
        hi *= 2.0
        if hi > cap:
            return math.inf
    return float(brentq(excess, 0.0, hi, xtol=xtol, rtol=max(xtol, 4 * np.finfo(float).eps)))
