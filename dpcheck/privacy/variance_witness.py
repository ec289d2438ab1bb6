"""The EASGM variance witness (docs/theory.md#variance-witness, own result): N(0, I_m) vs
N(0, s^2 I_m).

With every gradient zero, an EASGM release on D is N(0, (sigma C/d(N))^2 I_n) and on the
neighbour N(0, (sigma C/d(N+1))^2 I_n); T releases are i.i.d., so the whole transcript is the pair
N(0, I_m) vs N(0, s^2 I_m) with m = n T and s = d(N)/d(N+1). The pair is exact for any sigma, C,
q and adaptivity, so its trade-off is an upper bound on what the mechanism can guarantee: if it
crosses the claimed curve, the claim is false. Everything is closed form in chi2(m), which scipy
evaluates for m up to at least 1e12; delta(eps) is formed in log space.

Both neighbouring directions are reported: (P, Q) with ratio s and (Q, P), which after rescaling is
the same pair with ratio 1/s.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from dpcheck.errors import ParameterError
from dpcheck.privacy._laws import chi2_isf, chi2_logsf, chi2_ppf, chi2_sf
from dpcheck.privacy._numerics import (
    smallest_nonpositive,
    FloatArray,
    as_array,
    log_sub_exp,
    require_alpha,
    require_delta,
)
from dpcheck.privacy.gaussian_pair import chi2_logcdf
from dpcheck.privacy.labels import BoundCurve, Kind, Label


@dataclass(frozen=True)
class _Ratio:
    """A variance ratio s = 1 - e with e carried exactly, and the derived a = 1/s^2 - 1, log s."""

    e: float

    @property
    def s(self) -> float:
        return 1.0 - self.e

    @property
    def a(self) -> float:
        return self.e * (2.0 - self.e) / self.s**2

    @property
    def log_s(self) -> float:
        return math.log1p(-self.e)

    def inverse(self) -> _Ratio:
        """The ratio 1/s, whose 1 - 1/s = -e/(1 - e) keeps full relative precision."""
        return _Ratio(-self.e / (1.0 - self.e))


def _tradeoff(alpha: FloatArray, m: float, ratio: _Ratio) -> FloatArray:
    """T(N(0, I_m), N(0, s^2 I_m))(alpha): reject when ||x||^2 is small (s < 1) or large (s > 1)."""
    if ratio.e > 0.0:
        return chi2_sf(chi2_ppf(alpha, m) * (1.0 + ratio.a), m)
    if ratio.e < 0.0:
        return np.exp(chi2_logcdf(chi2_isf(alpha, m) * (1.0 + ratio.a), m))
    return 1.0 - alpha


def _log_delta(eps: FloatArray, m: float, ratio: _Ratio) -> FloatArray:
    """log delta_{Q||P}(eps) = log[Q(l > eps) - e^eps P(l > eps)] for l = -(a/2)R - m log s.

    R ~ chi2(m) under P and s^2 chi2(m) under Q; {l > eps} is {R < t} when s < 1 and {R > t}
    when s > 1, with t = 2(-m log s - eps)/a in both cases.
    """
    if ratio.e == 0.0:
        with np.errstate(divide="ignore"):
            return np.log(np.maximum(-np.expm1(eps), 0.0))
    t = 2.0 * (-m * ratio.log_s - eps) / ratio.a
    scale = 1.0 + ratio.a
    with np.errstate(divide="ignore", invalid="ignore"):
        if ratio.e > 0.0:
            inside = t > 0.0
            t_pos = np.where(inside, t, 1.0)
            log_q, log_p = chi2_logcdf(t_pos * scale, m), chi2_logcdf(t_pos, m)
        else:
            inside = np.ones_like(t, dtype=bool)
            t_pos = np.maximum(t, 0.0)
            log_q, log_p = chi2_logsf(t_pos * scale, m), chi2_logsf(t_pos, m)
        out = log_sub_exp(log_q, np.minimum(eps + log_p, log_q))
    return np.where(inside & (log_q > -np.inf), out, -np.inf)


@dataclass(frozen=True)
class VarianceWitness:
    """The exact pair N(0, I_m) vs N(0, s^2 I_m), both directions, with m = ``coordinates``.

    ``coordinates`` is n*T when every iterate is released, n when only the final model is;
    ``one_minus_s`` gives 1 - s exactly (e.g. 1/(N+1)) and then takes precedence over ``s``.
    """

    coordinates: float
    s: float
    one_minus_s: float | None = None

    def __post_init__(self) -> None:
        m = float(self.coordinates)
        if not (math.isfinite(m) and m >= 1.0 and m == math.floor(m)):
            raise ParameterError(f"coordinates (n*T) must be an integer >= 1, got {self.coordinates!r}")
        e = (1.0 - float(self.s)) if self.one_minus_s is None else float(self.one_minus_s)
        if not (math.isfinite(e) and e < 1.0):
            raise ParameterError(f"variance ratio s must be finite and > 0, got {self.s!r}")
        object.__setattr__(self, "coordinates", m)
        object.__setattr__(self, "one_minus_s", e)
        object.__setattr__(self, "s", 1.0 - e)

    @property
    def _ratios(self) -> tuple[_Ratio, _Ratio]:
        ratio = _Ratio(float(self.one_minus_s or 0.0))
        return ratio, ratio.inverse()

    def directional_tradeoffs(self, alpha: ArrayLike) -> tuple[FloatArray, FloatArray]:
        """(T(P, Q), T(Q, P)) at alpha, P the release on D and Q the release on D'."""
        a = np.atleast_1d(require_alpha(alpha))
        forward, backward = self._ratios
        return _tradeoff(a, self.coordinates, forward), _tradeoff(a, self.coordinates, backward)

    def tradeoff(self, alpha: ArrayLike) -> FloatArray:
        """f_var(alpha): the pointwise smaller of the two directions' exact trade-offs."""
        return np.minimum(*self.directional_tradeoffs(alpha))

    def log_delta(self, eps: ArrayLike) -> FloatArray:
        """log delta_var(eps), the larger of the two directions."""
        e = np.atleast_1d(as_array(eps))
        forward, backward = self._ratios
        return np.maximum(_log_delta(e, self.coordinates, forward), _log_delta(e, self.coordinates, backward))

    def delta(self, eps: ArrayLike) -> FloatArray:
        """delta_var(eps): a witness violation when it exceeds the claimed delta at the claimed eps."""
        return np.exp(self.log_delta(eps))

    def epsilon(self, delta: float) -> float:
        """The smallest eps >= 0 with delta_var(eps) <= delta."""
        log_target = math.log(require_delta("delta", delta))
        return smallest_nonpositive(lambda eps: float(self.log_delta(eps)[0]) - log_target)

    @property
    def mu_eq(self) -> float:
        """The Gaussian scale (1 - s^2) sqrt(m/2) (with s replaced by min(s, 1/s)): display only.

        As s -> 1 the pair approaches G_mu with this mu (docs/theory.md#split-evaluator); it is
        not a bound.
        """
        forward, backward = self._ratios
        contracted = forward if forward.e >= 0.0 else backward
        return contracted.e * (2.0 - contracted.e) * math.sqrt(self.coordinates / 2.0)

    def bound(self, alphas: ArrayLike, epsilon: float | None, delta: float | None) -> BoundCurve:
        """The witness as a labelled curve with its (eps, delta) read-outs."""
        a = np.atleast_1d(require_alpha(alphas))
        return BoundCurve(
            label=Label.OWN,
            kind=Kind.WITNESS,
            name="EASGM variance witness",
            curve_alpha=a,
            curve_beta=self.tradeoff(a),
            epsilon_at_delta=None if delta is None else self.epsilon(delta),
            delta_at_epsilon=None if epsilon is None else float(self.delta(epsilon)[0]),
            notes=(
                f"all-zero-gradient pair N(0,I_m) vs N(0,s^2 I_m), m={self.coordinates:.6g}, "
                f"s={self.s:.12g}, both directions; exact for any sigma, C, q",
                f"mu_eq={self.mu_eq:.4g} (Gaussian scale, display only)",
            ),
        )
