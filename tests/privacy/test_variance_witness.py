"""VarianceWitness (docs/theory.md#variance-witness, docs/theory.md#divisor-dependence): reference
numbers, conjugate check, Monte Carlo."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import chi2

from dpcheck.errors import ParameterError
from dpcheck.privacy.labels import Kind, Label
from dpcheck.privacy.tradeoff import is_valid_tradeoff
from dpcheck.privacy.variance_witness import VarianceWitness

MNIST = VarianceWitness(1_485_217 * 3516, 60000 / 60001, 1 / 60001)


def test_mnist_like_numbers() -> None:
    forward, backward = MNIST.directional_tradeoffs(0.05)
    assert forward[0] == pytest.approx(0.4767, abs=5e-5)
    assert MNIST.tradeoff(0.05)[0] == min(forward[0], backward[0])
    assert MNIST.mu_eq == pytest.approx(1.703, abs=5e-4)
    assert MNIST.delta(1.0)[0] == pytest.approx(0.400, abs=3e-3)


@pytest.mark.parametrize(
    ("coordinates", "s", "expected", "rel"),
    [
        (26010 * 3516, 60000 / 60001, 0.9221, 1e-4),  # docs/theory.md#variance-witness, n = 26010
        (100, 0.8, 0.06863, 1e-4),  # audit setting N = 4, n = 100, T = 1
        (26010, 62 / 63, 0.0224, 5e-3),  # docs/theory.md#divisor-dependence, Opacus N = 1007
        (26010, 63 / 59, 2.6e-39, 2e-2),  # Opacus N = 1008 (s > 1)
    ],
)
def test_forward_reference_values(coordinates: int, s: float, expected: float, rel: float) -> None:
    forward, _ = VarianceWitness(coordinates, s).directional_tradeoffs(0.05)
    assert forward[0] == pytest.approx(expected, rel=rel)


def test_s_below_one_membership_revealed() -> None:
    """docs/theory.md#divisor-dependence: N = 999, q = 1/100 gives s = 0.9 and beta(0.05) ~ 1e-118
    at n = 26010."""
    forward, _ = VarianceWitness(26010, 0.9).directional_tradeoffs(0.05)
    assert 1e-119 < forward[0] < 1e-117


def test_directions_are_swapped_by_inverting_s() -> None:
    a = np.array([1e-3, 0.05, 0.5])
    f, b = VarianceWitness(300, 0.9).directional_tradeoffs(a)
    b2, f2 = VarianceWitness(300, 1 / 0.9).directional_tradeoffs(a)
    np.testing.assert_allclose(f, f2, rtol=1e-9)
    np.testing.assert_allclose(b, b2, rtol=1e-9)


@pytest.mark.parametrize("eps", [0.0, 0.5, 1.0, 2.0])
def test_delta_matches_conjugate_of_curve(eps: float) -> None:
    """delta(eps) = sup_alpha (1 - f(alpha) - e^eps alpha) in each direction (Dong, Roth, Su 2022,
    Prop. 2.12)."""
    witness = VarianceWitness(100, 0.8)
    grid = np.concatenate([np.logspace(-12, -1, 4000), np.linspace(0.1, 1, 4000)])
    forward, backward = witness.directional_tradeoffs(grid)
    conj = max(np.max(1 - f - np.exp(eps) * grid) for f in (forward, backward))
    assert witness.delta(eps)[0] == pytest.approx(conj, rel=1e-4, abs=1e-12)


def test_epsilon_inverts_delta_and_large_dof() -> None:
    eps = MNIST.epsilon(1e-5)
    assert MNIST.delta(eps)[0] == pytest.approx(1e-5, rel=1e-6)
    huge = VarianceWitness(10**12, 1 - 1e-7, 1e-7)
    values = np.concatenate([huge.tradeoff([1e-6, 0.05, 0.5]), huge.delta([0.0, 1.0, 50.0])])
    assert np.all(np.isfinite(values))
    assert is_valid_tradeoff(np.array([0.001, 0.01, 0.05, 0.1, 0.25, 0.5]), huge.tradeoff([0.001, 0.01, 0.05, 0.1, 0.25, 0.5]))


def test_monte_carlo_norm_test() -> None:
    """Draw N(0, I_m) and N(0, s^2 I_m), reject H0 when ||x||^2 <= chi2.ppf(alpha): the empirical
    type-II error matches f at 5 standard errors."""
    m, s, alpha, draws = 40, 0.8, 0.1, 100_000
    rng = np.random.default_rng(3)
    q_norms = (s * rng.standard_normal((draws, m))) ** 2
    beta_hat = np.mean(q_norms.sum(1) > chi2.ppf(alpha, m))
    forward, _ = VarianceWitness(m, s).directional_tradeoffs(alpha)
    assert abs(beta_hat - forward[0]) < 5 * np.sqrt(forward[0] * (1 - forward[0]) / draws)


def test_bound_is_labelled_own_witness() -> None:
    bound = MNIST.bound([0.05, 0.5], epsilon=1.0, delta=1e-5)
    assert bound.label is Label.OWN and bound.kind is Kind.WITNESS
    assert bound.delta_at_epsilon == pytest.approx(MNIST.delta(1.0)[0])


def test_no_dependence_gives_trivial_curve_and_bad_input() -> None:
    np.testing.assert_allclose(VarianceWitness(10, 1.0).tradeoff([0.2]), [0.8])
    with pytest.raises(ParameterError):
        VarianceWitness(0, 0.5)
    with pytest.raises(ParameterError):
        VarianceWitness(10, -0.5)
