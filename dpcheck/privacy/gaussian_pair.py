"""The exact pair T(N(0, I_n), N(mu e1, s^2 I_n)) (docs/theory.md#scaled-gaussian-pair, own
result) as a LossPair.

Every component of the normalized-mechanism analyses (docs/theory.md#worst-case-pair) is such a
pair: a mean shift along one
coordinate plus a variance ratio s on all n coordinates. Its privacy loss is a monotone function of
a noncentral chi-square variable, so alpha/beta have closed forms through scipy's ``ncx2``. In the
realistic regime (1 - s = 1/(N+1) with N ~ 1e5, n up to 1e7) ``ncx2`` returns NaN or loses
accuracy, so the *split evaluator* (docs/theory.md#split-evaluator) takes over: the loss
separates into a 1-D part in x_1 (an interval event, closed form) plus an affine function of a
central chi-square in the other n-1 coordinates, integrated over that chi-square's quantiles. 1 - s
is always carried exactly.

Direction conventions follow ``protocols.LossPair``: the loss is l = log dQ/dP with
P = N(0, I_n) and Q = N(mu e1, s^2 I_n); alpha(tau) = P(l >= tau), beta(tau) = Q(l < tau).
A pair with s > 1 is the reversal of a pair with s < 1 (affine change of variables), and s = 1 is a
pure Gaussian shift (or the trivial pair when mu = 0).

One module over 500 lines on purpose: the closed form and the split evaluator are two ways of
evaluating the same pair, chosen per call and tested against each other.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import chdtr, chdtrc, log_ndtr, ndtr

from dpcheck.errors import ParameterError
from dpcheck.privacy._laws import chi2_isf, chi2_ppf
from dpcheck.privacy._numerics import FloatArray, bisect_decreasing
from dpcheck.privacy.gdp import GaussianShiftPair
from dpcheck.privacy.pld import LossTails

SPLIT_BELOW: float = 1e-6
"""Below this 1 - s the ``ncx2`` route is not trusted (docs/theory.md#split-evaluator) and the
split evaluator is used."""

NCX2_MAX_NONCENTRALITY: float = 1e9
"""Above this noncentrality ``ncx2`` returns NaN or inaccurate values; use the split evaluator."""

_QUADRATURE_Z: FloatArray = np.linspace(-10.0, 10.0, 40001)


def _quadrature_weights() -> FloatArray:
    """Trapezoid weights of the standard normal density on ``_QUADRATURE_Z``, normalised to 1."""
    w = np.exp(-0.5 * _QUADRATURE_Z**2)
    w[0] *= 0.5
    w[-1] *= 0.5
    return w / w.sum()


_QUADRATURE_W: FloatArray = _quadrature_weights()


CHI2_SADDLEPOINT_DOF: float = 1e7
"""From this many degrees of freedom on, the lower tail of chi2 (z < -4) comes from the
Lugannani-Rice saddlepoint formula: scipy's ``chi2.cdf`` jumps there (at z = -4.5 for dof >= 1e8
it drops by a factor ~6), while the saddlepoint's relative error is O(1/dof)."""


def chi2_logcdf(x: ArrayLike, dof: float) -> FloatArray:
    """log P(chi2(dof) <= x), stable and continuous for dof up to 1e12.

    From this many degrees of freedom on (CHI2_SADDLEPOINT_DOF = 1e7), the lower tail (z < -4) comes
    from the Lugannani-Rice saddlepoint formula for Gamma(k, 1), k = dof/2, y = x/2:
    w = -sqrt(2k(r - 1 - log r)) with r = y/k, u = (y - k)/sqrt(k), and
    F = Phi(w) + phi(w)(1/w - 1/u); scipy's own cdf jumps there (docs/theory.md#split-evaluator).

    Parameters
    ----------
    x : array_like
        Points, >= 0.
    dof : float
        Degrees of freedom, > 0.

    Returns
    -------
    ndarray
        log F(x), -inf at x <= 0.

    Examples
    --------
    >>> import numpy as np
    >>> from dpcheck.privacy.gaussian_pair import chi2_logcdf
    >>> chi2_logcdf(np.array([1.0, 10.0]), 10.0).round(4).tolist()
    [-8.6673, -0.5807]
    >>> f"{chi2_logcdf(np.array([9e11]), 1e12)[0]:.6g}"  # deep in the lower tail
    '-2.68026e+09'
    """
    xs = np.asarray(x, dtype=float)
    out = _chi2_logcdf_direct(xs, dof)
    if dof < CHI2_SADDLEPOINT_DOF:
        return out
    k = 0.5 * dof
    z = (xs - dof) / math.sqrt(2.0 * dof)
    tail = (z < -4.0) & (xs > 0.0)
    if np.any(tail):
        d = 0.5 * xs[tail] / k - 1.0
        w = -np.sqrt(2.0 * k * (d - np.log1p(d)))
        u = d * math.sqrt(k)
        log_phi_w = -0.5 * w * w - 0.5 * math.log(2.0 * math.pi)
        log_cdf_w = log_ndtr(w)
        out[tail] = log_cdf_w + np.log1p(np.exp(log_phi_w - log_cdf_w) * (1.0 / w - 1.0 / u))
    return out


