"""Shared numeric helpers of the privacy engine: array coercion, array parameter checks and
stable log-space arithmetic. Pure functions; every check raises ``ParameterError`` naming the
parameter, so bad input never surfaces as a NaN or a traceback. The scalar checks live in
``dpcheck.privacy._checks`` (light enough for the scan) and are imported here for the engine."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from scipy.optimize import brentq
from numpy.typing import ArrayLike, NDArray

from dpcheck.errors import ParameterError
from dpcheck.privacy._checks import (  # noqa: F401 - the engine's modules import the checks from here
    MIN_SIGMA,
    require_delta,
    require_positive,
    require_probability,
    require_sigma,
    require_steps,
)

FloatArray = NDArray[np.float64]


def as_array(values: ArrayLike) -> FloatArray:
    """``values`` as a float64 array (a scalar becomes a 0-d array)."""
    return np.asarray(values, dtype=np.float64)


def scalar_or_array(result: FloatArray, like: ArrayLike) -> FloatArray | float:
    """Give a Python float back when the caller passed a scalar, the array otherwise."""
    return float(result) if np.ndim(like) == 0 else result


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
