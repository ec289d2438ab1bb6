"""PLD discretisation and composition: Gaussian composition against the closed form
G_{mu sqrt T}, bracket ordering, repeated squaring against sequential composition, mass
conservation, and dp_accounting's PLD accountant as an oracle for SGM."""

from __future__ import annotations

import numpy as np
import pytest

from dpcheck.privacy.gdp import GaussianShiftPair, gaussian_tradeoff, gdp_delta, gdp_epsilon
from dpcheck.privacy.pld import PrivacyLossDistribution, compose_both_directions
from dpcheck.privacy.sgm import PoissonSubsampledGaussianPair, poisson_sgm_epsilon

EPS = np.array([0.0, 0.5, 1.0, 2.0, 3.0])


@pytest.fixture(scope="module")
def gaussian16() -> tuple[PrivacyLossDistribution, PrivacyLossDistribution, PrivacyLossDistribution]:
    """16 rounds of G_0.5 (= G_2 exactly): connect-the-dots, rounded-up and rounded-down."""
    pair = GaussianShiftPair(0.5)
    h = 1e-3
    ctd = PrivacyLossDistribution.from_pair(pair, h).self_compose(16)
    up = PrivacyLossDistribution.from_pair(pair, h, connect_dots=False).self_compose(16)
    down = PrivacyLossDistribution.from_pair(pair, h, pessimistic=False).self_compose(16)
    return ctd, up, down


def test_gaussian_composition_brackets_the_closed_form(gaussian16) -> None:  # type: ignore[no-untyped-def]
    ctd, up, down = gaussian16
    exact = gdp_delta(EPS, 2.0)
    assert np.all(down.delta(EPS) <= exact + 1e-15)
    assert np.all(ctd.delta(EPS) >= exact - 1e-12)
    assert np.all(up.delta(EPS) >= exact - 1e-12)
    np.testing.assert_allclose(ctd.delta(EPS), exact, rtol=1e-5)
    # connect-the-dots is second order, rounding first order: far tighter at equal h.
    assert np.all(ctd.delta(EPS) - exact <= 0.05 * (up.delta(EPS) - exact) + 1e-13)


def test_gaussian_composition_epsilon_and_tradeoff(gaussian16) -> None:  # type: ignore[no-untyped-def]
    ctd, _, down = gaussian16
    exact = gdp_epsilon(1e-5, 2.0)
    assert exact - 16 * 1e-3 <= down.epsilon(1e-5) <= exact <= ctd.epsilon(1e-5) <= exact + 1e-4
    alphas = np.array([0.0, 1e-3, 0.05, 0.3, 0.9])
    curve = ctd.tradeoff(alphas)
    assert np.all(curve <= gaussian_tradeoff(alphas, 2.0) + 1e-9)
    np.testing.assert_allclose(curve, gaussian_tradeoff(alphas, 2.0), atol=1e-4)


def test_epsilon_inverts_delta(gaussian16) -> None:  # type: ignore[no-untyped-def]
    ctd, _, _ = gaussian16
    for delta in (1e-8, 1e-5, 1e-2):
        assert ctd.delta(ctd.epsilon(delta)) == pytest.approx(delta, rel=1e-9)


def test_repeated_squaring_equals_sequential_composition() -> None:
    one = PrivacyLossDistribution.from_pair(PoissonSubsampledGaussianPair(0.1, 1.0), 2e-3)
    sequential = one
    for _ in range(5):
        sequential = sequential.compose(one)
    squared = one.self_compose(6)
    np.testing.assert_allclose(squared.delta(EPS), sequential.delta(EPS), rtol=1e-8, atol=1e-15)


def test_connect_dots_pld_is_a_valid_pair() -> None:
    for pair in (PoissonSubsampledGaussianPair(0.01, 1.0), PoissonSubsampledGaussianPair(0.5, 0.6)):
        for side in (pair, pair.reversed()):
            pld = PrivacyLossDistribution.from_pair(side, 1e-4)
            assert np.all(pld.probs >= 0)
            assert pld.probs.sum() + pld.infinity_mass == pytest.approx(1.0, abs=1e-12)
            assert (pld.probs * np.exp(-pld.losses)).sum() <= 1.0 + 1e-12  # P-mass
            assert pld.infinity_mass < 1e-14


def test_infinity_masses_combine() -> None:
    pld = PrivacyLossDistribution(0.1, 0, np.array([0.9]), 0.1, True)
    assert pld.compose(pld).infinity_mass == pytest.approx(0.19)
    assert pld.epsilon(0.05) == float("inf")


def test_both_directions_bracket() -> None:
    lower, upper = compose_both_directions(PoissonSubsampledGaussianPair(0.05, 1.0), 50, 1e-3)
    assert lower is not None
    assert lower.epsilon(1e-5) <= upper.epsilon(1e-5) <= lower.epsilon(1e-5) + 50 * 1e-3
    assert upper.epsilon(1e-5) == max(upper.remove.epsilon(1e-5), upper.add.epsilon(1e-5))


@pytest.mark.parametrize("q,sigma,steps", [(0.01, 1.0, 1000), (0.05, 2.0, 300), (0.2, 0.8, 20)])
def test_sgm_epsilon_agrees_with_dp_accounting(q: float, sigma: float, steps: int) -> None:
    dp_accounting = pytest.importorskip("dp_accounting")
    from dp_accounting import pld as dpa_pld

    accountant = dpa_pld.PLDAccountant(value_discretization_interval=1e-3)
    event = dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma))
    accountant.compose(dp_accounting.SelfComposedDpEvent(event, steps))
    oracle = accountant.get_epsilon(1e-5)
    ours = poisson_sgm_epsilon(q, sigma, steps, 1e-5)
    # both pessimistic; ours uses a finer or equal grid, so it is at most the oracle's value
    assert oracle - 3e-3 <= ours <= oracle + 1e-4
