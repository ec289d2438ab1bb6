"""Renyi DP of the Poisson-subsampled Gaussian, computed the way Opacus and TF-Privacy compute
it, so that an epsilon a user printed can be reproduced (docs/theory.md#sgm-rdp).

The per-step RDP at order a is log(A_a)/(a - 1) with A_a = E_{x~P}[(Q/P)(x)^a] for the remove
pair (Mironov, Talwar, Zhang 2019): a finite binomial sum for integer a, and for fractional a
the two-sided series in erfc that the libraries use, summed until its terms drop below e^-30.
The (eps, delta) conversion exists in two published forms, selected by name:

* ``"classic"``: eps = min_a rdp_a - log(delta)/(a - 1) (Mironov 2017, Prop. 3; TF-Privacy's
  original ``compute_dp_sgd_privacy`` and Opacus < 1.0);
* ``"improved"``: eps = min_a rdp_a - (log(delta) + log(a))/(a - 1) + log((a - 1)/a)
  (Balle et al. 2020; Opacus >= 1.0, TF-Privacy / dp_accounting since 2020)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache
from typing import Literal

import numpy as np
from scipy.special import gammaln, log_ndtr

from dpcheck.errors import ParameterError
from dpcheck.privacy._numerics import (
    FloatArray,
    require_delta,
    require_probability,
    require_sigma,
    require_steps,
)

Conversion = Literal["classic", "improved"]

OPACUS_ORDERS: tuple[float, ...] = tuple([1 + x / 10.0 for x in range(1, 100)] + list(range(12, 64)))
"""Opacus ``RDPAccountant.DEFAULT_ALPHAS``."""

TF_PRIVACY_ORDERS: tuple[float, ...] = tuple(
    [1.25, 1.5, 1.75, 2.0, 2.25, 2.5, 3.0, 3.5, 4.0, 4.5] + list(range(5, 64)) + [128, 256, 512]
)
"""The orders of TF-Privacy's ``compute_dp_sgd_privacy``."""

NAMED_ORDERS: dict[str, tuple[float, ...]] = {"opacus": OPACUS_ORDERS, "tf_privacy": TF_PRIVACY_ORDERS}

# The fractional-order series stops once both of its terms are below e^-30, as in the libraries.
_SERIES_CUTOFF = -30.0
# A series still above the cutoff after this many terms is not summed: its order gets an
# infinite RDP and so never attains the minimum (dp_accounting excludes such orders too).
_MAX_TERMS = 10_000


def _log_a_integer(q: float, sigma: float, order: int) -> float:
    """log A_a for integer a: log sum_i C(a,i) q^i (1-q)^(a-i) exp((i^2 - i)/(2 sigma^2))."""
    i = np.arange(order + 1, dtype=np.float64)
    log_binom = gammaln(order + 1) - gammaln(i + 1) - gammaln(order - i + 1)
    log_rest = (order - i) * math.log1p(-q) if q < 1.0 else np.where(i == order, 0.0, -np.inf)
    terms = log_binom + i * math.log(q) + log_rest + (i * i - i) / (2.0 * sigma**2)
    return _logsumexp(terms)


def _log_a_fractional(q: float, sigma: float, order: float) -> float:
    """log A_a for fractional a (+inf when the series does not converge): the series
    sum_i C(a,i) [q^i (1-q)^(a-i) e^{(i^2-i)/2s^2} Phi((z0 - i)/s)
                  + q^(a-i) (1-q)^i e^{(j^2-j)/2s^2} Phi((j - z0)/s)], j = a - i,
    split at z0 = s^2 log(1/q - 1) + 1/2, summed term by term up to the first index where both
    terms are below e^-30. The coefficients C(a, i) change sign past i = a, so positive and
    negative terms are accumulated apart in log space. The terms are evaluated in growing
    vectorised blocks (most series end within the first): the first index below the cutoff is
    the same whichever block finds it."""
    for size in _BLOCKS:
        terms = _fractional_terms(q, sigma, order, size)
        if terms is not None:
            return _signed_logsumexp(order, *terms)
    return math.inf


