"""Once-per-epoch batches (docs/theory.md#shuffle-deterministic): the deterministic-batch guarantee
sqrt(E)/sigma-GDP and the max-statistic witness, checked against Monte Carlo runs of the real
mechanism (noisy batch sums of clipped gradients over random permutations), the GDP closed form, an
independent cube-test evaluation (Chua et al.) and dp_accounting's PLD composition."""

from __future__ import annotations

import math

import numpy as np
import pytest
from dp_accounting.pld import pld_pmf, privacy_loss_distribution
from scipy.special import log_ndtr
from scipy.stats import norm

from dpcheck.bounds.profiles import GdpProfile
from dpcheck.errors import ParameterError
from dpcheck.privacy.fixed_batches import (
    FIXED_SIZE_SHIFTS,
    ZERO_OTHERS_SHIFTS,
    MaxStatisticPair,
    deterministic_mu,
    max_statistic_witnesses,
)

RNG_SEED = 20240611


def batch_statistics(n: int, b: int, sigma: float, epochs: int, draws: int, *, present: bool, shuffle: bool,
                     drop_last: bool, rng: np.random.Generator) -> np.ndarray:
    """``draws`` runs of the fixed-size mechanism, one noisy batch sum per batch and epoch, the
    other N - 1 clipped gradients at -C, the changed example at +C (``present``) or 0 (zero-out),
    C = 1. Returned as the adversary's statistics (sum + batch size)/sigma, shape (draws, E, M)."""
    sizes = [b] * (n // b) + ([] if drop_last or n % b == 0 else [n % b])
    m = len(sizes)
    bounds = np.cumsum([0, *sizes])
    out = np.empty((draws, epochs, m))
    for e in range(epochs):
        position = rng.integers(0, n, size=draws) if shuffle else np.zeros(draws, dtype=int)
        batch = np.searchsorted(bounds, position, side="right") - 1  # m when dropped
        shift = np.zeros((draws, m))
        kept = batch < m
        shift[np.flatnonzero(kept), batch[kept]] = 2.0 if present else 1.0
        out[:, e, :] = shift / sigma + rng.standard_normal((draws, m))
    return out


def max_log_density(y: np.ndarray, shift: float, m: int, miss: float) -> np.ndarray:
    """log density of the largest of m unit normals, one shifted by ``shift`` (absent with
    probability ``miss``): written out here, independently of the module."""
    with np.errstate(divide="ignore"):
        one = norm.logpdf(y - shift) + (m - 1) * log_ndtr(y)
        rest = (np.log(m - 1) + log_ndtr(y - shift) + norm.logpdf(y) + (m - 2) * log_ndtr(y)) if m > 1 \
            else np.full_like(y, -np.inf)
        present = np.logaddexp(one, rest)
        if miss == 0.0:
            return present
        absent = np.log(m) + norm.logpdf(y) + (m - 1) * log_ndtr(y)
        return np.logaddexp(np.log1p(-miss) + present, np.log(miss) + absent)


def mc_delta(losses: np.ndarray, eps: float) -> tuple[float, float]:
    """E_Q[(1 - e^(eps - L))+] and its standard error."""
    terms = np.maximum(-np.expm1(eps - losses), 0.0)
    return float(terms.mean()), float(terms.std(ddof=1) / math.sqrt(terms.size))


def test_gdp_conversion_matches_the_spec_vectors() -> None:
    """docs/theory.md#gaussian-dp: delta_1(1) = 0.1269367375, eps(1e-5; mu = 1) = 4.377178096."""
    profile = GdpProfile(deterministic_mu(1, 1.0))
    assert float(profile.delta(1.0)[0]) == pytest.approx(0.1269367375, rel=1e-9)
    assert profile.epsilon(1e-5) == pytest.approx(4.377178096, rel=1e-9)
    assert deterministic_mu(10, 1.0) == pytest.approx(math.sqrt(10))
    assert GdpProfile(math.sqrt(10)).epsilon(1e-5) == pytest.approx(17.85658683, rel=1e-7)  # docs/theory.md#shuffle-deterministic


@pytest.mark.parametrize("n, b, sigma, epochs, drop_last", [
    (60, 3, 1.0, 1, False), (61, 3, 0.8, 3, False), (61, 3, 0.8, 3, True), (40, 4, 2.0, 6, True),
])
def test_sequential_batches_are_exactly_the_gdp_bound(n: int, b: int, sigma: float, epochs: int,
                                                      drop_last: bool) -> None:
    """Fixed (sequential) batches: the adversary knows the example's batch, so the likelihood
    ratio of its E statistics is exactly the Gaussian shift sqrt(E)/sigma (a last partial or
    dropped batch changes nothing: the example sits in the first one). Monte Carlo delta of the
    real mechanism agrees with the GDP delta within 4 SE, at several eps."""
    rng = np.random.default_rng(RNG_SEED)
    stats = batch_statistics(n, b, sigma, epochs, 400_000, present=True, shuffle=False, drop_last=drop_last, rng=rng)
    x = stats[:, :, 0] - 1.0 / sigma  # the example's batch, relative to D' (shift 1/sigma there)
    mu1 = 1.0 / sigma
    losses = (mu1 * x - mu1 * mu1 / 2.0).sum(axis=1)
    mu = deterministic_mu(epochs, sigma)
    for eps in (0.0, 0.5, 1.5):
        mean, se = mc_delta(losses, eps)
        assert abs(mean - float(GdpProfile(mu).delta(eps)[0])) < 4 * se + 1e-4


@pytest.mark.parametrize("n, b, sigma, epochs, drop_last", [
    (60, 3, 1.0, 1, False), (61, 3, 0.7, 2, False), (61, 3, 0.7, 2, True), (30, 5, 0.5, 3, True),
])
def test_shuffled_runs_never_beat_the_guarantee_and_match_the_witness(n: int, b: int, sigma: float, epochs: int,
                                                                       drop_last: bool) -> None:
    """Shuffled fixed-size batches, others at -C: the exact loss of the per-epoch largest
    statistic, summed over epochs, gives the witness's delta by Monte Carlo (within 4 SE; the
    witness is an optimistic PLD, so it may sit slightly below), and that delta never exceeds
    the sqrt(E)/sigma-GDP guarantee."""
    rng = np.random.default_rng(RNG_SEED + n + epochs)
    m = n // b if drop_last or n % b == 0 else n // b + 1
    miss = (n - (n // b) * b) / n if drop_last else 0.0
    stats = batch_statistics(n, b, sigma, epochs, 300_000, present=True, shuffle=True, drop_last=drop_last, rng=rng)
    y = stats.max(axis=2)
    losses = (max_log_density(y, 2.0 / sigma, m, miss) - max_log_density(y, 1.0 / sigma, m, miss)).sum(axis=1)
    pair = MaxStatisticPair(m, sigma, *FIXED_SIZE_SHIFTS, miss=miss)
    _, witness = max_statistic_witnesses(pair, epochs)
    guarantee = GdpProfile(deterministic_mu(epochs, sigma))
    for eps in (0.0, 0.5, 1.0):
        mean, se = mc_delta(losses, eps)
        ours = float(witness.pld.remove.delta(eps))
        assert ours <= mean + 4 * se + 1e-4
        assert ours >= mean - 4 * se - 2e-3
        assert mean <= float(guarantee.delta(eps)[0]) + 4 * se


def test_one_epoch_witness_is_the_cube_bound_of_chua_et_al() -> None:
    """One epoch of the fixed-size pair: delta(eps) = max over caps C of
    P_2(max > C) - e^eps P_1(max > C) (the cube sets of Chua et al.; the loss is monotone in
    the max, so the best cube is the likelihood-ratio test). Setting of their example:
    sigma = 0.35, 1000 steps per epoch."""
    rounds, sigma = 1000, 0.35
    single, _ = max_statistic_witnesses(MaxStatisticPair(rounds, sigma, *FIXED_SIZE_SHIFTS), 1)
    caps = np.linspace(0.0, 20.0, 400_001)

    def out_mass(mean: float) -> np.ndarray:
        return -np.expm1(log_ndtr(caps - mean / sigma) + (rounds - 1) * log_ndtr(caps))

    for eps in (0.5, 1.0, 2.0, 4.0, 8.0):
        cube = float(np.max(out_mass(2.0) - math.exp(eps) * out_mass(1.0)))
        assert float(single.pld.remove.delta(eps)) == pytest.approx(cube, rel=2e-3, abs=1e-9)


def test_epoch_composition_matches_dp_accounting() -> None:
    """The E-fold composition of one epoch's optimistic PLD equals dp_accounting's composition
    of the same atoms (its own FFT code), within the discretisation step."""
    pair = MaxStatisticPair(200, 1.0, *FIXED_SIZE_SHIFTS)
    single, composed = max_statistic_witnesses(pair, 8, interval=1e-3)
    side = single.pld.remove
    pmf = {int(k): float(p) for k, p in zip(np.arange(side.offset, side.offset + side.probs.size), side.probs) if p > 0}
    theirs = privacy_loss_distribution.PrivacyLossDistribution(
        pld_pmf.SparsePLDPmf(pmf, side.interval, side.infinity_mass, pessimistic_estimate=False)).self_compose(8)
    for eps in (0.5, 2.0, 5.0):
        assert float(composed.pld.remove.delta(eps)) == pytest.approx(theirs.get_delta_for_epsilon(eps), rel=2e-3)


def test_zero_others_pair_reproduces_paper_b_max_test() -> None:
    """With the other gradients at 0 the one-epoch witness curve is f_sub of Ertan & van Dijk
    (docs/theory.md#shuffle-witness reference value f_sub(0.05; M = 5000, sigma = 0.2) =
    0.21794)."""
    single, _ = max_statistic_witnesses(MaxStatisticPair(5000, 0.2, *ZERO_OTHERS_SHIFTS), 1)
    assert float(single.pld.tradeoff(0.05)) == pytest.approx(0.21794, abs=2e-3)


def test_witness_never_exceeds_the_guarantee_over_a_grid() -> None:
    """Witness <= truth <= guarantee in delta, over sigma, M, E and the miss probability."""
    for rounds, sigma, epochs, miss in ((2, 0.5, 3, 0.0), (50, 1.0, 10, 0.01), (1000, 0.3, 2, 0.0),
                                        (10_000, 2.0, 30, 0.0), (7, 0.1, 1, 0.2)):
        _, witness = max_statistic_witnesses(MaxStatisticPair(rounds, sigma, *FIXED_SIZE_SHIFTS, miss=miss), epochs)
        guarantee = GdpProfile(deterministic_mu(epochs, sigma))
        eps = np.linspace(0.0, 20.0, 41)
        assert np.all(np.asarray(witness.pld.delta(eps)) <= np.asarray(guarantee.delta(eps)) + 1e-9)


def test_the_pair_refuses_nonsense_parameters() -> None:
    with pytest.raises(ParameterError, match="shifts"):
        MaxStatisticPair(10, 1.0, 2.0, 1.0)
    with pytest.raises(ParameterError, match="miss"):
        MaxStatisticPair(10, 1.0, 1.0, 2.0, miss=1.0)
