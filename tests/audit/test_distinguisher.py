"""The likelihood-ratio score against densities enumerated from the mechanism's definition."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.stats import multivariate_normal

from dpcheck.audit.distinguisher import LikelihoodRatioDistinguisher
from dpcheck.audit.releases import ReleaseStats
from dpcheck.audit.setting import AuditSetting


def _enumerated_density(setting: AuditSetting, with_canary: bool, x: np.ndarray) -> float:
    """Sum over every Poisson batch (subset of records) of its probability times the Gaussian
    density of the release it produces: independent of the mixture bookkeeping under test."""
    size = setting.N + int(with_canary)
    grads = [setting.clip] * setting.N + [-setting.clip] * int(with_canary)
    total = 0.0
    for mask in itertools.product([0, 1], repeat=size):
        prob = np.prod([setting.q if m else 1 - setting.q for m in mask])
        batch = sum(mask)
        if setting.mechanism == "SGM":
            divisor = 1.0
        elif setting.mechanism == "ASGM":
            divisor = max(batch, 1)
        elif setting.mechanism == "EASGM":
            divisor = size * setting.q
        else:
            divisor = int(size * setting.q)
        mean = np.zeros(setting.dim)
        mean[0] = sum(g for g, m in zip(grads, mask) if m) / divisor
        std = setting.sigma * setting.clip / divisor
        total += prob * multivariate_normal(mean, std**2 * np.eye(setting.dim)).pdf(x)
    return total


@pytest.mark.parametrize("mechanism,n_data", [("SGM", 3), ("ASGM", 3), ("EASGM", 3), ("FEASGM", 3)])
def test_score_is_the_exact_log_likelihood_ratio(mechanism: str, n_data: int) -> None:
    setting = AuditSetting(mechanism, n_data, 0.5, 1.5, 0.7, 3)
    rng = np.random.default_rng(11)
    releases = rng.normal(scale=0.8, size=(6, setting.dim))
    stats = ReleaseStats(releases[:, 0], np.sum(releases**2, axis=1))
    scores = LikelihoodRatioDistinguisher(setting).score(stats)
    for x, score in zip(releases, scores):
        expected = np.log(_enumerated_density(setting, True, x)) - np.log(
            _enumerated_density(setting, False, x)
        )
        assert score == pytest.approx(expected, rel=1e-9, abs=1e-9)


def test_large_n_is_scored_in_blocks_that_agree_with_one_trial_at_a_time() -> None:
    # N = 200,000 keeps ~10^4 mixture components, so 500 trials need several blocks.
    setting = AuditSetting("EASGM", 200_000, 0.5, 1.0, 1.0, 5)
    rng = np.random.default_rng(2)
    releases = rng.normal(loc=[1.0, 0, 0, 0, 0], scale=1e-5, size=(500, setting.dim))
    stats = ReleaseStats(releases[:, 0], np.sum(releases**2, axis=1))
    distinguisher = LikelihoodRatioDistinguisher(setting)
    scores = distinguisher.score(stats)
    one_by_one = [
        distinguisher.score(ReleaseStats(stats.first[i : i + 1], stats.sq_norm[i : i + 1]))[0]
        for i in range(0, 500, 37)
    ]
    assert np.all(np.isfinite(scores))
    assert np.allclose(scores[::37], one_by_one, rtol=1e-12, atol=1e-9)