def _chi2_logcdf_direct(x: FloatArray, dof: float) -> FloatArray:
    """log P(chi2(dof) <= x) from the regularised incomplete gamma functions: the log of the cdf
    below the mean, log1p(-sf) above it (each accurate where it is used), without the generic
    per-call median search of ``scipy.stats`` (milliseconds at dof ~ 1e9)."""
    out = np.full(x.shape, -np.inf)
    low = (x > 0.0) & (x < dof)
    high = x >= dof
    with np.errstate(divide="ignore"):
        out[low] = np.log(chdtr(dof, x[low]))
        out[high] = np.log1p(-chdtrc(dof, x[high]))
    out[np.isnan(x)] = np.nan
    return out


def _interval_prob(lo: FloatArray, hi: FloatArray) -> FloatArray:
    """P(lo <= Z <= hi) for standard normal Z, without cancellation in either tail: an interval
    right of 0 is mirrored to the left, where ndtr keeps its digits (two ndtr calls, not four)."""
    right = lo > 0.0
    return ndtr(np.where(right, -lo, hi)) - ndtr(np.where(right, -hi, lo))


def solve_monotone(
    fn: Callable[[FloatArray], FloatArray],
    target: FloatArray,
    lo: float,
    hi: float,
    increasing: bool,
) -> FloatArray:
    """Thresholds tau with fn(tau) = target for a monotone vectorised fn, by bracketed bisection.

    The starting bracket [lo, hi] is widened by doubling until it contains every target; used
    wherever a trade-off is traced through the loss threshold and no closed-form inverse exists.
    """
    sign = -1.0 if increasing else 1.0
    goal = sign * np.asarray(target, dtype=float)

    def decreasing(tau: FloatArray) -> FloatArray:
        return sign * fn(tau)

    width = max(hi - lo, 1.0)
    while decreasing(np.array([lo]))[0] < goal.max():
        lo, width = lo - width, 2.0 * width
    width = max(hi - lo, 1.0)
    while decreasing(np.array([hi]))[0] > goal.min():
        hi, width = hi + width, 2.0 * width
    low, high = bisect_decreasing(
        decreasing, goal, np.full_like(goal, lo), np.full_like(goal, hi), xtol=1e-13
    )
    return 0.5 * (low + high)


