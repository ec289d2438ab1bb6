"""Fixed-size subsets drawn per step without replacement: the replace-one RDP bound (Wang,
Balle & Kasiviswanathan 2019, Thm 9) against dp_accounting's implementation (Thm 27, which the
minimum in Thm 9 matches for the Gaussian) and against a Monte Carlo of the real mechanism."""

from __future__ import annotations

import math

import dp_accounting
import numpy as np
import pytest
from dp_accounting import rdp
from scipy.stats import norm

from dpcheck.privacy.fixed_subsets import WOR_ORDERS, wor_rdp
from dpcheck.privacy.rdp import rdp_to_delta, rdp_to_epsilon


def dp_accounting_epsilon(n: int, b: int, sigma: float, steps: int, delta: float) -> float:
    """dp_accounting's RDP accountant under the replace-one relation; its noise multiplier is
    relative to the replace-one sensitivity 2C, so sigma/2."""
    accountant = rdp.RdpAccountant(orders=[float(a) for a in WOR_ORDERS],
                                   neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_ONE)
    accountant.compose(dp_accounting.SelfComposedDpEvent(
        dp_accounting.SampledWithoutReplacementDpEvent(n, b, dp_accounting.GaussianDpEvent(sigma / 2.0)), steps))
    return accountant.get_epsilon(delta)


@pytest.mark.parametrize("n, b, sigma, steps", [
    (60000, 256, 1.1, 3516),
    (1000, 1000, 2.0, 10),
    pytest.param(50000, 250, 1.0, 1600, marks=pytest.mark.slow),
    pytest.param(60000, 64, 0.8, 10000, marks=pytest.mark.slow),
    pytest.param(10**6, 1, 1.0, 10**8, marks=pytest.mark.slow),
])
def test_matches_dp_accounting(n: int, b: int, sigma: float, steps: int) -> None:
    orders, values = wor_rdp(b / n, sigma, steps)
    ours = rdp_to_epsilon(orders, values, 1e-5)[0]
    assert ours == pytest.approx(dp_accounting_epsilon(n, b, sigma, steps, 1e-5), rel=1e-9)


def test_one_step_monte_carlo_stays_below_the_bound() -> None:
    """N = 20, B = 5, sigma = 1: the real one-step mechanism on the replace-one pair x = +C,
    x' = -C (others 0) releases (1 - g) N(0, s^2) + g N(+-C, s^2); the exact loss of that pair
    gives delta(eps) by Monte Carlo, which the bound must not fall below."""
    rng = np.random.default_rng(7)
    n, b, sigma, draws = 20, 5, 1.0, 400_000
    chosen = np.array([rng.choice(n, b, replace=False) for _ in range(2000)])
    gamma = float(np.mean(np.any(chosen == 0, axis=1)))
    assert gamma == pytest.approx(b / n, abs=0.03)
    gamma = b / n
    inside = rng.random(draws) < gamma
    y = np.where(inside, 1.0, 0.0) + sigma * rng.standard_normal(draws)

    def log_density(x: np.ndarray, sign: float) -> np.ndarray:
        return np.logaddexp(math.log1p(-gamma) + norm.logpdf(x, scale=sigma),
                            math.log(gamma) + norm.logpdf(x, loc=sign, scale=sigma))

    losses = log_density(y, 1.0) - log_density(y, -1.0)
    orders, values = wor_rdp(gamma, sigma, 1)
    for eps in (0.0, 0.5, 1.0):
        terms = np.maximum(-np.expm1(eps - losses), 0.0)
        mean, se = terms.mean(), terms.std(ddof=1) / math.sqrt(draws)
        assert mean <= rdp_to_delta(orders, values, eps)[0] + 4 * se