#: Sizes of the blocks of terms ``_log_a_fractional`` evaluates, up to ``_MAX_TERMS``.
_BLOCKS = (128, 2048, _MAX_TERMS)


def _fractional_terms(
    q: float, sigma: float, order: float, size: int
) -> tuple[FloatArray, FloatArray] | None:
    """The log terms (both halves) of the fractional series up to its end, if the series ends
    within the first ``size`` terms; else None."""
    z0 = sigma**2 * math.log(1.0 / q - 1.0) + 0.5
    i = np.arange(size, dtype=np.float64)
    j = order - i
    log_coef = gammaln(order + 1) - gammaln(i + 1) - gammaln(j + 1)
    log_s0 = (
        log_coef + i * math.log(q) + j * math.log1p(-q) + (i * i - i) / (2 * sigma**2)
        + log_ndtr((z0 - i) / sigma)
    )
    log_s1 = (
        log_coef + j * math.log(q) + i * math.log1p(-q) + (j * j - j) / (2 * sigma**2)
        + log_ndtr((j - z0) / sigma)
    )
    below = np.flatnonzero(np.maximum(log_s0, log_s1) < _SERIES_CUTOFF)
    if below.size == 0:
        return None
    n = int(below[0]) + 1
    return log_s0[:n], log_s1[:n]


def _signed_logsumexp(order: float, log_s0: FloatArray, log_s1: FloatArray) -> float:
    """log of the series' sum; C(a, i) has one negative factor (a - k) for every k < i with
    k > a."""
    i = np.arange(log_s0.size, dtype=np.float64)
    negative = (np.maximum(i - math.floor(order) - 1, 0) % 2) == 1
    terms = np.concatenate([log_s0, log_s1])
    signs = np.concatenate([negative, negative])
    total_pos = _logsumexp(terms[~signs])
    if not np.any(signs):
        return total_pos
    total_neg = _logsumexp(terms[signs])
    return total_pos + math.log(-math.expm1(total_neg - total_pos))


def _logsumexp(terms: FloatArray) -> float:
    """log(sum(exp(terms))) of a 1-D array, stable (-inf for no terms or all -inf): scipy's
    general ``logsumexp`` costs far more per call on the short arrays met here."""
    if terms.size == 0:
        return -math.inf
    top = float(np.max(terms))
    if not math.isfinite(top):
        return top
    return top + math.log(float(np.sum(np.exp(terms - top))))


@lru_cache(maxsize=16384)
def per_step_rdp(q: float, sigma: float, order: float) -> float:
    """RDP of one step of SGM (remove pair) at ``order`` > 1 (kept per arguments: a sigma
    search or a scan's bounds ask the same orders again and again)."""
    if order <= 1:
        raise ParameterError(f"RDP order must be > 1, got {order!r}")
    if q == 1.0:
        return order / (2.0 * sigma**2)
    if float(order).is_integer():
        return _log_a_integer(q, sigma, int(order)) / (order - 1)
    return _log_a_fractional(q, sigma, order) / (order - 1)


def compute_rdp(
    q: float, sigma: float, steps: int, orders: Sequence[float] | str = "opacus"
) -> tuple[FloatArray, FloatArray]:
    """(orders, RDP of T steps at each order) of SGM, computed as Opacus and TF-Privacy compute it.

    One step at order a > 1 is log(A_a)/(a - 1), A_a = E_P[(dQ/dP)^a] for the remove pair
    (Mironov, Talwar, Zhang 2019); T steps have T times the RDP (docs/theory.md#sgm-rdp).

    Parameters
    ----------
    q : float
        Poisson sampling rate in (0, 1].
    sigma : float
        Noise multiplier, >= 1e-3.
    steps : int
        Number of steps T, >= 1.
    orders : sequence of float or str, default "opacus"
        The orders, or the name of a library's set in NAMED_ORDERS ("opacus", "tf_privacy").

    Returns
    -------
    tuple of ndarray
        (orders, RDP values).

    Examples
    --------
    >>> from dpcheck.privacy.rdp import compute_rdp
    >>> orders, rdp = compute_rdp(0.01, 1.0, 1000)
    >>> orders.size, orders[:3].tolist(), rdp[:3].round(4).tolist()
    (151, [1.1, 1.2, 1.3], [0.0924, 0.1011, 0.1097])
    """
    q = require_probability("q", q)
    sigma = require_sigma("sigma", sigma)
    steps = require_steps("steps", steps)
    order_arr = np.asarray(_resolve_orders(orders), dtype=np.float64)
    rdp = np.array([per_step_rdp(q, sigma, a) for a in order_arr]) * steps
    return order_arr, rdp


