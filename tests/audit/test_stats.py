"""Clopper–Pearson bounds, ε_L, δ_L and threshold error counts against independent checks."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binom

from dpcheck.audit.stats import (
    clopper_pearson,
    delta_lower_bound,
    epsilon_lower_bound,
    sweep_thresholds,
    threshold_errors,
)
from dpcheck.errors import ParameterError


@pytest.mark.parametrize("k,m", [(0, 50), (3, 50), (25, 50), (50, 50), (10, 1000)])
def test_clopper_pearson_solves_the_binomial_tail_equations(k: int, m: int) -> None:
    lower, upper = clopper_pearson(np.array([k]), m, 0.95)
    # Definition: P(X <= k | upper) = 2.5% and P(X >= k | lower) = 2.5%.
    if k < m:
        assert binom.cdf(k, m, upper[0]) == pytest.approx(0.025, rel=1e-6)
    else:
        assert upper[0] == 1.0
    if k > 0:
        assert binom.sf(k - 1, m, lower[0]) == pytest.approx(0.025, rel=1e-6)
    else:
        assert lower[0] == 0.0


def test_epsilon_lower_bound_matches_math_spec_vector() -> None:
    # docs/theory.md#audit-epsilon: FP 10/1000, FN 500/1000, delta 0 -> alpha_r 0.01831, beta_r
    # 0.53145, 3.2420.
    _, a_hi = clopper_pearson(np.array([10]), 1000, 0.95)
    _, b_hi = clopper_pearson(np.array([500]), 1000, 0.95)
    assert a_hi[0] == pytest.approx(0.01831, abs=5e-5)
    assert b_hi[0] == pytest.approx(0.53145, abs=5e-5)
    assert epsilon_lower_bound(a_hi, b_hi, 0.0)[0] == pytest.approx(3.2420, abs=5e-4)


def test_epsilon_lower_bound_skips_terms_with_no_positive_numerator() -> None:
    eps = epsilon_lower_bound(np.array([0.999, 0.6]), np.array([0.2, 0.6]), 1e-5)
    # first: only log((1-d-0.2)/0.999) < 0 survives -> 0; second: both terms negative -> 0.
    assert eps.tolist() == [0.0, 0.0]


def test_delta_lower_bound_is_the_hockey_stick_of_the_point() -> None:
    a, b, eps = 0.01, 0.3, 1.0
    expected = max(1 - b - np.e * a, 1 - a - np.e * b, 0.0)
    assert delta_lower_bound(np.array([a]), np.array([b]), eps)[0] == pytest.approx(expected)


def test_threshold_errors_count_like_brute_force() -> None:
    rng = np.random.default_rng(3)
    null, alt = rng.normal(size=300), rng.normal(0.7, 1.0, size=200)
    taus = sweep_thresholds(np.concatenate([null, alt]))
    errors = threshold_errors(null, alt, taus, 0.95)
    for i in (0, 17, 250, len(taus) - 1):
        assert errors.false_positives[i] == np.sum(null >= taus[i])
        assert errors.false_negatives[i] == np.sum(alt < taus[i])
    assert errors.false_positives[-1] == 0 and errors.false_negatives[-1] == len(alt)


def test_sweep_can_be_thinned_to_quantiles() -> None:
    taus = sweep_thresholds(np.arange(10_000, dtype=float), max_count=64)
    assert len(taus) == 65 and taus[-1] == np.inf and taus[0] == 0.0


def test_confidence_outside_unit_interval_is_rejected() -> None:
    with pytest.raises(ParameterError, match="--confidence"):
        clopper_pearson(np.array([1]), 10, 1.0)
