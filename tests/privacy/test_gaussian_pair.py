"""ScaledGaussianPair (docs/theory.md#scaled-gaussian-pair): reference vectors, Monte Carlo, split
evaluator vs ncx2."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import ndtr
from scipy.stats import chi2, norm

import dpcheck.privacy.gaussian_pair as gp
from dpcheck.errors import ParameterError
from dpcheck.privacy.gaussian_pair import ScaledGaussianPair, chi2_logcdf
from dpcheck.privacy.tradeoff import is_valid_tradeoff

ALPHAS = np.array([1e-3, 1e-2, 0.05, 0.1, 0.25, 0.5, 0.9])


@pytest.mark.parametrize(
    ("n", "mu", "one_minus_s", "expected"),
    [
        (100, 1.0, 0.01, 0.7393490933),
        (100, 0.25, 0.2, 0.0669186314),
        (26010, 1.0, 0.01, 0.1962285938),
        (1485217, 1.0, 0.001, 0.3638259025),
        (1485217, 1.0, 1 / 60001, 0.740358781),
        (1485217, 0.0, 1 / 60001, 0.9469687407),
    ],
)
def test_reference_vectors(n: int, mu: float, one_minus_s: float, expected: float) -> None:
    pair = ScaledGaussianPair(n, mu, 1 - one_minus_s, one_minus_s)
    assert pair.tradeoff(0.05)[0] == pytest.approx(expected, abs=2e-9)


def test_split_evaluator_matches_ncx2(monkeypatch: pytest.MonkeyPatch) -> None:
    settings_ = [(1485217, 1.0, 1 / 60001), (1000, 2.0, 1e-3), (1, 1.0, 0.2)]
    direct = [ScaledGaussianPair(n, mu, 1 - e, e) for n, mu, e in settings_]
    monkeypatch.setattr(gp, "SPLIT_BELOW", 1.0)
    split = [ScaledGaussianPair(n, mu, 1 - e, e) for n, mu, e in settings_]
    alphas = np.array([1e-3, 0.05, 0.5])
    for a, b in zip(direct, split):
        assert b.uses_split_evaluator
        np.testing.assert_allclose(b.tradeoff(alphas), a.tradeoff(alphas), atol=1e-5)


def test_split_evaluator_where_ncx2_fails() -> None:
    """n = 1.5e6, mu = 1, 1 - s = 1e-7: scipy's ncx2 returns NaN; the split evaluator is close to
    the heuristic Gaussian limit G_mu_eq (agreement ~1e-7, docs/theory.md#split-evaluator, checked
    at 1e-4)."""
    n, mu, e = 1_500_000, 1.0, 1e-7
    pair = ScaledGaussianPair(n, mu, 1 - e, e)
    assert pair.uses_split_evaluator
    mu_eq = np.sqrt(mu**2 + ((e * (2 - e)) * np.sqrt(n / 2)) ** 2)
    alphas = np.array([0.01, 0.05, 0.5])
    np.testing.assert_allclose(pair.tradeoff(alphas), ndtr(norm.isf(alphas) - mu_eq), atol=1e-4)


def _full_loss(x: np.ndarray, mu: float, s: float) -> np.ndarray:
    """log dQ/dP from the n-dimensional densities."""
    n = x.shape[1]
    shifted = x.copy()
    shifted[:, 0] -= mu
    return 0.5 * (x**2).sum(1) - 0.5 * (shifted**2).sum(1) / s**2 - n * np.log(s)


@pytest.mark.parametrize(("n", "mu", "s"), [(1, 1.0, 0.7), (20, 0.5, 0.9), (20, 0.5, 1.2)])
def test_monte_carlo_full_vectors(n: int, mu: float, s: float) -> None:
    rng = np.random.default_rng(7)
    draws = 40_000
    pair = ScaledGaussianPair(n, mu, s)
    x_p = rng.standard_normal((draws, n))
    x_q = s * rng.standard_normal((draws, n))
    x_q[:, 0] += mu
    loss_p, loss_q = _full_loss(x_p, mu, s), _full_loss(x_q, mu, s)
    tau = np.quantile(loss_p, [0.9, 0.95, 0.99])
    for t in tau:
        a_hat, b_hat = np.mean(loss_p >= t), np.mean(loss_q < t)
        a, b = pair.alpha(t), pair.beta(t)
        assert abs(a_hat - a) < 5 * np.sqrt(a * (1 - a) / draws) + 1e-12
        assert abs(b_hat - b) < 5 * np.sqrt(b * (1 - b) / draws) + 1e-12


def test_monte_carlo_split_reduced_representation() -> None:
    """n = 1e6, 1 - s = 1e-7 (split regime): l = l1(x1) + l2(R'), R' ~ chi2(n-1) drawn exactly."""
    n, mu, e = 1_000_000, 1.0, 1e-7
    s = 1 - e
    pair = ScaledGaussianPair(n, mu, s, e)
    rng = np.random.default_rng(11)
    draws = 200_000
    log_s = np.log1p(-e)
    a = e * (2 - e) / s**2

    def loss(x1: np.ndarray, r: np.ndarray) -> np.ndarray:
        l1 = x1**2 / 2 - (x1 - mu) ** 2 / (2 * s**2) - log_s
        return l1 - a / 2 * r - (n - 1) * log_s

    loss_p = loss(rng.standard_normal(draws), rng.chisquare(n - 1, draws))
    loss_q = loss(mu + s * rng.standard_normal(draws), s**2 * rng.chisquare(n - 1, draws))
    for t in np.quantile(loss_p, [0.5, 0.95]):
        a_, b_ = pair.alpha(t), pair.beta(t)
        assert abs(np.mean(loss_p >= t) - a_) < 5 * np.sqrt(a_ * (1 - a_) / draws)
        assert abs(np.mean(loss_q < t) - b_) < 5 * np.sqrt(b_ * (1 - b_) / draws)


@pytest.mark.parametrize(("n", "mu", "s"), [(100, 1.0, 0.99), (10, 0.5, 1.3), (5, 1.0, 1.0)])
def test_reverse_is_inverse_and_curve_valid(n: int, mu: float, s: float) -> None:
    pair = ScaledGaussianPair(n, mu, s)
    beta = pair.tradeoff(ALPHAS)
    assert is_valid_tradeoff(ALPHAS, beta)
    np.testing.assert_allclose(pair.reversed().tradeoff(beta), ALPHAS, rtol=1e-6, atol=1e-9)


def test_pure_variance_pair_is_chi2() -> None:
    pair = ScaledGaussianPair(50, 0.0, 0.8)
    expected = chi2.sf(chi2.ppf(ALPHAS, 50) / 0.64, 50)
    np.testing.assert_allclose(pair.tradeoff(ALPHAS), expected, rtol=1e-10)


def test_chi2_saddlepoint_tail() -> None:
    """scipy's chi2.cdf is right at dof 1e6 (saddlepoint agrees to 1e-7) and jumps at z = -4.5 for
    dof >= 1e8; the saddlepoint tail is continuous across its switch at z = -4 and monotone."""
    m = 1e6
    x = m + np.array([-5.0, -7.0]) * np.sqrt(2 * m)
    d = 0.5 * x / (0.5 * m) - 1
    w = -np.sqrt(m * (d - np.log1p(d)))
    u = d * np.sqrt(0.5 * m)
    lr = norm.cdf(w) + norm.pdf(w) * (1 / w - 1 / u)
    np.testing.assert_allclose(lr, chi2.cdf(x, m), rtol=1e-7)
    big = 5e9
    z = np.linspace(-6, -3, 3001)
    values = chi2_logcdf(big + z * np.sqrt(2 * big), big)
    steps = np.diff(values)
    assert np.all(steps > 0) and steps.max() < 3 * steps.min()


@pytest.mark.parametrize("bad", [dict(n=0, mu=1.0, s=0.5), dict(n=3, mu=float("nan"), s=0.5), dict(n=3, mu=1.0, s=-1.0)])
def test_bad_parameters(bad: dict[str, float]) -> None:
    with pytest.raises(ParameterError):
        ScaledGaussianPair(bad["n"], bad["mu"], bad["s"])  # type: ignore[arg-type]


@settings(max_examples=12, deadline=None)
@given(
    n=st.integers(1, 10_000_000),
    mu=st.floats(0.0, 5.0),
    log_e=st.floats(-9.0, -0.5),
    grow=st.booleans(),
)
def test_no_nan_over_parameter_ranges(n: int, mu: float, log_e: float, grow: bool) -> None:
    e = -(10.0**log_e) if grow else 10.0**log_e
    pair = ScaledGaussianPair(n, mu, 1 - e, e)
    beta = pair.tradeoff(np.array([1e-6, 0.05, 0.5, 1 - 1e-6]))
    assert np.all(np.isfinite(beta)) and np.all((beta >= 0) & (beta <= 1))
    assert np.all(np.diff(beta) <= 1e-9)


@pytest.mark.parametrize("dof", [1.0, 7.0, 1e4, 1e6])
def test_chi2_logcdf_agrees_with_scipy_stats(dof: float) -> None:
    """The direct incomplete-gamma route (no per-call median search) against scipy.stats."""
    x = np.concatenate([[0.0, -1.0, np.inf], chi2.ppf([1e-30, 1e-8, 0.3, 0.5, 0.9], dof), chi2.isf([1e-8, 1e-30], dof)])
    np.testing.assert_allclose(chi2_logcdf(x, dof), chi2.logcdf(x, dof), rtol=1e-10, atol=1e-300)


@pytest.mark.parametrize(
    ("n", "mu", "s"),
    [(3, 0.5, 0.8), (100_000, 0.0, 1 - 1e-3), (5, 0.7, 1.25), (1, 0.9, 1.0), (40, 1.0, 1 - 2e-7)],
)
def test_tails_agree_with_alpha_and_beta(n: int, mu: float, s: float) -> None:
    """The one-pass tails (ncx2, chi2, reversed, shift, split evaluator) equal alpha and beta, and
    each complement pair sums to 1."""
    pair = ScaledGaussianPair(n, mu, s)
    tails = pair.tails(-20, 41, 0.1)
    grid = tails.losses
    np.testing.assert_allclose(tails.p_above, pair.alpha(grid), rtol=1e-9, atol=1e-15)
    np.testing.assert_allclose(tails.q_below, pair.beta(grid), rtol=1e-9, atol=1e-15)
    np.testing.assert_allclose(tails.p_above + tails.p_below, 1.0, atol=1e-12)
    np.testing.assert_allclose(tails.q_above + tails.q_below, 1.0, atol=1e-12)


def test_one_sided_fast_path_equals_the_interval_formula() -> None:
    """With s = N/(N+1) the far root of {l1 >= u} is beyond 40 sd, so only one boundary is
    evaluated; the same thresholds through the two-sided formulas (forced by one extra
    threshold with an empty event) give the same four probabilities."""
    e, mu = 1 / 60001, 0.91
    u = np.linspace(-6.0, 8.0, 301)
    fast = gp.first_coordinate_probs(u, mu, e)
    general = gp.first_coordinate_probs(np.append(u, 1e9), mu, e)
    for one, two in zip(fast, general):
        np.testing.assert_allclose(one, two[:-1], rtol=1e-13, atol=1e-300)
    # and the event is the half-line {x >= lo}: check against scipy's normal distribution
    lo = u / mu + mu / 2  # first-order root; exact root differs by O(e)
    np.testing.assert_allclose(fast[0], norm.sf(lo), rtol=5e-3, atol=1e-12)
