"""Extreme inputs of the engine (docs/theory.md#sgm-pld): a noise multiplier too small
to compute with, epsilons past e^709, loss laws too wide for the default PLD grid, the RDP
delta read-out, and the loader length shared by the request and the divisor check."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
import torch
from dp_accounting import rdp as dp_rdp
from scipy.stats import norm

import dp_accounting
from dpcheck.bounds.claimed import DP_ACCOUNTING_ORDERS
from dpcheck.bounds.request import BoundRequest
from dpcheck.errors import ParameterError
from dpcheck.privacy._numerics import MIN_SIGMA
from dpcheck.privacy.divisor import loader_length, opacus_rule
from dpcheck.privacy.gdp import gaussian_tradeoff, gdp_delta
from dpcheck.privacy.pld import COMPOSED_POINTS
from dpcheck.privacy.rdp import compute_rdp, rdp_to_delta, rdp_to_epsilon
from dpcheck.privacy.sgm import PoissonSubsampledGaussianPair, poisson_sgm_pld_bracket, sgm_pld
from dpcheck.privacy.tradeoff import curve_from_profile, eps_delta_tradeoff, profile_from_curve

HUGE_EPS = [700.0, 710.0, 1.39e4, 1e300, math.inf]


@pytest.mark.parametrize("sigma", [1e-160, 1e-300, MIN_SIGMA / 2])
def test_sigma_below_the_floor_is_a_named_parameter_error(sigma: float) -> None:
    for build in (lambda: PoissonSubsampledGaussianPair(0.01, sigma), lambda: compute_rdp(0.01, sigma, 10)):
        with pytest.raises(ParameterError, match=r"sigma must be >= 0\.001"):
            build()


def test_the_floor_is_where_one_gaussian_step_has_no_privacy_left() -> None:
    """The stated reason: at sigma = MIN_SIGMA (mu = 1000) delta(eps) = 1 for every eps <= 500,
    by the closed form Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) evaluated with scipy."""
    mu = 1.0 / MIN_SIGMA
    for eps in (1.0, 100.0, 500.0):
        closed = norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * norm.cdf(-eps / mu - mu / 2)
        assert closed == 1.0 and gdp_delta(eps, mu) == 1.0
    upper = sgm_pld(1.0, MIN_SIGMA, 10)[1]
    assert upper.epsilon(1e-5) == math.inf


@pytest.mark.parametrize("eps", HUGE_EPS)
def test_profile_of_a_curve_has_no_nan_for_huge_epsilon(eps: float) -> None:
    """Only alpha = 0 counts once e^eps overflows: delta = 1 - f(0). f_{1, 0.1} has f(0) = 0.9;
    G_mu has f(0) = 1."""
    assert profile_from_curve(lambda a: eps_delta_tradeoff(a, 1.0, 0.1), eps) == pytest.approx(0.1, abs=1e-12)
    assert profile_from_curve(lambda a: gaussian_tradeoff(a, 3.0), eps) == 0.0


@pytest.mark.parametrize("eps", HUGE_EPS[:-1])
def test_eps_delta_curves_have_no_nan_for_huge_epsilon(eps: float) -> None:
    alpha = np.array([0.0, 1e-300, 0.5, 1.0])
    beta = eps_delta_tradeoff(alpha, eps, 0.1)
    # f_{eps,delta}(0) = 1 - delta; every alpha > 0 pays e^eps alpha >= 1 here (e^700 * 1e-300
    # ~ 1e4), leaving only the e^-eps (1 - delta - alpha) < 1e-300 branch.
    assert np.all(np.isfinite(beta)) and beta[0] == pytest.approx(0.9) and np.all(beta[1:] < 1e-300)
    from_profile = curve_from_profile(alpha, [eps], [0.1])
    assert np.array_equal(from_profile, beta)


def test_sgm_loss_variance_matches_monte_carlo() -> None:
    """The quadrature that sizes the grid against sampled losses under P and Q (seeded)."""
    rng = np.random.default_rng(7)
    q, sigma, n = 0.05, 0.5, 400_000
    pair = PoissonSubsampledGaussianPair(q, sigma)
    mu = pair.mu

    def loss(x: np.ndarray) -> np.ndarray:
        return np.log(1 - q + q * np.exp(mu * x - mu**2 / 2))

    under_p = loss(rng.standard_normal(n))
    under_q = loss(rng.standard_normal(n) + mu * (rng.random(n) < q))
    sampled = max(under_p.var(), under_q.var())
    assert pair.loss_variance() == pytest.approx(sampled, rel=0.05)


def test_wide_loss_law_coarsens_the_sgm_grid_and_stays_fast_and_bracketed() -> None:
    """q = 0.01, sigma = 0.05, T = 1000: the T-round loss spans ~1e4, which at the default
    interval (~1e-3) needs ~2e7 points and half a minute. The grid is coarsened to about
    COMPOSED_POINTS points; the bracket still holds and lies below the RDP upper bound."""
    q, sigma, steps = 0.01, 0.05, 1000
    start = time.perf_counter()
    upper = sgm_pld(q, sigma, steps)[1]
    assert time.perf_counter() - start < 10.0
    assert upper.remove.probs.size <= 2 * COMPOSED_POINTS
    low, high = poisson_sgm_pld_bracket(q, sigma, steps, delta=1e-5)
    assert 1000.0 < low <= high <= rdp_epsilon(q, sigma, steps)


@pytest.mark.slow
def test_coarsened_sgm_grid_agrees_with_a_finer_one() -> None:
    """The pessimistic eps of the coarsened grid against a 4x finer grid (18 s): within 1e-3.
    The optimistic side loosens with the coarser grid but stays below both."""
    q, sigma, steps = 0.01, 0.05, 1000
    coarse = sgm_pld(q, sigma, steps)[1]
    fine_low, fine_high = poisson_sgm_pld_bracket(q, sigma, steps, delta=1e-5, interval=coarse.remove.interval / 4)
    assert coarse.epsilon(1e-5) == pytest.approx(fine_high, rel=1e-3)
    assert fine_low <= fine_high


def rdp_epsilon(q: float, sigma: float, steps: int) -> float:
    """dp_accounting's RDP epsilon at delta = 1e-5: a valid upper bound on the exact SGM value."""
    accountant = dp_rdp.RdpAccountant(orders=list(DP_ACCOUNTING_ORDERS))
    accountant.compose(dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma)), steps))
    return accountant.get_epsilon(1e-5)


