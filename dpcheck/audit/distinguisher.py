"""The optimal likelihood-ratio distinguisher for the worst-case pair, batch size not revealed.

Under the worst-case pair (docs/theory.md#audit-setting) each world's release is a mixture, over
the realized batch, of isotropic Gaussians N(m·e₁, v² I_n):

* D (size N): batch k ~ Bin(N, q); mean k·C/d_N(k), std σC/d_N(k);
* D′ (size N+1): k ~ Bin(N, q), canary j ~ Bern(q); mean (k−j)·C/d_{N+1}(k+j),
  std σC/d_{N+1}(k+j);

with d the mechanism's divisor. A component's log density at x is, up to a constant common to
all, ``−n·log v − (‖x‖² − 2m·x₁ + m²)/(2v²)``, so the exact log-likelihood ratio
log p_D′(x)/p_D(x) is a function of (x₁, ‖x‖²) only. By Neyman–Pearson, thresholding it is the
most powerful test at every level; a larger score means "D′".
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy.special import logsumexp
from scipy.stats import binom

from dpcheck.audit.releases import ReleaseStats
from dpcheck.audit.setting import AuditSetting

NEGLIGIBLE_LOG_WEIGHT = 60.0
"""Batch sizes whose binomial weight is below e⁻⁶⁰ of the mode are left out of the mixtures."""
SCORE_ELEMENTS = 1 << 22
"""Trial × component log densities held at once while scoring (32 MiB of float64)."""


@dataclass(frozen=True)
class GaussianMixture:
    """Components N(mean·e₁, std² I_n) with log weights."""

    log_weight: NDArray[np.float64]
    mean: NDArray[np.float64]
    std: NDArray[np.float64]

    def log_density(self, stats: ReleaseStats, dim: int) -> NDArray[np.float64]:
        """log density (without the common −n/2·log 2π) at every trial's release."""
        first = stats.first[:, None]
        sq_norm = stats.sq_norm[:, None]
        quad = sq_norm - 2.0 * self.mean * first + self.mean**2
        per_component = self.log_weight - dim * np.log(self.std) - quad / (2.0 * self.std**2)
        return logsumexp(per_component, axis=1)


def _batch_log_weights(setting: AuditSetting) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    records = np.arange(setting.N + 1)
    log_pmf = binom.logpmf(records, setting.N, setting.q)
    keep = log_pmf > log_pmf.max() - NEGLIGIBLE_LOG_WEIGHT
    return records[keep], log_pmf[keep]


def world_mixtures(setting: AuditSetting) -> tuple[GaussianMixture, GaussianMixture]:
    """The release laws (D, D′) of the worst-case pair as Gaussian mixtures on the e₁ axis."""
    records, log_pmf = _batch_log_weights(setting)
    noise = setting.sigma * setting.clip
    div_d = setting.divisors(setting.N)[records]
    d_world = GaussianMixture(log_pmf, records * setting.clip / div_d, noise / div_d)

    canary = np.repeat([0, 1], len(records))
    records2 = np.tile(records, 2)
    with np.errstate(divide="ignore"):
        log_canary = np.where(canary == 1, np.log(setting.q), np.log1p(-setting.q))
    div_d1 = setting.divisors(setting.N + 1)[records2 + canary]
    d_prime_world = GaussianMixture(
        np.tile(log_pmf, 2) + log_canary,
        (records2 - canary) * setting.clip / div_d1,
        noise / div_d1,
    )
    return d_world, d_prime_world


class LikelihoodRatioDistinguisher:
    """Scores releases by the exact log-likelihood ratio log p_D′/p_D of the worst-case pair."""

    def __init__(self, setting: AuditSetting) -> None:
        self.dim = setting.dim
        self.d_world, self.d_prime_world = world_mixtures(setting)

    def score(self, stats: ReleaseStats) -> NDArray[np.float64]:
        """One score per trial, computed in blocks of trials to bound the (trials × components)
        memory, which grows with N."""
        components = max(len(self.d_world.mean), len(self.d_prime_world.mean))
        step = max(1, SCORE_ELEMENTS // components)
        blocks = []
        for start in range(0, len(stats), step):
            rows = slice(start, start + step)
            part = ReleaseStats(stats.first[rows], stats.sq_norm[rows])
            blocks.append(
                self.d_prime_world.log_density(part, self.dim)
                - self.d_world.log_density(part, self.dim)
            )
        return np.concatenate(blocks) if blocks else np.empty(0)
