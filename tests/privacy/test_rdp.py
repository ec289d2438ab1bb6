"""RDP of SGM as the libraries compute it: per-order values against Opacus and against
quadrature, epsilon against Opacus and dp_accounting's RdpAccountant, both conversions."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.integrate import quad
from scipy.stats import norm

from dpcheck.errors import ParameterError
from dpcheck.privacy.rdp import (
    OPACUS_ORDERS,
    compute_rdp,
    per_step_rdp,
    poisson_sgm_rdp_epsilon,
    rdp_to_epsilon,
)

SETTINGS = [(0.01, 1.0, 1000), (0.004, 1.1, 3516), (0.2, 0.8, 50), (0.5, 3.0, 10), (1e-4, 0.5, 100)]


def _rdp_by_quadrature(q: float, sigma: float, order: float) -> float:
    """log E_{x~N(0,s^2)}[((1-q) + q e^{(2x-1)/(2s^2)})^a] / (a-1), integrated directly."""
    integrand = lambda x: norm.pdf(x, 0, sigma) * ((1 - q) + q * np.exp((2 * x - 1) / (2 * sigma**2))) ** order  # noqa: E731
    value, _ = quad(integrand, -60, 60, limit=500, epsabs=0, epsrel=1e-13)
    return math.log(value) / (order - 1)


@pytest.mark.parametrize("order", [1.1, 1.5, 2.0, 3.0, 4.5, 8.0])
def test_per_step_rdp_matches_quadrature(order: float) -> None:
    for q, sigma in ((0.01, 1.0), (0.1, 2.0)):
        assert per_step_rdp(q, sigma, order) == pytest.approx(_rdp_by_quadrature(q, sigma, order), rel=1e-7)


@pytest.mark.parametrize("q,sigma,steps", SETTINGS)
def test_rdp_matches_opacus(q: float, sigma: float, steps: int) -> None:
    opacus_rdp = pytest.importorskip("opacus.accountants.analysis.rdp")
    orders, ours = compute_rdp(q, sigma, steps)
    theirs = np.array(opacus_rdp.compute_rdp(q=q, noise_multiplier=sigma, steps=steps, orders=list(orders)))
    np.testing.assert_allclose(ours, theirs, rtol=1e-6)
    eps, order = opacus_rdp.get_privacy_spent(orders=list(orders), rdp=theirs, delta=1e-5)
    assert poisson_sgm_rdp_epsilon(q, sigma, steps, 1e-5) == pytest.approx(float(eps), rel=1e-8)


@pytest.mark.parametrize("q,sigma,steps", [(0.01, 1.0, 1000), (0.004, 1.1, 3516), (0.05, 2.0, 300)])
def test_epsilon_matches_dp_accounting_rdp(q: float, sigma: float, steps: int) -> None:
    dp_accounting = pytest.importorskip("dp_accounting")
    from dp_accounting.rdp import RdpAccountant

    accountant = RdpAccountant(list(OPACUS_ORDERS))
    accountant.compose(dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma)), steps)
    assert poisson_sgm_rdp_epsilon(q, sigma, steps, 1e-5) == pytest.approx(accountant.get_epsilon(1e-5), rel=1e-6)


def test_spec_rdp_value() -> None:
    assert poisson_sgm_rdp_epsilon(0.01, 1.0, 1000, 1e-5) == pytest.approx(2.101, abs=1e-3)


def test_conversions_follow_their_formulas() -> None:
    orders = np.array([2.0, 4.0, 16.0])
    rdp = np.array([0.5, 1.0, 3.0])
    delta = 1e-5
    classic = min(r - math.log(delta) / (a - 1) for a, r in zip(orders, rdp))
    improved = min(
        r - (math.log(delta) + math.log(a)) / (a - 1) + math.log((a - 1) / a) for a, r in zip(orders, rdp)
    )
    assert rdp_to_epsilon(orders, rdp, delta, "classic")[0] == pytest.approx(classic)
    assert rdp_to_epsilon(orders, rdp, delta, "improved")[0] == pytest.approx(improved)
    assert improved < classic


def test_tf_privacy_orders_and_classic_conversion_are_selectable() -> None:
    tf = poisson_sgm_rdp_epsilon(0.01, 1.0, 1000, 1e-5, orders="tf_privacy", conversion="classic")
    opacus = poisson_sgm_rdp_epsilon(0.01, 1.0, 1000, 1e-5)
    assert tf > opacus > 1.8282  # both RDP values sit above the exact PLD epsilon


def test_q_one_is_the_gaussian_rdp() -> None:
    assert per_step_rdp(1.0, 2.0, 5.0) == pytest.approx(5.0 / 8.0)


@pytest.mark.parametrize(
    "call,match",
    [
        (lambda: per_step_rdp(0.1, 1.0, 1.0), "order"),
        (lambda: compute_rdp(0.1, 1.0, 10, "nope"), "order set"),
        (lambda: rdp_to_epsilon(np.array([2.0]), np.array([1.0]), 1e-5, "fancy"), "conversion"),  # type: ignore[arg-type]
        (lambda: compute_rdp(0.1, 0.0, 10), "sigma"),
    ],
)
def test_bad_input(call, match: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ParameterError, match=match):
        call()