@pytest.mark.parametrize("q, sigma, steps, eps", [(0.01, 1.0, 1000, 3.0), (0.004, 1.1, 3500, 1.5), (0.02, 0.8, 200, 5.0)])
def test_rdp_delta_matches_dp_accounting_conversion(q: float, sigma: float, steps: int, eps: float) -> None:
    """Same RDP values, dp_accounting's own delta conversion (its KL term does not bind here)."""
    orders, rdp = compute_rdp(q, sigma, steps, list(DP_ACCOUNTING_ORDERS))
    theirs, order = dp_rdp.rdp_privacy_accountant.compute_delta(list(orders), list(rdp), eps)
    assert rdp_to_delta(orders, rdp, eps) == pytest.approx((theirs, order), rel=1e-9)


@pytest.mark.parametrize("conversion", ["classic", "improved"])
def test_rdp_delta_inverts_rdp_epsilon(conversion: str) -> None:
    orders, rdp = compute_rdp(0.01, 1.0, 1000)
    for delta in (1e-7, 1e-5, 1e-2):
        eps, _ = rdp_to_epsilon(orders, rdp, delta, conversion)  # type: ignore[arg-type]
        assert rdp_to_delta(orders, rdp, eps, conversion)[0] == pytest.approx(delta, rel=1e-9)  # type: ignore[arg-type]


@pytest.mark.parametrize("n, b, drop_last", [(60000, 256, False), (60000, 256, True), (1000, 10, False),
                                             (1001, 10, True), (7, 7, False), (257, 256, True)])
def test_loader_length_matches_torch_and_is_shared(n: int, b: int, drop_last: bool) -> None:
    data = torch.utils.data.DataLoader(range(n), batch_size=b, drop_last=drop_last)
    assert loader_length(n, b, drop_last) == len(data)
    assert BoundRequest("sgm", sigma=1.0, batch_size=b, n_records=n, drop_last=drop_last).loader_length == len(data)
    rule = opacus_rule(b, drop_last)
    assert rule.as_code(n) == int(n * (1 / len(data)))
