"""Index-revealed mixtures (docs/theory.md#revealed-index-mixtures): the three regions of the
revealed-index SGM curve in closed form, a Monte Carlo of the likelihood-ratio test, delta in both
directions."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import norm

from dpcheck.errors import ParameterError
from dpcheck.privacy.gdp import GaussianShiftPair, TrivialPair, gaussian_tradeoff, gdp_delta
from dpcheck.privacy.mixture import Mixture
from dpcheck.privacy.sgm import PoissonSubsampledGaussianPair
from dpcheck.privacy.tradeoff import inverse, is_valid_tradeoff


def test_revealed_index_sgm_has_three_closed_form_regions() -> None:
    q, mu = 0.2, 1.5
    mix = Mixture([1 - q, q], [TrivialPair(), GaussianShiftPair(mu)])
    corner = q * norm.cdf(-mu / 2)  # alpha(0+): only the Gaussian component rejects
    low = np.array([1e-4, 0.01, corner * 0.9])
    np.testing.assert_allclose(mix.tradeoff(low), q * gaussian_tradeoff(low / q, mu) + (1 - q), atol=1e-10)
    middle = np.array([corner + 0.01, 0.5, corner + (1 - q) - 0.01])
    np.testing.assert_allclose(mix.tradeoff(middle), 1 - middle - q * (2 * norm.cdf(mu / 2) - 1), atol=1e-10)
    high = np.array([corner + (1 - q) + 0.01, 0.99])
    np.testing.assert_allclose(mix.tradeoff(high), q * gaussian_tradeoff((high - (1 - q)) / q, mu), atol=1e-10)


def test_spec_middle_region_value() -> None:
    mix = Mixture([0.99, 0.01], [TrivialPair(), GaussianShiftPair(1.0)])
    assert mix.tradeoff(0.05) == pytest.approx(1 - 0.05 - 0.01 * (2 * norm.cdf(0.5) - 1), abs=1e-10)


def test_mixture_tradeoff_matches_monte_carlo_lr_test() -> None:
    rng = np.random.default_rng(5)
    weights, mus, n = np.array([0.3, 0.7]), np.array([0.8, 2.0]), 400_000
    mix = Mixture(weights, [GaussianShiftPair(m) for m in mus])
    idx = rng.choice(2, size=n, p=weights)
    x_p = rng.standard_normal(n)
    x_q = rng.standard_normal(n) + mus[idx]
    loss_p = mus[idx] * x_p - mus[idx] ** 2 / 2
    loss_q = mus[idx] * x_q - mus[idx] ** 2 / 2
    for tau in (-0.5, 0.3, 1.5):
        alpha_hat, beta_hat = np.mean(loss_p >= tau), np.mean(loss_q < tau)
        predicted = mix.tradeoff(alpha_hat)
        assert abs(beta_hat - predicted) < 5 * np.sqrt(beta_hat * (1 - beta_hat) / n) + 1e-4


def test_delta_is_the_weighted_delta_and_takes_both_directions() -> None:
    eps = np.array([0.0, 0.5, 2.0])
    mix = Mixture([0.4, 0.6], [GaussianShiftPair(1.0), GaussianShiftPair(3.0)])
    np.testing.assert_allclose(mix.delta(eps), 0.4 * gdp_delta(eps, 1.0) + 0.6 * gdp_delta(eps, 3.0), rtol=1e-12)
    sgm = Mixture([1.0], [PoissonSubsampledGaussianPair(0.1, 0.7)])
    remove = sgm.hockey_stick(eps)
    add = sgm.reversed().hockey_stick(eps)
    assert np.any(remove != add)
    np.testing.assert_allclose(sgm.delta(eps), np.maximum(remove, add))


def test_reversed_mixture_has_the_inverse_curve() -> None:
    mix = Mixture([0.5, 0.5], [PoissonSubsampledGaussianPair(0.3, 1.0), GaussianShiftPair(0.5)])
    beta = np.array([0.1, 0.4, 0.9])
    np.testing.assert_allclose(mix.reversed().tradeoff(beta), inverse(mix.tradeoff, beta), atol=1e-9)


def test_all_trivial_components_give_one_minus_alpha() -> None:
    a = np.linspace(0, 1, 11)
    mix = Mixture([0.5, 0.5], [TrivialPair(), TrivialPair()])
    np.testing.assert_allclose(mix.tradeoff(a), 1 - a, atol=1e-12)


def test_curve_is_valid() -> None:
    a = np.linspace(0, 1, 301)
    mix = Mixture([0.6, 0.3, 0.1], [TrivialPair(), GaussianShiftPair(1.0), GaussianShiftPair(4.0)])
    assert is_valid_tradeoff(a, mix.tradeoff(a), atol=1e-9)


@pytest.mark.parametrize("weights", [[0.5, 0.6], [-0.1, 1.1], [1.0]])
def test_bad_weights(weights) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ParameterError, match="weight"):
        Mixture(weights, [TrivialPair(), GaussianShiftPair(1.0)])


def test_sure_events_sum_to_exactly_one() -> None:
    """Regression: binomial weights over Gaussian shifts used to sum an ulp short of 1 far above
    the loss range, so the PLD's tail search doubled until it gave up with a ParameterError."""
    from scipy.stats import binom

    from dpcheck.privacy.pld import PrivacyLossDistribution

    weights = binom.pmf(np.arange(3), 2, 0.3)
    mix = Mixture(weights, [GaussianShiftPair(0.5 + 0.01 * i) for i in range(3)])
    assert float(mix.beta(np.array(1e3))) == 1.0
    assert float(mix.alpha(np.array(-1e3))) == 1.0
    pld = PrivacyLossDistribution.from_pair(mix, 1e-2)
    exact = sum(w * gdp_delta(1.0, 0.5 + 0.01 * i) for i, w in enumerate(weights))
    assert float(pld.delta(1.0)) == pytest.approx(exact, rel=1e-3)
