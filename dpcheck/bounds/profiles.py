"""Bounds as objects that can be sampled: a trade-off curve, a privacy profile delta(eps) and its
inverse eps(delta). ``TwoSidedPLD`` and ``VarianceWitness`` already have this shape; the
adapters here give it to a curve known only in closed form (the shuffle max test), to a
(0, delta) statement (the chi-square bound), to mu-GDP (the deterministic-batch bound) and to
an RDP curve (the fixed-size subsets bound), and takes the pointwise maximum of several curves (a
witness valid for whichever of several mechanisms the code runs). ``sample`` turns any of them into a labelled
``BoundCurve`` evaluated at the requested alphas and at the plot grid, keeping the source for
the delta(eps) profiles of the plot."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Protocol

import numpy as np
from numpy.typing import ArrayLike

from dpcheck.privacy._numerics import FloatArray, as_array, smallest_nonpositive
from dpcheck.privacy.gdp import gaussian_tradeoff, gdp_delta, gdp_epsilon
from dpcheck.privacy.labels import BoundCurve, Kind, Label
from dpcheck.privacy.rdp import rdp_to_delta, rdp_to_epsilon
from dpcheck.privacy.tradeoff import curve_from_profile, default_alpha_grid, profile_from_curve

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
class GdpProfile:
    """mu-GDP: the curve G_mu, delta(eps) in closed form (Dong, Roth, Su 2022, Cor. 2.13)."""

    mu: float

    def tradeoff(self, alpha: ArrayLike) -> FloatArray:
        return np.atleast_1d(as_array(gaussian_tradeoff(np.atleast_1d(as_array(alpha)), self.mu)))

    def delta(self, eps: ArrayLike) -> FloatArray:
        return np.atleast_1d(as_array(gdp_delta(np.atleast_1d(as_array(eps)), self.mu)))

    def epsilon(self, delta: float) -> float:
        return float(gdp_epsilon(delta, self.mu))


RDP_CURVE_POINTS = 400
"""(eps, delta(eps)) points of an RDP profile that its trade-off curve is the upper envelope of."""


@dataclass(frozen=True)
class RdpProfile:
    """An RDP curve (orders, values) read through the improved conversion: eps(delta) and
    delta(eps) exactly as an RDP accountant gives them, and the trade-off curve implied by
    (eps, delta(eps))-DP at RDP_CURVE_POINTS values of eps (a valid lower bound of the true
    curve, as every point of it is)."""

    orders: FloatArray
    values: FloatArray

    def delta(self, eps: ArrayLike) -> FloatArray:
        e = np.atleast_1d(as_array(eps))
        return np.array([rdp_to_delta(self.orders, self.values, max(float(x), 0.0))[0] for x in e.ravel()])

    def epsilon(self, delta: float) -> float:
        return rdp_to_epsilon(self.orders, self.values, delta)[0]

    def tradeoff(self, alpha: ArrayLike) -> FloatArray:
        top = max(self.epsilon(1e-12), 1.0)
        grid = np.linspace(0.0, 1.5 * top, RDP_CURVE_POINTS) if np.isfinite(top) else np.linspace(0.0, 50.0, 50)
        return np.atleast_1d(as_array(curve_from_profile(np.atleast_1d(as_array(alpha)), grid, self.delta(grid))))


@dataclass(frozen=True)
class PointwiseMax:
    """The pointwise maximum of trade-off curves, max_i f_i(alpha) (docs/theory.md#undecided-normalization).

    When the code runs one of several mechanisms and each part is a witness of one of them (its
    curve lies above that mechanism's true curve), the maximum lies above the true curve whichever
    mechanism runs: a witness for all of them. delta(eps) is the sup over the dense grid
    ``default_alpha_grid()`` of the maximum sampled there once, a lower estimate of the curve's
    delta, so a witness stays a witness."""

    parts: tuple[Profile, ...]

    def tradeoff(self, alpha: ArrayLike) -> FloatArray:
        a = np.atleast_1d(as_array(alpha))
        return np.max([np.atleast_1d(as_array(part.tradeoff(a))) for part in self.parts], axis=0)

    @cached_property
    def _grid(self) -> tuple[FloatArray, FloatArray]:
        grid = default_alpha_grid()
        return grid, self.tradeoff(grid)

    def delta(self, eps: ArrayLike) -> FloatArray:
        grid, beta = self._grid
        return np.atleast_1d(as_array(profile_from_curve(lambda _: beta, eps, grid)))

    def epsilon(self, delta: float) -> float:
        return _smallest_epsilon(lambda e: float(self.delta(e)[0]), delta)


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
