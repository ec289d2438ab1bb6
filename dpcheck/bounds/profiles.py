"""Bounds as objects that can be sampled: a trade-off curve, a privacy profile delta(eps) and its
inverse eps(delta). ``TwoSidedPLD`` and ``VarianceWitness`` already have this shape; the two
adapters here give it to a curve known only in closed form (the shuffle max test) and to a
(0, delta) statement (the chi-square bound). ``sample`` turns any of them into a labelled
``BoundCurve`` evaluated at the requested alphas and at the plot grid, keeping the source for
the delta(eps) profiles of the plot."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
from numpy.typing import ArrayLike

from dpcheck.privacy._numerics import FloatArray, as_array, smallest_nonpositive
from dpcheck.privacy.labels import BoundCurve, Kind, Label
from dpcheck.privacy.tradeoff import profile_from_curve

PLOT_ALPHAS: FloatArray = np.unique(np.concatenate([np.logspace(-6, -1, 26), np.linspace(0.1, 0.99, 46)]))
"""Where every bound is sampled for the plot, besides the requested alphas."""


class Profile(Protocol):
    """A bound seen through its trade-off curve and its privacy profile."""

    def tradeoff(self, alpha: ArrayLike) -> Any: ...

    def delta(self, eps: ArrayLike) -> Any: ...

    def epsilon(self, delta: float) -> float: ...


def _smallest_epsilon(delta_of: Callable[[float], float], target: float) -> float:
    """The smallest eps >= 0 with delta_of(eps) <= target for a non-increasing delta_of; inf when
    even eps = 64 does not get there."""
    return smallest_nonpositive(lambda e: delta_of(e) - target, cap=64.0, xtol=1e-10)


@dataclass(frozen=True)
class CurveProfile:
    """A trade-off curve given as a function; delta(eps) is the sup over a dense alpha grid (a
    lower estimate of the curve's delta, so a witness stays a witness)."""

    curve: Callable[[FloatArray], FloatArray]

    def tradeoff(self, alpha: ArrayLike) -> FloatArray:
        return as_array(self.curve(np.atleast_1d(as_array(alpha))))

    def delta(self, eps: ArrayLike) -> FloatArray:
        return np.atleast_1d(as_array(profile_from_curve(self.curve, eps)))

    def epsilon(self, delta: float) -> float:
        return _smallest_epsilon(lambda e: float(self.delta(e)[0]), delta)


@dataclass(frozen=True)
class ZeroDeltaProfile:
    """A (0, delta)-DP statement: f(alpha) = max(0, 1 - delta - alpha), delta(eps) = delta."""

    value: float

    def tradeoff(self, alpha: ArrayLike) -> FloatArray:
        return np.maximum(1.0 - self.value - np.atleast_1d(as_array(alpha)), 0.0)

    def delta(self, eps: ArrayLike) -> FloatArray:
        return np.full(np.shape(np.atleast_1d(as_array(eps))), self.value)

    def epsilon(self, delta: float) -> float:
        return 0.0 if self.value <= delta else math.inf


@dataclass(frozen=True)
class Bound:
    """A labelled curve (sampled at the requested alphas and ``PLOT_ALPHAS``) and its source."""

    curve: BoundCurve
    source: Profile


def sample(
    source: Profile,
    *,
    label: Label,
    kind: Kind,
    name: str,
    alphas: Sequence[float],
    epsilon: float,
    delta: float,
    notes: Sequence[str] = (),
    epsilon_at_delta: float | None = None,
    delta_at_epsilon: float | None = None,
) -> Bound:
    """``source`` as a ``Bound``: beta at the requested alphas and the plot grid, eps at
    ``delta`` and delta at ``epsilon`` (or ``epsilon_at_delta`` / ``delta_at_epsilon`` when the
    claim's own accountant gave them)."""
    grid = np.unique(np.concatenate([as_array(list(alphas)), PLOT_ALPHAS]))
    beta = np.clip(np.atleast_1d(as_array(source.tradeoff(grid))), 0.0, 1.0)
    eps = source.epsilon(delta) if epsilon_at_delta is None else epsilon_at_delta
    curve = BoundCurve(
        label=label,
        kind=kind,
        name=name,
        curve_alpha=grid,
        curve_beta=beta,
        epsilon_at_delta=float(eps),
        delta_at_epsilon=float(
            np.atleast_1d(as_array(source.delta(epsilon)))[0] if delta_at_epsilon is None else delta_at_epsilon
        ),
        notes=tuple(notes),
    )
    return Bound(curve, source)
