"""Property tests over parameter ranges (hypothesis, few examples): no NaN, no exception,
every curve a valid trade-off function; and the labelled-result contract of BoundCurve."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpcheck.privacy.clt import clt_indicator, clt_mu_poisson, clt_mu_uniform
from dpcheck.privacy.gdp import GaussianShiftPair, TrivialPair, gaussian_tradeoff, gdp_delta, gdp_epsilon
from dpcheck.privacy.labels import BoundCurve, Kind, Label
from dpcheck.privacy.mixture import Mixture
from dpcheck.privacy.sgm import poisson_sgm_curve, poisson_sgm_epsilon, poisson_sgm_tradeoff
from dpcheck.privacy.tradeoff import is_valid_tradeoff

GRID = np.concatenate([[0.0, 1e-300, 1e-12], np.linspace(1e-4, 1 - 1e-4, 99), [1 - 1e-12, 1.0]])
FEW = settings(max_examples=15, deadline=None)


@FEW
@given(mu=st.floats(0.0, 1e3))
def test_gaussian_curve_is_valid(mu: float) -> None:
    assert is_valid_tradeoff(GRID, gaussian_tradeoff(GRID, mu))


@FEW
@given(mu=st.floats(1e-3, 1e3), eps=st.floats(-10.0, 50.0))
def test_gdp_delta_is_a_probability(mu: float, eps: float) -> None:
    delta = gdp_delta(eps, mu)
    assert np.isfinite(delta) and 0.0 <= delta <= 1.0


@FEW
@given(mu=st.floats(1e-2, 30.0), log_delta=st.floats(-30.0, -1.0))
def test_gdp_epsilon_is_finite(mu: float, log_delta: float) -> None:
    eps = gdp_epsilon(10.0**log_delta, mu)
    assert np.isfinite(eps) and eps >= 0.0


@FEW
@given(q=st.floats(1e-4, 1.0), sigma=st.floats(0.3, 20.0))
def test_one_round_sgm_curve_is_valid_and_symmetric(q: float, sigma: float) -> None:
    beta = poisson_sgm_tradeoff(GRID, q, sigma)
    assert is_valid_tradeoff(GRID, beta, atol=1e-9)
    assert np.all(beta >= gaussian_tradeoff(GRID, 1 / sigma) - 1e-9)  # subsampling never hurts


@FEW
@given(
    weights=st.lists(st.floats(0.01, 1.0), min_size=1, max_size=4),
    mus=st.lists(st.floats(0.0, 6.0), min_size=4, max_size=4),
)
def test_mixture_curve_is_valid(weights: list[float], mus: list[float]) -> None:
    w = np.array(weights) / sum(weights)
    pairs = [GaussianShiftPair(m) if m > 0.5 else TrivialPair() for m in mus[: len(w)]]
    alphas = np.linspace(0.0, 1.0, 41)
    assert is_valid_tradeoff(alphas, Mixture(w, pairs).tradeoff(alphas), atol=1e-8)


@settings(max_examples=4, deadline=None)
@given(q=st.floats(0.005, 0.5), sigma=st.floats(0.6, 5.0), steps=st.integers(1, 40))
def test_sgm_pld_is_finite_and_monotone_in_steps(q: float, sigma: float, steps: int) -> None:
    eps = poisson_sgm_epsilon(q, sigma, steps, 1e-5)
    assert np.isfinite(eps) and eps >= 0.0
    assert poisson_sgm_epsilon(q, sigma, steps + 5, 1e-5) >= eps - 1e-9
    alphas = np.linspace(0.0, 1.0, 21)
    assert is_valid_tradeoff(alphas, poisson_sgm_curve(alphas, q, sigma, steps), atol=1e-7)


@FEW
@given(q=st.floats(1e-4, 1.0), sigma=st.floats(0.2, 50.0), steps=st.floats(1.0, 1e6))
def test_clt_mu_is_finite(q: float, sigma: float, steps: float) -> None:
    for mu in (clt_mu_poisson(q, sigma, steps), clt_mu_uniform(q, sigma, steps)):
        assert np.isfinite(mu) and mu >= 0.0


def test_clt_published_values() -> None:
    q = 256 / 60000
    mu = clt_mu_poisson(q, 1.06, 20 / q)
    assert mu == pytest.approx(0.34995, abs=1e-5) and gdp_epsilon(1e-5, mu) == pytest.approx(1.341, abs=1e-3)
    mu = clt_mu_poisson(q, 0.638, 70 / q)
    assert mu == pytest.approx(1.7849, abs=1e-4) and gdp_epsilon(1e-5, mu) == pytest.approx(8.697, abs=1e-3)
    assert clt_mu_poisson(q, 1.3, 15 / q) == pytest.approx(0.22727, abs=1e-5)


def test_clt_is_never_a_valid_bound_and_understates_eps_here() -> None:
    mu = clt_mu_poisson(0.01, 1.0, 1000)
    curve = clt_indicator(mu, [0.05], delta=1e-5)
    assert curve.valid is False and curve.notes
    assert curve.epsilon_at_delta == pytest.approx(1.618, abs=1e-3)
    assert curve.epsilon_at_delta < poisson_sgm_epsilon(0.01, 1.0, 1000, 1e-5)


def test_bound_curve_json_contract() -> None:
    curve = BoundCurve(
        Label.STANDARD, Kind.CLAIMED, "SGM", np.array([0.01, 0.05]), np.array([0.9, 0.7]),
        epsilon_at_delta=float("inf"), delta_at_epsilon=0.001,
    )
    doc = curve.to_json([0.05])
    assert doc == {
        "label": "standard", "kind": "claimed", "name": "SGM",
        "curve": [{"alpha": 0.05, "beta": 0.7}],
        "epsilon_at_delta": "inf", "delta_at_epsilon": 0.001, "valid": True, "notes": [],
    }
    assert len(curve.to_json()["curve"]) == 2
    with pytest.raises(ValueError, match="alpha=0.1"):
        curve.to_json([0.1])


def test_bound_curve_invalid_needs_a_reason() -> None:
    with pytest.raises(ValueError, match="no note"):
        BoundCurve(Label.UNVERIFIED, Kind.GUARANTEE, "x", np.array([0.1]), np.array([0.5]), valid=False)
    with pytest.raises(ValueError, match="differ in length"):
        BoundCurve(Label.OWN, Kind.WITNESS, "x", np.array([0.1, 0.2]), np.array([0.5]))
