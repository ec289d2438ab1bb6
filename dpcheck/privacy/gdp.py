"""Gaussian differential privacy (docs/theory.md#gaussian-dp; Dong, Roth, Su 2022) and the two
elementary neighbouring pairs: the Gaussian shift N(0,1) vs N(mu,1) and the trivial pair P = Q.

All functions are vectorised over alpha / eps and stay finite at the extremes (alpha = 0, 1 or
1e-300, eps up to 50, mu up to 1e3): quantiles use ``norm.isf``, never ``ppf(1 - alpha)``, and
delta(eps) is formed in log space."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import log_ndtr, ndtr

from dpcheck.errors import ParameterError
from dpcheck.privacy._laws import normal_isf
from dpcheck.privacy._numerics import (
    smallest_nonpositive,
    FloatArray,
    as_array,
    require_alpha,
    require_delta,
    scalar_or_array,
)


def _require_mu(mu: float) -> float:
    m = float(mu)
    if not np.isfinite(m) or m < 0.0:
        raise ParameterError(f"mu must be a finite number >= 0, got {mu!r}")
    return m


def gaussian_tradeoff(alpha: ArrayLike, mu: float) -> FloatArray | float:
    """G_mu(alpha) = Phi(Phi^-1(1 - alpha) - mu): the trade-off of N(0, 1) against N(mu, 1).

    The trade-off function of Gaussian differential privacy (docs/theory.md#gaussian-dp): the
    smallest type-II error of any level-alpha test between the two Gaussians. The quantile is taken
    as ``norm.isf(alpha)``, never ``ppf(1 - alpha)``, so alpha down to 1e-300 stays accurate.

    Parameters
    ----------
    alpha : array_like
        Type-I error levels in [0, 1].
    mu : float
        The GDP parameter, finite and >= 0; mu = 0 gives 1 - alpha (perfect privacy).

    Returns
    -------
    float or ndarray
        G_mu(alpha): a float for a scalar ``alpha``, else an array of its shape.

    Raises
    ------
    ParameterError
        If an alpha lies outside [0, 1], or mu is negative or not finite.

    Examples
    --------
    >>> from dpcheck.privacy.gdp import gaussian_tradeoff
    >>> round(gaussian_tradeoff(0.05, 1.0), 6)
    0.740489
    >>> gaussian_tradeoff([0.0, 1.0], 1.0).tolist()
    [1.0, 0.0]
    """
    a = require_alpha(alpha)
    return scalar_or_array(ndtr(normal_isf(a) - _require_mu(mu)), alpha)


def gdp_log_delta(eps: ArrayLike, mu: float) -> FloatArray | float:
    """log delta_mu(eps), with delta_mu(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2).

    Valid for every real eps. Written as log Phi(a) + log(1 - e^(eps + log Phi(b) - log Phi(a)))
    with a = -eps/mu + mu/2, b = -eps/mu - mu/2, because the direct difference cancels
    catastrophically for eps >~ 8 (docs/theory.md#gaussian-dp).

    Parameters
    ----------
    eps : array_like
        Privacy-loss levels, any real numbers.
    mu : float
        The GDP parameter, finite and >= 0.

    Returns
    -------
    float or ndarray
        log delta_mu(eps) (-inf where delta is 0), shaped like ``eps``.

    Examples
    --------
    >>> from dpcheck.privacy.gdp import gdp_log_delta
    >>> round(gdp_log_delta(50.0, 1.0), 3)  # delta itself underflows to 0.0
    -1233.869
    """
    e = as_array(eps)
    m = _require_mu(mu)
    if m == 0.0:
        with np.errstate(divide="ignore"):
            return scalar_or_array(np.log(np.maximum(-np.expm1(e), 0.0)), eps)
    log_a = log_ndtr(-e / m + m / 2.0)
    log_b = log_ndtr(-e / m - m / 2.0)
    gap = np.minimum(e + log_b - log_a, 0.0)
    with np.errstate(divide="ignore"):
        return scalar_or_array(log_a + np.log(-np.expm1(gap)), eps)


def gdp_delta(eps: ArrayLike, mu: float) -> FloatArray | float:
    """delta(eps) of mu-GDP, the privacy profile of N(0, 1) against N(mu, 1).

    delta_mu(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) (Dong, Roth, Su 2022,
    Cor. 2.13), formed in log space by ``gdp_log_delta`` (docs/theory.md#gaussian-dp).

    Parameters
    ----------
    eps : array_like
        Privacy-loss levels, any real numbers.
    mu : float
        The GDP parameter, finite and >= 0.

    Returns
    -------
    float or ndarray
        delta_mu(eps) in [0, 1], shaped like ``eps``.

    Examples
    --------
    >>> from dpcheck.privacy.gdp import gdp_delta
    >>> round(gdp_delta(1.0, 1.0), 10)
    0.1269367375
    >>> [f"{d:.4g}" for d in gdp_delta([0.0, 5.0], 1.0)]
    ['0.3829', '5.794e-07']
    """
    return scalar_or_array(np.exp(as_array(gdp_log_delta(eps, mu))), eps)


def gdp_epsilon(delta: ArrayLike, mu: float) -> FloatArray | float:
    """The smallest eps >= 0 with delta_mu(eps) <= delta: the inverse of ``gdp_delta``.

    Found by root finding on log delta (docs/theory.md#gaussian-dp), so tiny deltas keep their
    digits.

    Parameters
    ----------
    delta : array_like
        Target deltas in (0, 1).
    mu : float
        The GDP parameter, finite and >= 0.

    Returns
    -------
    float or ndarray
        eps(delta), shaped like ``delta``.

    Raises
    ------
    ParameterError
        If a delta lies outside (0, 1), or mu is negative or not finite.

    Examples
    --------
    >>> from dpcheck.privacy.gdp import gdp_epsilon
    >>> round(gdp_epsilon(1e-5, 1.0), 6)
    4.377178
    >>> round(gdp_epsilon(1e-5, 10 ** 0.5), 4)  # sqrt(E)/sigma-GDP, E = 10 epochs, sigma = 1
    17.8566
    """
    m = _require_mu(mu)
    targets = as_array(delta).reshape(-1)
    out = np.array([_gdp_epsilon_one(require_delta("delta", d), m) for d in targets])
    return scalar_or_array(out.reshape(np.shape(delta)), delta)


def _gdp_epsilon_one(delta: float, mu: float) -> float:
    log_target = np.log(delta)
    return smallest_nonpositive(lambda e: float(gdp_log_delta(e, mu)) - log_target, xtol=1e-13)


@dataclass(frozen=True)
class GaussianShiftPair:
    """P = N(0,1), Q = N(mu,1): the loss is l(x) = mu x - mu^2/2, so l >= tau iff
    x >= tau/mu + mu/2. Symmetric: the reversed pair has the same law of loss."""

    mu: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "mu", _require_mu(self.mu))

    def alpha(self, tau: FloatArray) -> FloatArray:
        """P(l >= tau)."""
        t = as_array(tau)
        if self.mu == 0.0:
            return TrivialPair().alpha(t)
        return ndtr(-(t / self.mu + self.mu / 2.0))

    def beta(self, tau: FloatArray) -> FloatArray:
        """Q(l < tau)."""
        t = as_array(tau)
        if self.mu == 0.0:
            return TrivialPair().beta(t)
        return ndtr(t / self.mu - self.mu / 2.0)

    def reversed(self) -> GaussianShiftPair:
        """(Q, P) is N(mu,1) vs N(0,1), the same pair up to a reflection."""
        return self

    def hockey_stick(self, eps: FloatArray) -> FloatArray:
        """delta_{Q||P}(eps) in closed form."""
        return as_array(gdp_delta(as_array(eps), self.mu))

    def tradeoff(self, alpha: ArrayLike) -> FloatArray | float:
        """T(P, Q) = G_mu."""
        return gaussian_tradeoff(alpha, self.mu)


@dataclass(frozen=True)
class TrivialPair:
    """P = Q: the loss is 0 almost surely, so the trade-off is 1 - alpha."""

    def alpha(self, tau: FloatArray) -> FloatArray:
        """P(0 >= tau)."""
        return np.where(as_array(tau) <= 0.0, 1.0, 0.0)

    def beta(self, tau: FloatArray) -> FloatArray:
        """Q(0 < tau)."""
        return np.where(as_array(tau) > 0.0, 1.0, 0.0)

    def reversed(self) -> TrivialPair:
        """P = Q is its own reverse."""
        return self

    def hockey_stick(self, eps: FloatArray) -> FloatArray:
        """delta(eps) = max(0, 1 - e^eps)."""
        return np.maximum(-np.expm1(as_array(eps)), 0.0)

    def tradeoff(self, alpha: ArrayLike) -> FloatArray | float:
        """1 - alpha."""
        return scalar_or_array(1.0 - require_alpha(alpha), alpha)
