"""Shuffled DP-SGD accounted as Poisson (docs/theory.md#shuffling; Ertan & van Dijk 2026,
"Fundamental Limitations of Favorable Privacy-Utility Guarantees for DP-SGD", and van Dijk &
Ertan 2026, "Trade-off Functions for DP-SGD with Subsampling based on Random Shuffling").

The model of both papers (docs/theory.md#shuffle-rounds): one epoch has M rounds; under H0 the M
per-round statistics are i.i.d. N(0, 1), under H1 the target sits in one uniformly random round J
and X_J ~ N(1/sigma, 1).

* Witness (Ertan & van Dijk 2026, label *paper*; docs/theory.md#shuffle-witness): the max test
  "reject H0 if max_i X_i > t" gives f_sub, an upper bound on the true trade-off, and the
  separation kappa_sub; below sigma = 1/sqrt(2 ln M) the separation is at least the closed-form
  kappa bound (docs/theory.md#shuffle-threshold).
* Poisson transfer (label *reconstructed*; docs/theory.md#shuffle-poisson-transfer):
  p = (1 - 1/M)^M.
* Guarantees for the model: the chi-square bound (own, rigorous, (0, delta)-DP for E epochs;
  docs/theory.md#shuffle-chi2) and the candidate of Thm 4.1 of van Dijk & Ertan 2026 (label
  *unverified*: its exact statement was not recovered; docs/theory.md#shuffle-thm41).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike
from scipy.integrate import quad
from scipy.optimize import minimize_scalar
from scipy.special import log_ndtr, ndtr

from dpcheck.privacy._checks import require_rounds
from dpcheck.privacy._laws import normal_isf
from dpcheck.privacy._numerics import FloatArray, require_alpha, require_positive, require_steps

BERRY_ESSEEN_VAN_BEEK: float = 0.7975
"""The Berry-Esseen constant the Thm 4.1 candidate uses (van Beek 1972)."""


def f_sub(a: ArrayLike, rounds: int, sigma: float) -> FloatArray:
    """The max-test trade-off Phi(Phi^-1((1 - a)^(1/M)) - 1/sigma) (1 - a)^((M-1)/M).

    The exact trade-off of the test "reject H0 when the largest of the M per-round statistics
    exceeds t" in the one-epoch shuffle model, an upper bound on the mechanism's curve (Ertan & van
    Dijk 2026; docs/theory.md#shuffle-witness). Formed in log space with
    Phi^-1((1 - a)^(1/M)) = isf(-expm1(log1p(-a)/M)), so it stays accurate for M up to 1e9 and a
    down to 1e-300.

    Parameters
    ----------
    a : array_like
        Type-I error levels in [0, 1].
    rounds : int
        Rounds (batches) per epoch M, >= 2.
    sigma : float
        Noise multiplier, > 0.

    Returns
    -------
    ndarray
        f_sub(a), at least one-dimensional.

    Examples
    --------
    >>> from dpcheck.privacy.shuffle import f_sub
    >>> f_sub([0.0, 0.05, 1.0], 5000, 0.2).round(5).tolist()
    [1.0, 0.21794, 0.0]
    """
    alpha = np.atleast_1d(require_alpha(a))
    m = require_rounds(rounds)
    mu = 1.0 / require_positive("sigma", sigma)
    with np.errstate(divide="ignore"):
        log_keep = np.log1p(-alpha)
        threshold = normal_isf(-np.expm1(log_keep / m))
        log_beta = log_ndtr(threshold - mu) + (m - 1) / m * log_keep
    return np.where(alpha >= 1.0, 0.0, np.exp(log_beta))


def _separation_at(t: float, m: int, mu: float) -> float:
    """Phi(t)^(M-1) (Phi(t) - Phi(t - mu)): (1 - a) - f_sub(a) at the max-test threshold t."""
    gap = ndtr(-(t - mu)) - ndtr(-t) if t - mu > 0.0 else ndtr(t) - ndtr(t - mu)
    return float(math.exp((m - 1) * log_ndtr(t)) * gap)


def kappa_sub(rounds: int, sigma: float) -> float:
    """kappa_sub = max_t Phi(t)^(M-1)(Phi(t) - Phi(t - 1/sigma)) / sqrt 2: max-test separation.

    How far the max-test curve stays from perfect privacy (docs/theory.md#shuffle-threshold). A
    grid over t locates the maximum (the function is unimodal near sqrt(2 ln M)), then a bounded
    scalar search refines it.

    Parameters
    ----------
    rounds : int
        Rounds per epoch M, >= 2.
    sigma : float
        Noise multiplier, > 0.

    Returns
    -------
    float
        kappa_sub in [0, 1/sqrt 2].

    Examples
    --------
    >>> from dpcheck.privacy.shuffle import kappa_sub
    >>> round(kappa_sub(5000, 0.2), 4)  # below the threshold: at least kappa_closed_form(5000)
    0.5221
    >>> round(kappa_sub(5000, 1.0), 5)
    0.00144
    """
    m = require_rounds(rounds)
    mu = 1.0 / require_positive("sigma", sigma)
    centre = math.sqrt(2.0 * math.log(m))
    grid = np.linspace(centre - 10.0, centre + mu + 10.0, 4001)
    values = np.array([_separation_at(t, m, mu) for t in grid])
    best = int(np.argmax(values))
    lo, hi = grid[max(best - 1, 0)], grid[min(best + 1, grid.size - 1)]
    result = minimize_scalar(
        lambda t: -_separation_at(t, m, mu), bounds=(lo, hi), method="bounded", options={"xatol": 1e-10}
    )
    return max(-float(result.fun), float(values[best])) / math.sqrt(2.0)


def kappa_closed_form(rounds: int) -> float:
    """(1/sqrt 8)(1 - 1/sqrt(4 pi ln M)): the separation guaranteed when sigma <= 1/sqrt(2 ln M).

    Ertan & van Dijk (2026); docs/theory.md#shuffle-threshold.

    Parameters
    ----------
    rounds : int
        Rounds per epoch M, >= 2.

    Returns
    -------
    float
        The closed-form lower bound on one epoch's separation.

    Examples
    --------
    >>> from dpcheck.privacy.shuffle import kappa_closed_form
    >>> round(kappa_closed_form(5000), 5), round(kappa_closed_form(23_000_000), 5)
    (0.31938, 0.32933)
    """
    m = require_rounds(rounds)
    return (1.0 - 1.0 / math.sqrt(4.0 * math.pi * math.log(m))) / math.sqrt(8.0)


def poisson_miss_probability(rounds: int) -> float:
    """p = (1 - 1/M)^M: the chance that Poisson sampling at q = 1/M misses the target M times.

    The weight of the Poisson reference curve p (1 - a) + (1 - p) f_sub(a)
    (docs/theory.md#shuffle-poisson-transfer); p <= 1/e.

    Parameters
    ----------
    rounds : int
        Rounds per epoch M, >= 2.

    Returns
    -------
    float
        p.

    Examples
    --------
    >>> from dpcheck.privacy.shuffle import poisson_miss_probability
    >>> round(poisson_miss_probability(5000), 4)
    0.3678
    """
    m = require_rounds(rounds)
    return math.exp(m * math.log1p(-1.0 / m))


def f_poisson_witness(a: ArrayLike, rounds: int, sigma: float) -> FloatArray:
    """p (1 - a) + (1 - p) f_sub(a): the max-test witness transferred to Poisson sampling
    (docs/theory.md#shuffle-poisson-transfer)."""
    alpha = np.atleast_1d(require_alpha(a))
    p = poisson_miss_probability(rounds)
    return p * (1.0 - alpha) + (1.0 - p) * f_sub(alpha, rounds, sigma)


def _third_abs_moment(mu: float) -> float:
    """rho = E|Y - 1|^3 for Y = exp(mu Z - mu^2/2), Z ~ N(0, 1); split at the kink Y = 1.

    The integrand |expm1(x)|^3 phi(z) is formed in log space (it peaks near z = 3 mu) and
    integrated over z in [-40, 3 mu + 40], outside which it is below double precision.
    """
    kink = mu / 2.0

    def integrand(z: float) -> float:
        x = mu * z - mu * mu / 2.0
        if x == 0.0:
            return 0.0
        log_abs = x + math.log(-math.expm1(-x)) if x > 0.0 else math.log(-math.expm1(x))
        return math.exp(3.0 * log_abs - z * z / 2.0) / math.sqrt(2.0 * math.pi)

    lower, _ = quad(integrand, -40.0, kink, limit=200)
    upper, _ = quad(integrand, kink, 3.0 * mu + 40.0, limit=200)
    return lower + upper


def _thm41_numerator(sigma: float) -> float:
    """s/sqrt(2 pi) + 2 C_BE rho / s^3, the M-free factor of the Thm 4.1 candidate."""
    mu = 1.0 / require_positive("sigma", sigma)
    s = math.sqrt(math.expm1(mu * mu))
    return s / math.sqrt(2.0 * math.pi) + 2.0 * BERRY_ESSEEN_VAN_BEEK * _third_abs_moment(mu) / s**3


def thm41_regime(rounds: int, sigma: float) -> bool:
    """Whether sigma >= sqrt(3 / ln M), the regime van Dijk & Ertan (2026) state for their Thm 4.1.

    Parameters
    ----------
    rounds : int
        Rounds per epoch M, >= 2.
    sigma : float
        Noise multiplier, > 0.

    Returns
    -------
    bool
        True inside the regime (docs/theory.md#shuffle-thm41).

    Examples
    --------
    >>> from dpcheck.privacy.shuffle import thm41_regime
    >>> thm41_regime(1_140_000, 1.0), thm41_regime(1000, 0.5)
    (True, False)
    """
    return require_positive("sigma", sigma) >= math.sqrt(3.0 / math.log(require_rounds(rounds)))


def thm41_candidate_delta(rounds: int, sigma: float) -> float:
    """Candidate delta(sigma, M) of Thm 4.1 of van Dijk & Ertan (2026), *unverified*.

    The paper states f(a) >= 1 - a - delta(sigma, M) for one epoch; its formula for delta could
    not be read. The candidate, delta = [s/sqrt(2 pi) + 2 C_BE rho/s^3]/sqrt(M) with
    s^2 = e^(1/sigma^2) - 1, rho = E|Y - 1|^3 for Y = e^(Z/sigma - 1/(2 sigma^2)) and
    C_BE = 0.7975 (van Beek 1972), is a Berry-Esseen reconstruction that reproduces the paper's
    example; dpcheck prints it as a note only (docs/theory.md#shuffle-thm41).

    Parameters
    ----------
    rounds : int
        Rounds per epoch M, >= 2.
    sigma : float
        Noise multiplier, > 0.

    Returns
    -------
    float
        The candidate delta for one epoch.

    Examples
    --------
    >>> from dpcheck.privacy.shuffle import thm41_candidate_delta
    >>> round(thm41_candidate_delta(1_140_000, 1.0), 6)  # the paper's example: about 0.01
    0.009976
    """
    return _thm41_numerator(sigma) / math.sqrt(require_rounds(rounds))


def thm41_candidate_rounds(delta: float, sigma: float) -> float:
    """The M at which the candidate delta(sigma, M) equals ``delta`` (delta is proportional to M^-1/2)."""
    return (_thm41_numerator(sigma) / require_positive("delta", delta)) ** 2


def compose_zero_delta(delta: float, epochs: int) -> float:
    """delta after E epochs of an f >= 1 - a - delta bound: 1 - (1 - delta)^E (f_{0,delta} composition)."""
    return -math.expm1(require_steps("epochs", epochs) * math.log1p(-delta))


def chi2_delta(rounds: int, sigma: float, epochs: int = 1) -> float:
    """delta = 1/2 sqrt((1 + (e^(1/sigma^2) - 1)/M)^E - 1): a rigorous (0, delta) bound, E epochs.

    The chi-square divergence of one epoch of the papers' shuffle model is (e^(1/sigma^2) - 1)/M,
    also under adaptive choice of the target's gradient direction, and it tensorises; total
    variation is at most half its square root (own result, docs/theory.md#shuffle-chi2). It holds
    for that model only (other gradients 0), not for fixed-size batches in general.

    Parameters
    ----------
    rounds : int
        Rounds per epoch M, >= 2.
    sigma : float
        Noise multiplier, > 0.
    epochs : int, default 1
        Epochs E, >= 1.

    Returns
    -------
    float
        delta (may exceed 1, where the bound says nothing).

    Raises
    ------
    OverflowError
        If the divergence itself overflows a float (sigma tiny).

    Examples
    --------
    >>> from dpcheck.privacy.shuffle import chi2_delta
    >>> f"{chi2_delta(1_140_000, 1.0):.3g}"
    '0.000614'
    >>> round(chi2_delta(1000, 1.0), 4), round(chi2_delta(1000, 1.0, epochs=10), 4)
    (0.0207, 0.0658)
    """
    m = require_rounds(rounds)
    mu = 1.0 / require_positive("sigma", sigma)
    e = require_steps("epochs", epochs)
    return 0.5 * math.sqrt(math.expm1(e * math.log1p(math.expm1(mu * mu) / m)))


def asymptotic_tv(rounds: int, sigma: float) -> float:
    """s / sqrt(2 pi M) with s^2 = e^(1/sigma^2) - 1: the asymptotically exact TV, display only."""
    mu = 1.0 / require_positive("sigma", sigma)
    return math.sqrt(math.expm1(mu * mu) / (2.0 * math.pi * require_rounds(rounds)))