def chunked(tau: FloatArray, width: int, fn: Callable[[FloatArray], FloatArray]) -> FloatArray:
    """``fn`` applied to ``tau`` in chunks, bounding a (thresholds x ``width``) matrix to ~2^20.

    Parameters
    ----------
    tau : ndarray
        One-dimensional thresholds.
    width : int
        Columns of the work matrix ``fn`` builds per threshold (quadrature nodes, components).
    fn : callable
        Vectorised function of a chunk of ``tau``, returning one row (or value) per threshold.

    Returns
    -------
    ndarray
        The chunks' results, concatenated.

    Examples
    --------
    >>> import numpy as np
    >>> from dpcheck.privacy.gaussian_pair import chunked
    >>> chunked(np.arange(5.0), 1, lambda t: 2 * t).tolist()
    [0.0, 2.0, 4.0, 6.0, 8.0]
    """
    size = max(1, (1 << 20) // max(width, 1))
    return np.concatenate([fn(tau[i : i + size]) for i in range(0, tau.size, size)] or [tau])


_NDTR_ZERO: float = 40.0
"""ndtr(-z) is exactly 0.0 in double precision for z beyond this."""


def first_coordinate_probs(
    u: FloatArray, mu: ArrayLike, e: float
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """P(l1 >= u), P(l1 < u), Q(l1 >= u), Q(l1 < u) for P = N(0, 1), Q = N(mu, s^2), s = 1 - e.

    The one-dimensional part of the split evaluator (docs/theory.md#split-evaluator). With
    0 < s < 1, l1(x) = x^2/2 - (x - mu)^2/(2 s^2) - log s is concave, so {l1 >= u} is an interval:
    the roots of A x^2 - B x + C with A = a/2, B = mu/s^2, C = mu^2/(2 s^2) + log s + u, taken in
    the stable pair x_hi = q/A, x_lo = C/q with q = (B + sqrt(D))/2. Each probability is summed
    from tails directly, so none loses digits when small. s = 1 is the Gaussian shift.

    Parameters
    ----------
    u : ndarray
        Loss thresholds.
    mu : array_like
        Mean shifts, broadcast against ``u``.
    e : float
        1 - s, in [0, 1), carried exactly.

    Returns
    -------
    tuple of ndarray
        The four tails, each shaped like the broadcast of ``u`` and ``mu``.

    Examples
    --------
    With s = 1 this is N(0, 1) against N(1, 1), whose loss exceeds 0 when x >= 1/2:

    >>> import numpy as np
    >>> from dpcheck.privacy.gaussian_pair import first_coordinate_probs
    >>> [p.round(4).tolist() for p in first_coordinate_probs(np.array([0.0]), 1.0, 0.0)]
    [[0.3085], [0.6915], [0.6915], [0.3085]]
    >>> [p.round(4).tolist() for p in first_coordinate_probs(np.array([0.0]), 1.0, 0.1)]
    [[0.3327], [0.6673], [0.7359], [0.2641]]
    """
    m = np.asarray(mu, dtype=float)
    if e == 0.0:
        return _shift_probs(u, m)
    s = 1.0 - e
    half_a = 0.5 * e * (2.0 - e) / s**2
    big_b = m / s**2
    big_c = m**2 / (2.0 * s**2) + math.log1p(-e) + u
    disc = big_b**2 - 4.0 * half_a * big_c
    nonempty = disc > 0.0
    qq = 0.5 * (big_b + np.sqrt(np.where(nonempty, disc, 1.0)))
    lo, hi = big_c / qq, qq / half_a
    lo_q, hi_q = (lo - m) / s, (hi - m) / s
    if np.all(nonempty) and min(np.min(hi), np.min(hi_q)) > _NDTR_ZERO:
        # The far root lies where ndtr(-hi) is exactly 0 in double precision: one-sided events
        # (the common case when s is close to 1, e.g. s = N/(N+1)), half the ndtr calls.
        return ndtr(-lo), ndtr(lo), ndtr(-lo_q), ndtr(lo_q)
    return (
        np.where(nonempty, _interval_prob(lo, hi), 0.0),
        np.where(nonempty, ndtr(lo) + ndtr(-hi), 1.0),
        np.where(nonempty, _interval_prob(lo_q, hi_q), 0.0),
        np.where(nonempty, ndtr(lo_q) + ndtr(-hi_q), 1.0),
    )


def _shift_probs(u: FloatArray, mu: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """The s = 1 case of ``first_coordinate_probs``: l1 = mu x - mu^2/2, so {l1 >= u} is
    {x >= u/mu + mu/2}; mu = 0 is the trivial pair (l1 = 0, an atom at u = 0)."""
    shifted = mu > 0.0
    cut = np.where(shifted, u / np.where(shifted, mu, 1.0) + mu / 2.0, np.where(u <= 0.0, -np.inf, np.inf))
    return ndtr(-cut), ndtr(cut), ndtr(-(cut - mu)), ndtr(cut - mu)


def mixed_probability(event: FloatArray, complement: FloatArray, weights: FloatArray) -> FloatArray:
    """sum_i w_i P_i(event) for rows of per-component probabilities, from the smaller side.

    Taken from whichever of the event and its complement is smaller: small values keep their digits
    and a sure event gives exactly 1 (a weighted sum of ones can miss 1 by an ulp, which would stall
    tail searches).

    Parameters
    ----------
    event : ndarray
        Per-component probabilities of the event, one row per threshold.
    complement : ndarray
        The same for the complement.
    weights : ndarray
        Mixture weights, summing to 1.

    Returns
    -------
    ndarray
        The mixture's probability of the event per row, in [0, 1].

    Examples
    --------
    >>> import numpy as np
    >>> from dpcheck.privacy.gaussian_pair import mixed_probability
    >>> event, complement = np.array([[0.2, 0.6]]), np.array([[0.8, 0.4]])
    >>> mixed_probability(event, complement, np.array([0.5, 0.5])).tolist()
    [0.4]
    """
    direct = event @ weights
    return np.clip(np.where(direct <= 0.5, direct, 1.0 - complement @ weights), 0.0, 1.0)


class _ContractedPair:
    """T(N(0, I_n), N(mu e1, s^2 I_n)) with mu >= 0 and 0 < s < 1, where e = 1 - s exactly.

    Completing the square (docs/theory.md#scaled-pair-derivation): l = -(a/2) R + K with
    R = ||x - c e1||^2, a = 1/s^2 - 1, c = mu/(1 - s^2) and K = mu^2/(2(1 - s^2)) - n log s; R ~
    ncx2(n, lam0) under P and R/s^2 ~ ncx2(n, lam1) under Q.
    """

    def __init__(self, n: int, mu: float, e: float) -> None:
        self.n = n
        self.mu = mu
        self.e = e
        self.s = 1.0 - e
        one_minus_s2 = e * (2.0 - e)
        self.a = one_minus_s2 / self.s**2
        self.log_s = math.log1p(-e)
        self.lam0 = mu**2 / one_minus_s2**2
        self.lam1 = self.lam0 * self.s**2
        self.k = mu**2 / (2.0 * one_minus_s2) - n * self.log_s
        self.split = mu > 0.0 and (
            n == 1 or e < SPLIT_BELOW or self.lam0 > NCX2_MAX_NONCENTRALITY
        )
        if self.split:
            self._r_nodes = self._chi2_quantile_nodes(n - 1)

    @staticmethod
    def _chi2_quantile_nodes(dof: int) -> FloatArray:
        """Quantiles r(z) = F^{-1}(Phi(z)) of chi2(dof) at the quadrature nodes (zero if dof=0)."""
        if dof == 0:
            return np.zeros(1)
        z = _QUADRATURE_Z
        return np.where(z <= 0.0, chi2_ppf(ndtr(z), dof), chi2_isf(ndtr(-z), dof))

    def _weights(self) -> FloatArray:
        return _QUADRATURE_W if self.n > 1 else np.ones(1)

    def _dist(self, lam: float) -> tuple[Callable[..., FloatArray], Callable[..., FloatArray]]:
        """(cdf, sf) of R under the given noncentrality; central chi2 for the pure variance pair."""
        if self.mu == 0.0:
            return (
                lambda t: np.exp(chi2_logcdf(t, self.n)),
                lambda t: -np.expm1(chi2_logcdf(t, self.n)),
            )
        from scipy.stats import ncx2  # its sf has no public scipy.special form

        return (lambda t: ncx2.cdf(t, self.n, lam)), (lambda t: ncx2.sf(t, self.n, lam))

    def _r_threshold(self, tau: FloatArray) -> FloatArray:
        """R-threshold t with {l >= tau} = {R <= t}."""
        return 2.0 * (self.k - tau) / self.a

    def _split_loss2(self, under_q: bool) -> FloatArray:
        """The chi-square part l2 = -(a/2) R' - (n-1) log s at the quadrature nodes."""
        r = self._r_nodes * (self.s**2 if under_q else 1.0)
        return -0.5 * self.a * r - (self.n - 1) * self.log_s

    def alpha(self, tau: FloatArray) -> FloatArray:
        if not self.split:
            t = self._r_threshold(tau)
            cdf, _ = self._dist(self.lam0)
            return np.where(t > 0.0, cdf(np.maximum(t, 0.0)), 0.0)
        return chunked(tau, self._weights().size, self._split_alpha)

    def beta(self, tau: FloatArray) -> FloatArray:
        if not self.split:
            t = self._r_threshold(tau)
            _, sf = self._dist(self.lam1)
            return np.where(t > 0.0, sf(np.maximum(t, 0.0) / self.s**2), 1.0)
        return chunked(tau, self._weights().size, self._split_beta)

    def tails(self, tau: FloatArray) -> FloatArray:
        """Rows (P(l >= tau), P(l < tau), Q(l >= tau), Q(l < tau)), each accurate where small."""
        if self.split:
            return chunked(tau, self._weights().size, self._split_tails)
        t = self._r_threshold(tau)
        inside = t > 0.0
        t_pos = np.maximum(t, 0.0)
        p_above, p_below = self._cdf_sf(t_pos, self.lam0)
        q_above, q_below = self._cdf_sf(t_pos / self.s**2, self.lam1)
        return np.stack(
            [
                np.where(inside, p_above, 0.0),
                np.where(inside, p_below, 1.0),
                np.where(inside, q_above, 0.0),
                np.where(inside, q_below, 1.0),
            ],
            axis=1,
        )

    def _cdf_sf(self, t: FloatArray, lam: float) -> tuple[FloatArray, FloatArray]:
        """(cdf, sf) of R at t; one chi-square evaluation for the pure variance pair."""
        if self.mu == 0.0:
            log_cdf = chi2_logcdf(t, self.n)
            return np.exp(log_cdf), -np.expm1(log_cdf)
        cdf, sf = self._dist(lam)
        return cdf(t), sf(t)

    def _split_tails(self, tau: FloatArray) -> FloatArray:
        """``tails`` by the split evaluator: each tail is a direct weighted sum (small values keep
        their digits)."""
        weights = self._weights()
        u_p = tau[:, None] - self._split_loss2(under_q=False)[None, :]
        in_p, out_p, _, _ = first_coordinate_probs(u_p, self.mu, self.e)
        u_q = tau[:, None] - self._split_loss2(under_q=True)[None, :]
        _, _, in_q, out_q = first_coordinate_probs(u_q, self.mu, self.e)
        return np.stack([in_p @ weights, out_p @ weights, in_q @ weights, out_q @ weights], axis=1)

    def _split_alpha(self, tau: FloatArray) -> FloatArray:
        """alpha by the split evaluator: E over R' of P(x1 in the interval {l1 >= tau - l2})."""
        u = tau[:, None] - self._split_loss2(under_q=False)[None, :]
        inside, outside, _, _ = first_coordinate_probs(u, self.mu, self.e)
        return mixed_probability(inside, outside, self._weights())

    def _split_beta(self, tau: FloatArray) -> FloatArray:
        """beta by the split evaluator, summing both tails directly so tiny values keep accuracy."""
        u = tau[:, None] - self._split_loss2(under_q=True)[None, :]
        _, _, inside, outside = first_coordinate_probs(u, self.mu, self.e)
        return mixed_probability(outside, inside, self._weights())

    def _loss_bracket(self) -> tuple[float, float]:
        """A starting bracket for the loss threshold: the loss's mean +- 12 sd under P and Q."""
        mean_r, var_r = self.n + self.lam0, 2.0 * (self.n + 2.0 * self.lam0)
        centre_p = self.k - 0.5 * self.a * mean_r
        centre_q = self.k - 0.5 * self.a * self.s**2 * (self.n + self.lam1)
        spread = 0.5 * self.a * math.sqrt(var_r) * 12.0
        return min(centre_p, centre_q) - spread, min(max(centre_p, centre_q) + spread, self.k)

    def beta_where_alpha(self, alpha: FloatArray) -> FloatArray:
        """The trade-off T(P, Q)(alpha)."""
        if not self.split:
            _, sf = self._dist(self.lam1)
            if self.mu == 0.0:
                return sf(chi2_ppf(alpha, self.n) / self.s**2)
            from scipy.stats import ncx2

            return sf(ncx2.ppf(alpha, self.n, self.lam0) / self.s**2)
        lo, hi = self._loss_bracket()
        tau = solve_monotone(self.alpha, alpha, lo, hi, increasing=False)
        return self.beta(tau)

    def alpha_where_beta(self, beta: FloatArray) -> FloatArray:
        """The trade-off of the reversed pair T(Q, P)(beta) (roles of the errors swapped)."""
        if not self.split:
            cdf, _ = self._dist(self.lam0)
            if self.mu == 0.0:
                return cdf(chi2_isf(beta, self.n) * self.s**2)
            from scipy.stats import ncx2

            return cdf(ncx2.isf(beta, self.n, self.lam1) * self.s**2)
        lo, hi = self._loss_bracket()
        tau = solve_monotone(self.beta, beta, lo, hi, increasing=True)
        return self.alpha(tau)


class ScaledGaussianPair:
    """The exact pair (P, Q) = (N(0, I_n), N(mu e1, s^2 I_n)) as a ``LossPair``.

    ``one_minus_s`` gives 1 - s exactly (e.g. 1/(N+1)) when s is too close to 1 to be represented
    accurately as a float; it then takes precedence over ``s``. Works for 0 < s < 1, s > 1
    (through the reversed contracted pair) and s = 1.
    """

    def __init__(self, n: int, mu: float, s: float, one_minus_s: float | None = None) -> None:
        if isinstance(n, bool) or int(n) != n or n < 1:
            raise ParameterError(f"dimension n must be an integer >= 1, got {n!r}")
        if not math.isfinite(mu):
            raise ParameterError(f"mean shift mu must be finite, got {mu!r}")
        e = (1.0 - s) if one_minus_s is None else float(one_minus_s)
        if not (math.isfinite(e) and e < 1.0):
            raise ParameterError(f"variance ratio s must be finite and > 0, got s={s!r}, 1-s={e!r}")
        self.n = int(n)
        self.mu = abs(float(mu))
        self.one_minus_s = e
        self.s = 1.0 - e
        self._core: _ContractedPair | GaussianShiftPair
        if e > 0.0:
            self._core, self._swapped = _ContractedPair(self.n, self.mu, e), False
        elif e < 0.0:
            inv_e = -e / (1.0 - e)
            self._core, self._swapped = _ContractedPair(self.n, self.mu / self.s, inv_e), True
        else:
            self._core, self._swapped = GaussianShiftPair(self.mu), False

    @property
    def uses_split_evaluator(self) -> bool:
        """Whether alpha/beta come from the split evaluator (docs/theory.md#split-evaluator)
        rather than ncx2/chi2."""
        return isinstance(self._core, _ContractedPair) and self._core.split

    def alpha(self, tau: ArrayLike) -> FloatArray:
        """P(l >= tau), in the shape of tau."""
        t = np.asarray(tau, dtype=float).reshape(-1)
        out = self._core.beta(-t) if self._swapped else self._core.alpha(t)
        return np.asarray(out, dtype=float).reshape(np.shape(tau))

    def beta(self, tau: ArrayLike) -> FloatArray:
        """Q(l < tau), in the shape of tau."""
        t = np.asarray(tau, dtype=float).reshape(-1)
        out = self._core.alpha(-t) if self._swapped else self._core.beta(t)
        return np.asarray(out, dtype=float).reshape(np.shape(tau))

    def reversed(self) -> ScaledGaussianPair:
        """(Q, P), which is (N(0, I_n), N(-(mu/s) e1, s^-2 I_n)) after an affine change of variables."""
        return ScaledGaussianPair(self.n, self.mu / self.s, 1.0 / self.s, -self.one_minus_s / self.s)

    def tails(self, offset: int, size: int, interval: float) -> LossTails:
        """The four loss tails on the grid (offset + k) interval, k < size, in one evaluation
        (for ``PrivacyLossDistribution.from_tails``: both directions, both estimates)."""
        if self._swapped:
            return self.reversed().tails(-(offset + size - 1), size, interval).reversed()
        grid = (offset + np.arange(size)) * interval
        if isinstance(self._core, GaussianShiftPair):
            rows = np.stack(_shift_probs(grid, np.float64(self.mu)), axis=1)
        else:
            rows = self._core.tails(grid)
        return LossTails(interval, offset, rows[:, 0], rows[:, 1], rows[:, 2], rows[:, 3])

    def tradeoff(self, alpha: ArrayLike) -> FloatArray:
        """T(P, Q)(alpha): the smallest type-II error of a level-alpha test of P against Q."""
        a = np.clip(np.atleast_1d(np.asarray(alpha, dtype=float)), 0.0, 1.0)
        if isinstance(self._core, GaussianShiftPair):
            return np.asarray(self._core.tradeoff(a), dtype=float)
        if self._swapped:
            return self._core.alpha_where_beta(a)
        return self._core.beta_where_alpha(a)
