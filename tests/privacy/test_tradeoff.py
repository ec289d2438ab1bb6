"""Trade-off curve utilities: the (eps, delta) curve, curve <-> profile conversions, inverse,
lower convex envelope (against scipy's ConvexHull), symmetrisation (against the closed
piecewise C_q) and the Neyman-Pearson curve of a LossPair."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial import ConvexHull

from dpcheck.privacy.gdp import GaussianShiftPair, TrivialPair, gaussian_tradeoff, gdp_delta
from dpcheck.privacy.sgm import poisson_sgm_tradeoff
from dpcheck.privacy.tradeoff import (
    convex_minorant,
    curve_from_profile,
    eps_delta_tradeoff,
    hockey_stick,
    inverse,
    is_valid_tradeoff,
    loss_pair_tradeoff,
    lower_convex_envelope,
    profile_from_curve,
    symmetrize,
)

ALPHAS = np.array([0.0, 1e-6, 1e-3, 0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.99, 1.0])


class _BareShift:
    """A Gaussian shift seen only through alpha/beta (no closed-form hockey stick)."""

    def __init__(self, mu: float) -> None:
        self._pair = GaussianShiftPair(mu)

    def alpha(self, tau):  # type: ignore[no-untyped-def]
        return self._pair.alpha(tau)

    def beta(self, tau):  # type: ignore[no-untyped-def]
        return self._pair.beta(tau)

    def reversed(self):  # type: ignore[no-untyped-def]
        return self


def test_eps_delta_curve_pieces() -> None:
    eps, delta = 1.0, 0.01
    kink = (1 - delta) / (1 + np.exp(eps))
    assert eps_delta_tradeoff(0.0, eps, delta) == pytest.approx(1 - delta)
    assert eps_delta_tradeoff(kink / 2, eps, delta) == pytest.approx(1 - delta - np.exp(eps) * kink / 2)
    assert eps_delta_tradeoff(0.9, eps, delta) == pytest.approx(np.exp(-eps) * 0.09)
    assert eps_delta_tradeoff(1.0, eps, delta) == 0.0


def test_profile_of_the_eps_delta_curve_is_its_delta() -> None:
    assert profile_from_curve(lambda a: eps_delta_tradeoff(a, 1.0, 0.02), 1.0) == pytest.approx(0.02)


def test_profile_of_gaussian_curve_approaches_gdp_delta_from_below() -> None:
    eps = np.array([0.0, 0.5, 1.0, 2.0])
    grid_value = profile_from_curve(lambda a: gaussian_tradeoff(a, 1.0), eps)
    exact = gdp_delta(eps, 1.0)
    assert np.all(grid_value <= exact + 1e-15)
    np.testing.assert_allclose(grid_value, exact, rtol=2e-3)


def test_curve_from_profile_recovers_gaussian_curve_from_below() -> None:
    eps = np.linspace(-6, 6, 2001)
    recovered = curve_from_profile(ALPHAS, eps, gdp_delta(eps, 1.0))
    exact = gaussian_tradeoff(ALPHAS, 1.0)
    assert np.all(recovered <= exact + 1e-12)
    np.testing.assert_allclose(recovered, exact, atol=2e-3)


def test_inverse_of_symmetric_curve_is_itself_and_inverts_asymmetric_ones() -> None:
    np.testing.assert_allclose(inverse(lambda a: gaussian_tradeoff(a, 1.5), ALPHAS),
                               gaussian_tradeoff(ALPHAS, 1.5), atol=1e-12)

    def f_q(a):  # type: ignore[no-untyped-def]
        return 0.1 * gaussian_tradeoff(a, 2.0) + 0.9 * (1 - a)

    beta = np.array([0.05, 0.3, 0.8])
    np.testing.assert_allclose(f_q(inverse(f_q, beta)), beta, atol=1e-12)


def test_inverse_of_a_curve_reaching_zero_early() -> None:
    # f_{log 3, 0} is positive until alpha = 1; f_{0, 1/2} = max(0, 1/2 - alpha) hits 0 at 1/2.
    assert inverse(lambda a: eps_delta_tradeoff(a, np.log(3.0), 0.0), 0.0) == pytest.approx(1.0)
    assert inverse(lambda a: eps_delta_tradeoff(a, 0.0, 0.5), 0.0) == pytest.approx(0.5)


def test_lower_convex_envelope_matches_convex_hull() -> None:
    rng = np.random.default_rng(11)
    x = np.sort(rng.uniform(0, 1, 60))
    y = rng.uniform(0, 1, 60)
    hx, hy = lower_convex_envelope(x, y)
    hull = ConvexHull(np.column_stack([x, y]))
    expected = set()
    for simplex, eq in zip(hull.simplices, hull.equations):
        if eq[1] < 0:  # outward normal points down: a lower facet
            expected.update(simplex.tolist())
    expected |= {int(np.argmin(x)), int(np.argmax(x))}
    got = {int(np.flatnonzero(x == v)[0]) for v in hx}
    assert got == expected
    assert np.all(convex_minorant(x, y) <= y + 1e-15)


def test_envelope_drops_a_point_above_the_chord() -> None:
    hx, hy = lower_convex_envelope([0.0, 0.5, 1.0], [1.0, 0.9, 0.0])
    np.testing.assert_array_equal(hx, [0.0, 1.0])


def test_symmetrize_matches_closed_form_subsampled_curve() -> None:
    q, mu = 0.05, 1.0

    def f_q(a):  # type: ignore[no-untyped-def]
        return q * gaussian_tradeoff(a, mu) + (1 - q) * (1 - a)

    np.testing.assert_allclose(symmetrize(f_q, ALPHAS), poisson_sgm_tradeoff(ALPHAS, q, 1 / mu), atol=1e-9)


def test_loss_pair_tradeoff_is_the_neyman_pearson_curve() -> None:
    np.testing.assert_allclose(loss_pair_tradeoff(GaussianShiftPair(0.7), ALPHAS),
                               gaussian_tradeoff(ALPHAS, 0.7), atol=1e-12)
    np.testing.assert_allclose(loss_pair_tradeoff(TrivialPair(), ALPHAS), 1 - ALPHAS, atol=1e-12)


def test_generic_hockey_stick_matches_closed_form() -> None:
    eps = np.array([-1.0, 0.0, 0.5, 2.0])
    np.testing.assert_allclose(hockey_stick(_BareShift(1.2), eps), gdp_delta(eps, 1.2), rtol=1e-9)


def test_validity_check_accepts_curves_and_rejects_non_curves() -> None:
    a = np.linspace(0, 1, 201)
    assert is_valid_tradeoff(a, gaussian_tradeoff(a, 2.0))
    assert is_valid_tradeoff(a, 1 - a)
    assert not is_valid_tradeoff(a, np.minimum(1.0, 1.2 - a))  # above 1 - alpha
    assert not is_valid_tradeoff(a, 1 - a**2)  # concave
    assert not is_valid_tradeoff(a, 0.5 * np.ones_like(a))  # not <= 1 - alpha at alpha = 1
    bumped = gaussian_tradeoff(a, 2.0).copy()
    bumped[100] += 0.01
    assert not is_valid_tradeoff(a, bumped)