def rdp_to_epsilon(
    orders: FloatArray, rdp: FloatArray, delta: float, conversion: Conversion = "improved"
) -> tuple[float, float]:
    """(eps, optimal order) from RDP values by the named (eps, delta) conversion.

    ``"classic"``: eps = min_a rdp_a - log(delta)/(a - 1) (Mironov 2017); ``"improved"``:
    eps = min_a rdp_a - (log(delta) + log(a))/(a - 1) + log((a - 1)/a) (Balle et al. 2020). See
    docs/theory.md#sgm-rdp for which library uses which.

    Parameters
    ----------
    orders : ndarray
        RDP orders, > 1.
    rdp : ndarray
        RDP value at each order.
    delta : float
        Target delta in (0, 1).
    conversion : {"improved", "classic"}, default "improved"
        The conversion.

    Returns
    -------
    tuple of float
        (eps, the order attaining it).

    Examples
    --------
    >>> from dpcheck.privacy.rdp import compute_rdp, rdp_to_epsilon
    >>> orders, rdp = compute_rdp(0.01, 1.0, 1000)
    >>> eps, order = rdp_to_epsilon(orders, rdp, 1e-5)
    >>> round(eps, 4), order
    (2.1014, 7.8)
    >>> round(rdp_to_epsilon(orders, rdp, 1e-5, "classic")[0], 4)
    2.538
    """
    delta = require_delta("delta", delta)
    a = np.asarray(orders, dtype=np.float64)
    r = np.asarray(rdp, dtype=np.float64)
    if conversion == "classic":
        eps = r - math.log(delta) / (a - 1)
    elif conversion == "improved":
        eps = r - (math.log(delta) + np.log(a)) / (a - 1) + np.log((a - 1) / a)
    else:
        raise ParameterError(f"unknown RDP conversion {conversion!r}; use 'classic' or 'improved'")
    best = int(np.nanargmin(eps))
    return float(eps[best]), float(a[best])


def rdp_to_delta(
    orders: FloatArray, rdp: FloatArray, epsilon: float, conversion: Conversion = "improved"
) -> tuple[float, float]:
    """(delta, optimal order) at eps: the inverse of ``rdp_to_epsilon`` with the same conversion.

    So that an accountant's delta at eps and eps at delta come from one curve: classic
    log delta = (a - 1)(rdp_a - eps); improved
    log delta = (a - 1)(rdp_a - eps + log(1 - 1/a)) - log a; minimised over the orders, capped at 1.

    Parameters
    ----------
    orders : ndarray
        RDP orders, > 1.
    rdp : ndarray
        RDP value at each order.
    epsilon : float
        The eps to read delta at, >= 0.
    conversion : {"improved", "classic"}, default "improved"
        The conversion.

    Returns
    -------
    tuple of float
        (delta, the order attaining it).

    Examples
    --------
    >>> from dpcheck.privacy.rdp import compute_rdp, rdp_to_delta
    >>> orders, rdp = compute_rdp(0.01, 1.0, 1000)
    >>> delta, order = rdp_to_delta(orders, rdp, 2.1013652716432594)
    >>> f"{delta:.6g}", order
    ('1e-05', 7.8)
    """
    eps = float(epsilon)
    if not eps >= 0.0:
        raise ParameterError(f"epsilon must be a number >= 0, got {epsilon!r}")
    a = np.asarray(orders, dtype=np.float64)
    r = np.asarray(rdp, dtype=np.float64)
    if conversion == "classic":
        log_delta = (a - 1) * (r - eps)
    elif conversion == "improved":
        log_delta = (a - 1) * (r - eps + np.log1p(-1.0 / a)) - np.log(a)
    else:
        raise ParameterError(f"unknown RDP conversion {conversion!r}; use 'classic' or 'improved'")
    best = int(np.nanargmin(log_delta))
    return min(math.exp(min(float(log_delta[best]), 0.0)), 1.0), float(a[best])


