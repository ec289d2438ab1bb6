"""The central-limit μ of T rounds of subsampled Gaussian (Bu, Dong, Long, Su 2020;
docs/theory.md#sgm-clt): an asymptotic approximation for display, never a bound.

The CLT limit holds as T -> infinity with q sqrt(T) fixed; at finite T it can be optimistic
(q = 0.01, sigma = 1, T = 1000 gives eps = 1.618 at delta = 1e-5 while the exact PLD value is
1.828), so ``clt_indicator`` marks its curve ``valid=False`` with that reason."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import ndtr

from dpcheck.privacy._numerics import (
    as_array,
    require_alpha,
    require_delta,
    require_positive,
    require_probability,
)
from dpcheck.privacy.gdp import gaussian_tradeoff, gdp_delta, gdp_epsilon
from dpcheck.privacy.labels import BoundCurve, Kind, Label

CLT_NOTE = (
    "central-limit approximation (Bu et al. 2020), asymptotic in T: not a bound; "
    "it can understate the true epsilon at finite T"
)


def _require_rounds(steps: float) -> float:
    """T = epochs * N / b need not be an integer here (docs/theory.md#sgm-clt)."""
    return require_positive("steps", steps)


def clt_mu_poisson(q: float, sigma: float, steps: float) -> float:
    """mu_CLT = q sqrt(T (e^(1/sigma^2) - 1)): the central-limit GDP parameter of T rounds of SGM.

    The limit of Bu, Dong, Long, Su (2020) for Poisson subsampling (docs/theory.md#sgm-clt), as
    the GDP accountants compute it. It is an asymptotic approximation, not a bound: at finite T it
    can understate the true epsilon, so dpcheck only displays it.

    Parameters
    ----------
    q : float
        Poisson sampling rate in (0, 1].
    sigma : float
        Noise multiplier, > 0.
    steps : float
        Number of rounds T, > 0 (epochs * N / b need not be an integer).

    Returns
    -------
    float
        mu_CLT; inf once e^(1/sigma^2) overflows (sigma <~ 0.0376), which is what the formula
        means there.

    Examples
    --------
    >>> from dpcheck.privacy.clt import clt_mu_poisson
    >>> from dpcheck.privacy.gdp import gdp_epsilon
    >>> mu = clt_mu_poisson(0.01, 1.0, 1000)
    >>> round(mu, 6)
    0.414522
    >>> round(gdp_epsilon(1e-5, mu), 4)  # below the exact 1.828: not a bound
    1.6177
    """
    q = require_probability("q", q)
    s = require_positive("sigma", sigma)
    with np.errstate(over="ignore"):
        return float(q * np.sqrt(_require_rounds(steps) * np.expm1(s**-2)))


def clt_mu_uniform(q: float, sigma: float, steps: float) -> float:
    """The central-limit GDP parameter of T rounds of the subsampled Gaussian without replacement.

    mu = sqrt(2) q sqrt(T) sqrt(e^(1/sigma^2) Phi(1.5/sigma) + 3 Phi(-0.5/sigma) - 2) (Bu, Dong,
    Long, Su 2020; docs/theory.md#sgm-clt), the "uniform" variant of the GDP accountants.

    Parameters
    ----------
    q : float
        Sampling rate b/N in (0, 1].
    sigma : float
        Noise multiplier, > 0.
    steps : float
        Number of rounds T, > 0.

    Returns
    -------
    float
        mu_CLT for sampling without replacement.

    Examples
    --------
    >>> from dpcheck.privacy.clt import clt_mu_uniform
    >>> round(clt_mu_uniform(0.01, 1.0, 1000), 6)
    0.540795
    """
    q = require_probability("q", q)
    s = require_positive("sigma", sigma)
    inner = np.exp(s**-2) * ndtr(1.5 / s) + 3.0 * ndtr(-0.5 / s) - 2.0
    return float(np.sqrt(2.0) * q * np.sqrt(_require_rounds(steps)) * np.sqrt(inner))


def clt_indicator(
    mu: float,
    alphas: ArrayLike,
    *,
    delta: float | None = None,
    epsilon: float | None = None,
    name: str = "CLT mu-GDP (display only)",
) -> BoundCurve:
    """G_mu at ``alphas`` with its eps(delta) / delta(eps), labelled standard and claimed but
    ``valid=False``: it is shown for orientation, never attached as a guarantee."""
    a = require_alpha(alphas).ravel()
    return BoundCurve(
        label=Label.STANDARD,
        kind=Kind.CLAIMED,
        name=name,
        curve_alpha=a,
        curve_beta=as_array(gaussian_tradeoff(a, mu)),
        epsilon_at_delta=None if delta is None else float(gdp_epsilon(require_delta("delta", delta), mu)),
        delta_at_epsilon=None if epsilon is None else float(gdp_delta(float(epsilon), mu)),
        valid=False,
        notes=(CLT_NOTE,),
    )
