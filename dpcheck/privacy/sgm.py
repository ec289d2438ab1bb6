"""The claimed guarantee: the Poisson-subsampled Gaussian mechanism (SGM), which is what
Opacus, TF-Privacy and dp_accounting account for (docs/theory.md#sgm-mechanism,
docs/theory.md#sgm-one-step, docs/theory.md#sgm-pld).

One round: the exact symmetric curve C_q(G_{1/sigma}) and the remove/add dominating pairs
(Zhu-Dong-Wang 2022) with analytic loss laws; T rounds: the PLD composition of both directions,
reported as the pessimistic (upper) value or as the [optimistic, pessimistic] bracket."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import ndtr

from dpcheck.privacy._laws import normal_pdf
from dpcheck.privacy._numerics import (
    FloatArray,
    as_array,
    log_sub_exp,
    require_alpha,
    require_delta,
    require_positive,
    require_probability,
    require_sigma,
    require_steps,
    scalar_or_array,
)
from dpcheck.privacy.gdp import gaussian_tradeoff, gdp_delta
from dpcheck.privacy.pld import TwoSidedPLD, compose_both_directions, compose_direction, composed_interval
from dpcheck.privacy.tradeoff import inverse

Direction = Literal["remove", "add"]

_QUADRATURE_SDS = 12.0
_QUADRATURE_POINTS = 8001


def _subsampled_curve(alpha: FloatArray, q: float, mu: float) -> FloatArray:
    """f_q(alpha) = q G_mu(alpha) + (1 - q)(1 - alpha): one direction, exact."""
    return q * as_array(gaussian_tradeoff(alpha, mu)) + (1.0 - q) * (1.0 - alpha)


def poisson_sgm_tradeoff(alpha: ArrayLike, q: float, sigma: float) -> FloatArray | float:
    """C_q(G_{1/sigma})(alpha): the exact symmetric one-round trade-off of SGM with Poisson rate q.

    The curve the accountants' mechanism satisfies for one release (Dong, Roth, Su 2022, Thm 4.2;
    docs/theory.md#sgm-one-step). Piecewise, with f_q(alpha) = q G_mu(alpha) + (1 - q)(1 - alpha),
    mu = 1/sigma and x* = Phi(-mu/2): f_q on [0, x*], the line x* + f_q(x*) - alpha on
    [x*, f_q(x*)], and f_q^-1 beyond.

    Parameters
    ----------
    alpha : array_like
        Type-I error levels in [0, 1].
    q : float
        Poisson sampling rate in (0, 1].
    sigma : float
        Noise multiplier, >= 1e-3.

    Returns
    -------
    float or ndarray
        The curve at ``alpha``, shaped like it.

    Examples
    --------
    >>> from dpcheck.privacy.sgm import poisson_sgm_tradeoff
    >>> round(poisson_sgm_tradeoff(0.05, 0.01, 1.0), 6)
    0.947905
    >>> poisson_sgm_tradeoff([0.0, 0.5], 0.01, 1.0).round(6).tolist()
    [1.0, 0.496171]
    """
    a = require_alpha(alpha)
    q = require_probability("q", q)
    mu = 1.0 / require_sigma("sigma", sigma)
    x_star = float(ndtr(-mu / 2.0))
    f_star = float(_subsampled_curve(np.array(x_star), q, mu))
    flat = a.ravel()
    beta = np.where(
        flat <= x_star,
        _subsampled_curve(flat, q, mu),
        np.maximum(x_star + f_star - flat, 0.0),
    )
    tail = flat > f_star
    if np.any(tail):
        beta[tail] = inverse(lambda x: _subsampled_curve(x, q, mu), flat[tail])
    return scalar_or_array(beta.reshape(a.shape), alpha)


@dataclass(frozen=True)
class PoissonSubsampledGaussianPair:
    """One round of SGM as a dominating pair, mu = 1/sigma.

    remove: P = N(0,1), Q = (1-q) N(0,1) + q N(mu,1), loss l(x) = log(1 - q + q e^{mu x - mu^2/2});
    add: the reverse (P and Q swapped, loss -l). l is increasing in x, with l > log(1 - q)."""

    q: float
    sigma: float
    direction: Direction = "remove"

    def __post_init__(self) -> None:
        object.__setattr__(self, "q", require_probability("q", self.q))
        object.__setattr__(self, "sigma", require_sigma("sigma", self.sigma))

    @property
    def mu(self) -> float:
        return 1.0 / self.sigma

    def _x_of(self, ell: FloatArray) -> FloatArray:
        """The x at which the remove loss equals ell (-inf where ell <= log(1 - q))."""
        log_rest = np.log1p(-self.q) if self.q < 1.0 else -np.inf
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = log_sub_exp(ell, np.full_like(ell, log_rest)) - np.log(self.q)
        x = (ratio + self.mu**2 / 2.0) / self.mu
        return np.where(ell > log_rest, x, -np.inf)

    def _mixture_cdf(self, x: FloatArray) -> FloatArray:
        return (1.0 - self.q) * ndtr(x) + self.q * ndtr(x - self.mu)

    def alpha(self, tau: FloatArray) -> FloatArray:
        """P(l >= tau)."""
        t = as_array(tau)
        if self.direction == "remove":
            return ndtr(-self._x_of(t))
        return self._mixture_cdf(self._x_of(-t))

    def beta(self, tau: FloatArray) -> FloatArray:
        """Q(l < tau)."""
        t = as_array(tau)
        if self.direction == "remove":
            return self._mixture_cdf(self._x_of(t))
        return ndtr(-self._x_of(-t))

    def loss_variance(self) -> float:
        """The larger variance of the remove loss l under P and under Q (the add direction's
        loss -l has the same two laws, swapped), by quadrature on x in [-12, mu + 12]: it
        sizes the T-round grid (``composed_interval``), so a few digits suffice."""
        x = np.linspace(-_QUADRATURE_SDS, self.mu + _QUADRATURE_SDS, _QUADRATURE_POINTS)
        with np.errstate(divide="ignore"):
            log_rest = np.log1p(-self.q)
        loss = np.logaddexp(log_rest, np.log(self.q) + self.mu * x - self.mu**2 / 2.0)
        p_density = normal_pdf(x)
        variances = []
        for density in (p_density, (1.0 - self.q) * p_density + self.q * normal_pdf(x - self.mu)):
            w = density / density.sum()
            mean = float(np.sum(w * loss))
            variances.append(float(np.sum(w * (loss - mean) ** 2)))
        return max(variances)

    def reversed(self) -> PoissonSubsampledGaussianPair:
        """The other neighbouring direction."""
        other: Direction = "add" if self.direction == "remove" else "remove"
        return PoissonSubsampledGaussianPair(self.q, self.sigma, other)

    def hockey_stick(self, eps: FloatArray) -> FloatArray:
        """delta_{Q||P}(eps) in closed form through the Gaussian delta:
        remove: q delta_mu(log((e^eps - 1 + q)/q)), or 1 - e^eps where e^eps <= 1 - q;
        add: c delta_mu(eps + log q - log c) with c = 1 - e^eps (1 - q), 0 where c <= 0."""
        e = as_array(eps)
        q, mu = self.q, self.mu
        log_rest = np.log1p(-q) if q < 1.0 else -np.inf
        with np.errstate(divide="ignore", invalid="ignore"):
            if self.direction == "remove":
                shifted = log_sub_exp(e, np.full_like(e, log_rest)) - np.log(q)
                inner = q * as_array(gdp_delta(np.where(e > log_rest, shifted, 0.0), mu))
                return np.where(e > log_rest, inner, -np.expm1(e))
            log_c = log_sub_exp(np.zeros_like(e), e + log_rest)
            shifted = e + np.log(q) - log_c
            inner = np.exp(log_c) * as_array(gdp_delta(np.where(e < -log_rest, shifted, 0.0), mu))
            return np.where(e < -log_rest, inner, 0.0)


def sgm_pld(
    q: float, sigma: float, steps: int, interval: float | None = None, *, optimistic: bool = False
) -> tuple[TwoSidedPLD | None, TwoSidedPLD]:
    """The T-round privacy-loss distributions of SGM, both directions: (optimistic, pessimistic).

    One round is the dominating pair of ``PoissonSubsampledGaussianPair`` (remove and add orders);
    T rounds are its PLD composed by FFT (docs/theory.md#sgm-pld). The pessimistic PLD's read-outs
    are upper bounds, the optimistic one's lower bounds; the truth lies between.

    Parameters
    ----------
    q : float
        Poisson sampling rate in (0, 1].
    sigma : float
        Noise multiplier, >= 1e-3.
    steps : int
        Number of rounds T, >= 1.
    interval : float, optional
        Grid step of the loss; by default ``composed_interval`` (``default_interval(steps)``
        unless the loss is so spread that the grid would exceed COMPOSED_POINTS).
    optimistic : bool, default False
        Also build the optimistic PLD (otherwise the first element is None).

    Returns
    -------
    tuple of (TwoSidedPLD or None, TwoSidedPLD)
        The optimistic and the pessimistic T-round PLDs.

    Examples
    --------
    >>> from dpcheck.privacy.sgm import sgm_pld
    >>> low, high = sgm_pld(0.01, 1.0, 1000, optimistic=True)
    >>> round(low.epsilon(1e-5), 4), round(high.epsilon(1e-5), 4)
    (1.8275, 1.8288)
    """
    pair = PoissonSubsampledGaussianPair(q, sigma)
    steps = require_steps("steps", steps)
    h = composed_interval(steps, pair.loss_variance()) if interval is None else require_positive("interval", interval)
    return compose_both_directions(pair, steps, h, optimistic=optimistic)


def poisson_sgm_pld_bracket(
    q: float,
    sigma: float,
    steps: int,
    *,
    delta: float | None = None,
    epsilon: float | None = None,
    interval: float | None = None,
) -> tuple[float, float]:
    """(low, high) bracket of eps(delta) or of delta(eps) for T rounds of SGM, both directions.

    low comes from the optimistic PLD, high from the pessimistic one (docs/theory.md#sgm-pld); the
    true value lies between.

    Parameters
    ----------
    q : float
        Poisson sampling rate in (0, 1].
    sigma : float
        Noise multiplier, >= 1e-3.
    steps : int
        Number of rounds T, >= 1.
    delta : float, optional
        Read eps at this delta, in (0, 1).
    epsilon : float, optional
        Read delta at this eps. Give exactly one of ``delta`` and ``epsilon``.
    interval : float, optional
        Grid step of the loss (see ``sgm_pld``).

    Returns
    -------
    tuple of float
        (low, high).

    Raises
    ------
    ValueError
        If both or neither of ``delta`` and ``epsilon`` are given.

    Examples
    --------
    >>> from dpcheck.privacy.sgm import poisson_sgm_pld_bracket
    >>> low, high = poisson_sgm_pld_bracket(0.01, 1.0, 1000, delta=1e-5)
    >>> round(low, 4), round(high, 4)
    (1.8275, 1.8288)
    >>> low, high = poisson_sgm_pld_bracket(0.01, 1.0, 1000, epsilon=1.0)
    >>> round(low, 5), round(high, 5)
    (0.0026, 0.00262)
    """
    if (delta is None) == (epsilon is None):
        raise ValueError("give exactly one of delta= or epsilon=")
    lower, upper = sgm_pld(q, sigma, steps, interval, optimistic=True)
    assert lower is not None
    if delta is not None:
        d = require_delta("delta", delta)
        return lower.epsilon(d), upper.epsilon(d)
    e = float(epsilon)  # type: ignore[arg-type]
    return float(lower.delta(e)), float(upper.delta(e))


def poisson_sgm_epsilon(
    q: float, sigma: float, steps: int, delta: float, interval: float | None = None
) -> float:
    """eps(delta) of T rounds of SGM with Poisson rate q: the pessimistic PLD value (upper bound).

    The worse of the add and remove directions (docs/theory.md#sgm-pld); dp_accounting's PLD
    accountant gives 1.82824 for the example below, its RDP accountant 2.101.

    Parameters
    ----------
    q : float
        Poisson sampling rate in (0, 1].
    sigma : float
        Noise multiplier, >= 1e-3.
    steps : int
        Number of rounds T, >= 1.
    delta : float
        Target delta in (0, 1).
    interval : float, optional
        Grid step of the loss (see ``sgm_pld``).

    Returns
    -------
    float
        eps at ``delta``.

    Examples
    --------
    >>> from dpcheck.privacy.sgm import poisson_sgm_epsilon
    >>> round(poisson_sgm_epsilon(0.01, 1.0, 1000, 1e-5), 3)
    1.829
    >>> round(poisson_sgm_epsilon(0.02, 1.0, 1000, 1e-5), 3)  # twice the rate
    3.899
    """
    _, upper = sgm_pld(q, sigma, steps, interval)
    return upper.epsilon(require_delta("delta", delta))


def poisson_sgm_epsilon_above(q: float, sigma: float, steps: int, delta: float, threshold: float) -> float:
    """``poisson_sgm_epsilon``, or, as soon as one direction's eps exceeds ``threshold``, that
    eps: the exact value, or a value above ``threshold`` that the exact one is at least.

    eps is the worse of the remove and add directions, so a question "is eps below the
    threshold?" is answered by the first direction above it, without composing the other (the
    sigma search asks it some twenty times). The remove direction goes first, the larger one
    wherever it was measured (49.97 against 12.14 at q = 0.0102, sigma = 0.372, T = 1960); the
    order decides only how often the other is skipped, never the value. Where both are
    composed the value is ``poisson_sgm_epsilon``'s, bit for bit (same grid, same read-out).

    Parameters
    ----------
    q : float
        Poisson sampling rate in (0, 1].
    sigma : float
        Noise multiplier, >= 1e-3.
    steps : int
        Number of rounds T, >= 1.
    delta : float
        Target delta in (0, 1).
    threshold : float
        The eps the caller compares with.

    Returns
    -------
    float
        eps at ``delta`` (the pessimistic PLD value), or a value above ``threshold`` that it is
        at least.

    Examples
    --------
    >>> from dpcheck.privacy.sgm import poisson_sgm_epsilon, poisson_sgm_epsilon_above
    >>> poisson_sgm_epsilon_above(0.01, 1.0, 1000, 1e-5, 5.0) == poisson_sgm_epsilon(0.01, 1.0, 1000, 1e-5)
    True
    >>> poisson_sgm_epsilon_above(0.01, 1.0, 1000, 1e-5, 1.0) > 1.0
    True
    """
    pair = PoissonSubsampledGaussianPair(q, sigma)
    steps = require_steps("steps", steps)
    d = require_delta("delta", delta)
    h = composed_interval(steps, pair.loss_variance())
    first = compose_direction(pair, steps, h).epsilon(d)
    if first > threshold:
        return first
    return max(first, compose_direction(pair.reversed(), steps, h).epsilon(d))


def poisson_sgm_delta(
    q: float, sigma: float, steps: int, epsilon: float, interval: float | None = None
) -> float:
    """delta(eps) of T rounds of SGM: the pessimistic PLD value, the worse of both directions.

    Parameters
    ----------
    q : float
        Poisson sampling rate in (0, 1].
    sigma : float
        Noise multiplier, >= 1e-3.
    steps : int
        Number of rounds T, >= 1.
    epsilon : float
        The eps to read delta at.
    interval : float, optional
        Grid step of the loss (see ``sgm_pld``).

    Returns
    -------
    float
        delta at ``epsilon`` (an upper bound; docs/theory.md#sgm-pld).

    Examples
    --------
    >>> from dpcheck.privacy.sgm import poisson_sgm_delta
    >>> f"{poisson_sgm_delta(0.01, 1.0, 1000, 1.828):.3g}"
    '1.01e-05'
    """
    _, upper = sgm_pld(q, sigma, steps, interval)
    return float(upper.delta(float(epsilon)))


def poisson_sgm_curve(
    alpha: ArrayLike, q: float, sigma: float, steps: int, interval: float | None = None
) -> FloatArray | float:
    """The T-round symmetric trade-off curve of SGM from the pessimistic PLDs: the lower convex
    envelope of min(remove curve, add curve), evaluated at ``alpha``."""
    _, upper = sgm_pld(q, sigma, steps, interval)
    return upper.tradeoff(alpha)
