"""Gaussian DP: the reference vectors of docs/theory.md#gaussian-dp, the closed forms against direct
scipy evaluations, the extremes, and the Gaussian-shift pair against Monte Carlo."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import norm

from dpcheck.errors import ParameterError
from dpcheck.privacy.gdp import (
    GaussianShiftPair,
    TrivialPair,
    gaussian_tradeoff,
    gdp_delta,
    gdp_epsilon,
)


def test_reference_vectors() -> None:
    assert gaussian_tradeoff(0.05, 1.0) == pytest.approx(0.7404889772, abs=1e-10)
    assert gaussian_tradeoff(1e-9, 3.0) == pytest.approx(0.998640351, abs=1e-9)
    assert gdp_delta(1.0, 1.0) == pytest.approx(0.1269367375, abs=1e-10)
    assert gdp_delta(10.0, 1.0) == pytest.approx(9.8127e-23, rel=1e-4)
    assert gdp_epsilon(1e-5, 1.0) == pytest.approx(4.377178096, abs=1e-8)


def test_delta_matches_direct_formula_where_it_is_well_conditioned() -> None:
    eps = np.linspace(-2.0, 3.0, 11)
    for mu in (0.3, 1.0, 2.5):
        direct = norm.cdf(-eps / mu + mu / 2) - np.exp(eps) * norm.cdf(-eps / mu - mu / 2)
        np.testing.assert_allclose(gdp_delta(eps, mu), direct, rtol=1e-9, atol=1e-15)


def test_epsilon_inverts_delta() -> None:
    for mu in (0.1, 1.0, 5.0, 40.0):
        for delta in (1e-10, 1e-5, 0.01):
            eps = gdp_epsilon(delta, mu)
            assert gdp_delta(eps, mu) == pytest.approx(delta, rel=1e-8)


def test_epsilon_is_zero_when_delta_at_zero_is_small_enough() -> None:
    assert gdp_epsilon(0.5, 0.01) == 0.0


def test_no_nan_at_the_extremes() -> None:
    alpha = np.array([0.0, 1e-300, 1e-16, 0.5, 1.0 - 1e-16, 1.0])
    for mu in (0.0, 1e-3, 1.0, 1e3):
        beta = gaussian_tradeoff(alpha, mu)
        assert np.all(np.isfinite(beta)) and np.all((beta >= 0) & (beta <= 1))
        assert beta[0] == 1.0 and beta[-1] == 0.0
    eps = np.array([-5.0, 0.0, 8.0, 20.0, 50.0])
    for mu in (1e-3, 1.0, 30.0, 1e3):
        delta = gdp_delta(eps, mu)
        assert np.all(np.isfinite(delta)) and np.all((delta >= 0) & (delta <= 1))
        assert np.all(np.diff(delta) <= 0)


def test_mu_zero_is_the_trivial_pair() -> None:
    np.testing.assert_allclose(gaussian_tradeoff([0.1, 0.7], 0.0), [0.9, 0.3])
    assert gdp_delta(0.5, 0.0) == 0.0


def test_shift_pair_threshold_laws_match_monte_carlo() -> None:
    rng = np.random.default_rng(3)
    mu, n = 1.3, 200_000
    pair = GaussianShiftPair(mu)
    loss_p = mu * rng.standard_normal(n) - mu**2 / 2
    loss_q = mu * (rng.standard_normal(n) + mu) - mu**2 / 2
    for tau in (-1.0, 0.0, 0.7):
        for empirical, exact in ((np.mean(loss_p >= tau), pair.alpha(np.array(tau))),
                                 (np.mean(loss_q < tau), pair.beta(np.array(tau)))):
            se = np.sqrt(exact * (1 - exact) / n)
            assert abs(empirical - exact) < 5 * se


def test_trivial_pair() -> None:
    pair = TrivialPair()
    assert pair.alpha(np.array(0.0)) == 1.0 and pair.alpha(np.array(1e-9)) == 0.0
    assert pair.beta(np.array(0.0)) == 0.0 and pair.beta(np.array(1e-9)) == 1.0
    np.testing.assert_allclose(pair.hockey_stick(np.array([-1.0, 0.0, 2.0])), [1 - np.exp(-1), 0, 0])


@pytest.mark.parametrize(
    "call",
    [
        lambda: gaussian_tradeoff(0.1, -1.0),
        lambda: gaussian_tradeoff(1.5, 1.0),
        lambda: gdp_epsilon(0.0, 1.0),
        lambda: gdp_epsilon(1.0, 1.0),
        lambda: GaussianShiftPair(float("nan")),
    ],
)
def test_bad_input_names_the_parameter(call) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ParameterError, match="mu|alpha|delta"):
        call()