def poisson_sgm_rdp_delta(
    q: float,
    sigma: float,
    steps: int,
    epsilon: float,
    orders: Sequence[float] | str = "opacus",
    conversion: Conversion = "improved",
) -> float:
    """delta(eps) of T steps of SGM from the same RDP values and conversion as
    ``poisson_sgm_rdp_epsilon`` (an upper bound on the true delta).

    Parameters
    ----------
    q : float
        Poisson sampling rate in (0, 1].
    sigma : float
        Noise multiplier, >= 1e-3.
    steps : int
        Number of steps T, >= 1.
    epsilon : float
        The eps to read delta at, >= 0.
    orders : sequence of float or str, default "opacus"
        The orders or the name of a library's set.
    conversion : {"improved", "classic"}, default "improved"
        The (eps, delta) conversion (docs/theory.md#sgm-rdp).

    Returns
    -------
    float
        delta at ``epsilon``.

    Examples
    --------
    >>> from dpcheck.privacy.rdp import poisson_sgm_rdp_delta
    >>> f"{poisson_sgm_rdp_delta(0.01, 1.0, 1000, 2.1013652716432594):.6g}"
    '1e-05'
    """
    order_arr, rdp = compute_rdp(q, sigma, steps, orders)
    return rdp_to_delta(order_arr, rdp, epsilon, conversion)[0]


def poisson_sgm_rdp_epsilon(
    q: float,
    sigma: float,
    steps: int,
    delta: float,
    orders: Sequence[float] | str = "opacus",
    conversion: Conversion = "improved",
) -> float:
    """eps(delta) of T steps of SGM as an RDP accountant reports it (an upper bound, looser than the
    PLD value).

    Parameters
    ----------
    q : float
        Poisson sampling rate in (0, 1].
    sigma : float
        Noise multiplier, >= 1e-3.
    steps : int
        Number of steps T, >= 1.
    delta : float
        Target delta in (0, 1).
    orders : sequence of float or str, default "opacus"
        The orders or the name of a library's set.
    conversion : {"improved", "classic"}, default "improved"
        The (eps, delta) conversion (docs/theory.md#sgm-rdp): Opacus 1.x and dp_accounting use
        "improved", Opacus before 1.0 "classic".

    Returns
    -------
    float
        eps at ``delta``.

    Examples
    --------
    >>> from dpcheck.privacy.rdp import poisson_sgm_rdp_epsilon
    >>> round(poisson_sgm_rdp_epsilon(0.01, 1.0, 1000, 1e-5), 4)
    2.1014
    >>> round(poisson_sgm_rdp_epsilon(0.01, 1.0, 1000, 1e-5, orders="tf_privacy"), 4)
    2.1078
    >>> round(poisson_sgm_rdp_epsilon(0.01, 1.0, 1000, 1e-5, conversion="classic"), 4)
    2.538
    """
    order_arr, rdp = compute_rdp(q, sigma, steps, orders)
    return rdp_to_epsilon(order_arr, rdp, delta, conversion)[0]


def _resolve_orders(orders: Sequence[float] | str) -> Sequence[float]:
    if isinstance(orders, str):
        if orders not in NAMED_ORDERS:
            raise ParameterError(f"unknown RDP order set {orders!r}; use one of {sorted(NAMED_ORDERS)}")
        return NAMED_ORDERS[orders]
    return orders
