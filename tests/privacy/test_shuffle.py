"""Shuffle vs Poisson (docs/theory.md#shuffling): published thresholds, reference values, Monte
Carlo."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import norm

from dpcheck.errors import ParameterError
from dpcheck.privacy import shuffle
from dpcheck.privacy.shuffle_threshold import sigma_threshold


@pytest.mark.parametrize(("m", "sigma", "kappa"), [(5000, 0.24229, 0.31938), (23_000_000, 0.17175, 0.32933)])
def test_thresholds(m: int, sigma: float, kappa: float) -> None:
    assert sigma_threshold(m) == pytest.approx(sigma, abs=5e-6)
    assert shuffle.kappa_closed_form(m) == pytest.approx(kappa, abs=5e-6)


@pytest.mark.parametrize(("m", "sigma", "kappa"), [(5000, 0.2, 0.52212), (5000, 1.0, 0.00144), (23_000_000, 0.17, 0.35315)])
def test_kappa_sub(m: int, sigma: float, kappa: float) -> None:
    assert shuffle.kappa_sub(m, sigma) == pytest.approx(kappa, abs=6e-6)


def test_kappa_sub_above_closed_form_in_regime() -> None:
    for m in (100, 5000, 10**6):
        sigma = 0.9 * sigma_threshold(m)
        assert shuffle.kappa_sub(m, sigma) >= shuffle.kappa_closed_form(m)


def test_kappa_is_max_separation_of_f_sub() -> None:
    a = np.concatenate([np.logspace(-8, -1, 2000), np.linspace(0.1, 1 - 1e-9, 4000)])
    separation = np.max((1 - a) - shuffle.f_sub(a, 5000, 0.2)) / math.sqrt(2)
    assert separation == pytest.approx(shuffle.kappa_sub(5000, 0.2), rel=1e-4)


def test_f_sub_reference_and_monte_carlo() -> None:
    assert shuffle.f_sub(0.05, 5000, 0.2)[0] == pytest.approx(0.21794, abs=5e-6)
    m, sigma, draws = 50, 0.5, 40_000
    rng = np.random.default_rng(5)
    t = norm.ppf(0.95 ** (1 / m))  # max test at level a = 0.05
    h1 = rng.standard_normal((draws, m))
    h1[:, 0] += 1 / sigma
    beta_hat = np.mean(h1.max(1) <= t)
    beta = shuffle.f_sub(0.05, m, sigma)[0]
    assert abs(beta_hat - beta) < 5 * math.sqrt(beta * (1 - beta) / draws)


def test_poisson_transfer() -> None:
    assert shuffle.poisson_miss_probability(5000) == pytest.approx(0.3678427, abs=5e-8)
    a = np.array([0.01, 0.05, 0.3])
    p = shuffle.poisson_miss_probability(5000)
    expected = p * (1 - a) + (1 - p) * shuffle.f_sub(a, 5000, 0.2)
    np.testing.assert_allclose(shuffle.f_poisson_witness(a, 5000, 0.2), expected)
    assert p <= 1 / math.e


def test_thm41_candidate_and_chi2_bound() -> None:
    assert shuffle.thm41_candidate_delta(1_140_000, 1.0) == pytest.approx(0.009976, abs=5e-6)
    assert shuffle.thm41_candidate_rounds(0.01, 1.0) == pytest.approx(1.134e6, rel=1e-3)
    assert shuffle.thm41_regime(1_140_000, 1.0)
    assert shuffle.compose_zero_delta(0.01, 10) == pytest.approx(0.0956, abs=5e-5)
    assert shuffle.chi2_delta(1_140_000, 1.0) == pytest.approx(6.14e-4, abs=5e-7)
    assert shuffle.chi2_delta(1_140_000, 1.0, epochs=10) == pytest.approx(1.94e-3, abs=5e-6)
    assert shuffle.asymptotic_tv(1_140_000, 1.0) == pytest.approx(4.90e-4, abs=5e-7)
    assert shuffle.chi2_delta(1000, 1.0) == pytest.approx(0.0207, abs=5e-5)


def test_third_moment_against_monte_carlo() -> None:
    rng = np.random.default_rng(9)
    y = np.exp(rng.standard_normal(2_000_000) - 0.5)
    sample = np.abs(y - 1) ** 3
    rho = shuffle._third_abs_moment(1.0)
    assert rho == pytest.approx(14.3025, abs=1e-3)
    assert abs(sample.mean() - rho) < 5 * sample.std() / math.sqrt(sample.size)


def test_bad_inputs() -> None:
    with pytest.raises(ParameterError):
        shuffle.f_sub(0.1, 1, 1.0)
    with pytest.raises(ParameterError):
        shuffle.kappa_sub(100, 0.0)
    with pytest.raises(ParameterError):
        shuffle.chi2_delta(100, 1.0, epochs=0)


@settings(max_examples=25, deadline=None)
@given(m=st.integers(2, 10**9), sigma=st.floats(0.05, 20.0), a=st.floats(0.0, 1.0))
def test_f_sub_never_nan(m: int, sigma: float, a: float) -> None:
    value = shuffle.f_sub(a, m, sigma)[0]
    assert math.isfinite(value) and 0.0 <= value <= 1.0 - a + 1e-12
