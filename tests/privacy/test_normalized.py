"""Normalized mechanisms (math-spec §3.3-§3.7, §5.2): reference tables, Monte Carlo, PLD rounds."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binom

from dpcheck.errors import ParameterError
from dpcheck.privacy.divisor import check_divisor, feasgm_rule
from dpcheck.privacy.normalized import (
    asgm_mixture,
    asgm_witness_epsilon,
    asgm_witness_tradeoff,
    easgm_mixture,
    feasgm_mixture,
    normalized_components,
    normalized_rounds,
)
from dpcheck.privacy.sgm import poisson_sgm_tradeoff
from dpcheck.privacy.tradeoff import is_valid_tradeoff


@pytest.mark.parametrize(
    ("q", "n", "expected"),
    [(0.5, 1, 0.93618), (0.5, 10, 0.80069), (0.5, 100, 0.06840), (0.9, 1, 0.93532), (0.9, 10, 0.79876), (0.9, 100, 0.06804)],
)
def test_audit_table(q: float, n: int, expected: float) -> None:
    assert float(easgm_mixture(4, q, 10.0, n).tradeoff(0.05)) == pytest.approx(expected, abs=5e-6)


def test_audit_table_sigma_as_std() -> None:
    assert float(easgm_mixture(4, 0.5, 100.0, 1).tradeoff(0.05)) == pytest.approx(0.93752, abs=5e-6)
    assert float(easgm_mixture(4, 0.5, 100.0, 100).tradeoff(0.05)) == pytest.approx(0.06863, abs=5e-6)


def test_monotone_vectors() -> None:
    in_n = [float(easgm_mixture(4, 0.5, 10.0, n).tradeoff(0.05)) for n in (1, 3, 10, 30, 100)]
    np.testing.assert_allclose(in_n, [0.936, 0.907, 0.801, 0.522, 0.068], atol=6e-4)
    in_big_n = [float(easgm_mixture(big, 0.5, 10.0, 10).tradeoff(0.05)) for big in (2, 4, 8, 16, 64)]
    np.testing.assert_allclose(in_big_n, [0.544, 0.801, 0.890, 0.922, 0.936], atol=6e-4)
    in_q = [float(easgm_mixture(4, q, 10.0, 10).tradeoff(0.05)) for q in (0.1, 0.9)]
    np.testing.assert_allclose(in_q, [0.8018, 0.7988], atol=6e-5)
    assert np.all(np.diff(in_n) < 0) and np.all(np.diff(in_big_n) > 0)


def test_asgm_reference_vectors() -> None:
    assert float(asgm_mixture(4, 0.5, 10.0, 1).tradeoff(0.05)) == pytest.approx(0.91053, abs=5e-6)
    assert float(asgm_mixture(4, 0.5, 10.0, 10).tradeoff(0.05)) == pytest.approx(0.67960, abs=5e-6)


def test_asgm_witness_crosses_claim() -> None:
    witness = asgm_witness_tradeoff(0.05, 0.01, 1.0)[0]
    claimed = float(poisson_sgm_tradeoff(0.05, 0.01, 1.0))
    assert witness == pytest.approx(0.94411, abs=5e-6)
    assert claimed == pytest.approx(0.94790, abs=5e-6)
    low, high = asgm_witness_epsilon(0.01, 2.0, 1000, 1e-5)
    assert low <= 1.8282 <= high
    assert low > 0.622  # the claimed eps at sigma = 2


def test_curves_valid() -> None:
    alphas = np.array([1e-3, 1e-2, 0.05, 0.1, 0.25, 0.5, 0.9])
    for mixture in (easgm_mixture(8, 0.3, 2.0, 20), asgm_mixture(8, 0.3, 2.0, 20)):
        assert is_valid_tradeoff(alphas, np.asarray(mixture.tradeoff(alphas)))


def test_monte_carlo_revealed_index_mixture() -> None:
    """Sample (k, j) and the n-dimensional release of the §3.2 pair for N = 4, q = 0.5, sigma = 10,
    n = 10, compute each draw's loss from the densities, and compare alpha/beta at thresholds."""
    big_n, q, sigma, n, draws = 4, 0.5, 10.0, 10, 100_000
    s = big_n / (big_n + 1)
    rng = np.random.default_rng(21)
    k = rng.binomial(big_n, q, draws)
    j2 = rng.random(draws) < q
    mu = np.where(j2, (big_n + k) / ((big_n + 1) * sigma), k / ((big_n + 1) * sigma))

    def loss(x: np.ndarray) -> np.ndarray:
        shifted = x.copy()
        shifted[:, 0] -= mu
        return 0.5 * (x**2).sum(1) - 0.5 * (shifted**2).sum(1) / s**2 - n * np.log(s)

    x_p = rng.standard_normal((draws, n))
    x_q = s * rng.standard_normal((draws, n))
    x_q[:, 0] += mu
    mixture = easgm_mixture(big_n, q, sigma, n)
    loss_p, loss_q = loss(x_p), loss(x_q)
    for t in np.quantile(loss_p, [0.9, 0.95]):
        a, b = float(mixture.alpha(np.array(t))), float(mixture.beta(np.array(t)))
        assert abs(np.mean(loss_p >= t) - a) < 5 * np.sqrt(a * (1 - a) / draws)
        assert abs(np.mean(loss_q < t) - b) < 5 * np.sqrt(b * (1 - b) / draws)


