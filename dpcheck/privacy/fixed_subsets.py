"""Fixed-size subsets drawn without replacement, independently at every step (B of N indices,
``np.random.choice(N, B, replace=False)``, ``torch.randperm(N)[:B]`` inside the step loop;
docs/theory.md#fixed-subsets).

Guarantee (standard): the Renyi DP of the subsampled Gaussian without replacement under the
**replace-one** relation, Wang, Balle & Kasiviswanathan, "Subsampled Renyi Differential Privacy
and Analytical Moments Accountant", AISTATS 2019, Theorem 9, for a base mechanism with
eps(inf) = inf (the Gaussian): with gamma = B/N and eps(j) the base mechanism's RDP at order j,

    A_a <= 1 + gamma^2 C(a,2) min{4 (e^eps(2) - 1), 2 e^eps(2)}
             + sum_{j=3}^{a} 2 gamma^j C(a,j) e^((j-1) eps(j)),

and the step is (a, log(A_a)/(a-1))-RDP. Replacing one example changes the clipped sum by up to
2C, so the base Gaussian of noise sigma C has eps(j) = j / (2 (sigma/2)^2). Zero-out neighbours
(one example replaced by one with zero gradient) are replace-one neighbours, so the bound also
holds under the zero-out relation in which the Poisson claim is compared. T steps add their RDP;
the (eps, delta) conversion is the improved one (Balle et al. 2020), as in ``dpcheck.privacy.rdp``.
The bound is O(1) in T.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy.special import gammaln, logsumexp

from dpcheck.privacy._numerics import FloatArray, require_probability, require_sigma, require_steps

WOR_ORDERS: tuple[int, ...] = tuple(range(2, 257)) + (320, 384, 512, 768, 1024)
"""Integer RDP orders the bound is evaluated at (Theorem 9 is stated for integer orders)."""
REPLACE_ONE_SENSITIVITY: float = 2.0
"""The clipped sum changes by at most 2 C when one example is replaced by another."""


def _log_a(gamma: float, s: float, order: int) -> float:
    """log A_a of Theorem 9 for the Gaussian with noise s (relative to its sensitivity)."""
    if gamma == 1.0:
        return (order - 1) * order / (2.0 * s * s)
    j = np.arange(3, order + 1, dtype=np.float64)
    log_comb = gammaln(order + 1) - gammaln(j + 1) - gammaln(order - j + 1)
    tail = math.log(2.0) + j * math.log(gamma) + log_comb + (j - 1.0) * j / (2.0 * s * s)
    eps2 = 2.0 / (2.0 * s * s)
    log_em1 = eps2 + math.log(-math.expm1(-eps2))
    second = (2.0 * math.log(gamma) + math.log(order * (order - 1) / 2.0)
              + min(math.log(4.0) + log_em1, math.log(2.0) + eps2))
    return float(logsumexp(np.concatenate([[0.0, second], tail])))


def wor_rdp(
    q: float, sigma: float, steps: int, orders: Sequence[int] = WOR_ORDERS
) -> tuple[FloatArray, FloatArray]:
    """(orders, RDP of T steps) of the Gaussian on a fixed-size subset drawn afresh at every step.

    Theorem 9 of Wang, Balle & Kasiviswanathan (2019) under the replace-one relation, with q = B/N
    and the replace-one sensitivity 2C (docs/theory.md#fixed-subsets); T steps add their RDP.

    Parameters
    ----------
    q : float
        Subset fraction B/N in (0, 1].
    sigma : float
        Noise multiplier, >= 1e-3.
    steps : int
        Number of steps T, >= 1.
    orders : sequence of int, default WOR_ORDERS
        Integer RDP orders >= 2.

    Returns
    -------
    tuple of ndarray
        (orders, RDP values), to convert with ``dpcheck.privacy.rdp.rdp_to_epsilon``.

    Examples
    --------
    >>> from dpcheck.privacy.fixed_subsets import wor_rdp
    >>> from dpcheck.privacy.rdp import rdp_to_epsilon
    >>> orders, rdp = wor_rdp(0.01, 2.0, 1000)
    >>> rdp[:2].round(4).tolist()
    [0.5435, 0.8349]
    >>> eps, order = rdp_to_epsilon(orders, rdp, 1e-5)
    >>> round(eps, 4), order
    (3.5761, 6.0)
    """
    gamma = require_probability("q", q)
    s = require_sigma("sigma", sigma) / REPLACE_ONE_SENSITIVITY
    t = require_steps("steps", steps)
    order_arr = np.asarray(orders, dtype=np.float64)
    per_step = np.array([_log_a(gamma, s, int(a)) / (a - 1.0) for a in orders])
    return order_arr, per_step * t
