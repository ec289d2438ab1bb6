"""Scalar parameter checks of the privacy engine, without numpy: the scan validates bound
requests with them before (and often instead of) loading the numeric engine. Each raises
``ParameterError`` naming the parameter, so bad input never surfaces as a NaN or a traceback."""

from __future__ import annotations

import math

from dpcheck.errors import ParameterError


def require_positive(name: str, value: float) -> float:
    """``value`` as a float if it is finite and > 0; otherwise a ParameterError naming it."""
    v = float(value)
    if not math.isfinite(v) or v <= 0.0:
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
    if not math.isfinite(v) or not low_ok or v > 1.0:
        interval = "(0, 1]" if open_low else "[0, 1]"
        raise ParameterError(f"{name} must lie in {interval}, got {value!r}")
    return v


def require_delta(name: str, value: float) -> float:
    """A target delta in the open interval (0, 1)."""
    v = float(value)
    if not math.isfinite(v) or not 0.0 < v < 1.0:
        raise ParameterError(f"{name} must lie in (0, 1), got {value!r}")
    return v


def require_steps(name: str, value: int) -> int:
    """A positive integer count of rounds."""
    if isinstance(value, bool) or int(value) != value or int(value) < 1:
        raise ParameterError(f"{name} must be an integer >= 1, got {value!r}")
    return int(value)


def require_rounds(m: int) -> int:
    """M, the rounds per epoch: an integer >= 2 (ln M must be positive)."""
    if isinstance(m, bool) or int(m) != m or m < 2:
        raise ParameterError(f"rounds per epoch M must be an integer >= 2, got {m!r}")
    return int(m)