def test_rounds_factorised_pld_matches_direct_mixture() -> None:
    """One round through the (1-D mixture) x (variance pair) PLD equals the exact n-dim mixture."""
    components = normalized_components(4, 0.5, 10.0, 0.2)
    pessimistic, optimistic = normalized_rounds(components, 10, 1, interval=1e-4)
    direct = easgm_mixture(4, 0.5, 10.0, 10)
    assert optimistic.remove.tradeoff(0.05) >= pessimistic.remove.tradeoff(0.05) - 1e-12
    assert float(pessimistic.remove.tradeoff(0.05)) == pytest.approx(float(direct.tradeoff(0.05)), abs=1e-4)
    assert float(pessimistic.delta(2.0)) == pytest.approx(float(direct.delta(2.0)), abs=1e-4)


def test_ten_rounds_delta() -> None:
    components = normalized_components(4, 0.5, 10.0, 0.2)
    pessimistic, optimistic = normalized_rounds(components, 10, 10)
    assert float(optimistic.delta(2.0)) <= 0.75215 + 4e-5
    assert float(pessimistic.delta(2.0)) >= 0.75215 - 4e-5


def test_revealed_index_sgm_rounds_against_binomial_count() -> None:
    """s = 1 with the divisor not depending on N: T rounds of the revealed-index SGM mixture equal
    a Bin(T, q) mixture of Gaussian compositions when the shift is the same in every component."""
    from dpcheck.privacy.gdp import gdp_delta
    from dpcheck.privacy.normalized import Components

    q, mu, steps = 0.1, 1.0, 20
    comps = Components(np.array([1 - q, q]), np.array([0.0, mu]), 0.0, 0.0)
    pessimistic, optimistic = normalized_rounds(comps, 1, steps, interval=1e-3)
    counts = np.arange(steps + 1)
    exact = sum(binom.pmf(c, steps, q) * float(gdp_delta(1.0, mu * np.sqrt(c))) for c in counts[1:])
    assert float(optimistic.remove.delta(1.0)) <= exact + 1e-9
    assert float(pessimistic.remove.delta(1.0)) >= exact - 1e-9
    assert float(pessimistic.remove.delta(1.0)) == pytest.approx(exact, rel=1e-3)


def test_feasgm_equal_floors_is_revealed_index_sgm() -> None:
    """N = 60000, q = 256/60000: the add-side floors agree, so s = 1 and no variance part."""
    from fractions import Fraction

    from scipy.stats import norm

    q = 256 / 60000
    check = check_divisor(feasgm_rule(Fraction(256, 60000)), 60000)
    mixture = feasgm_mixture(check, q, 1.0, 1000)
    assert check.one_minus_s_add == 0.0
    mid = 0.3  # middle region of the revealed-index SGM curve (§3.3): 1 - alpha - q(2 Phi(mu/2) - 1)
    assert float(mixture.tradeoff(mid)) == pytest.approx(1 - mid - q * (2 * norm.cdf(0.5) - 1), abs=1e-9)


def test_bad_inputs() -> None:
    with pytest.raises(ParameterError):
        easgm_mixture(0, 0.5, 1.0, 3)
    with pytest.raises(ParameterError):
        easgm_mixture(4, 1.5, 1.0, 3)
    with pytest.raises(ParameterError):
        asgm_mixture(4, 0.5, -1.0, 3)


@settings(max_examples=8, deadline=None)
@given(big_n=st.integers(2, 50), q=st.floats(0.01, 1.0), sigma=st.floats(0.2, 50.0), n=st.integers(1, 500))
def test_no_nan_small_settings(big_n: int, q: float, sigma: float, n: int) -> None:
    alphas = np.array([1e-3, 0.05, 0.5])
    for mixture in (easgm_mixture(big_n, q, sigma, n), asgm_mixture(big_n, q, sigma, n)):
        beta = np.asarray(mixture.tradeoff(alphas))
        assert np.all(np.isfinite(beta)) and np.all((beta >= 0) & (beta <= 1 - alphas + 1e-9))
