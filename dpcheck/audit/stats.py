"""Error counts of a threshold test, Clopper–Pearson intervals and the empirical privacy bounds.

Convention (docs/theory.md#audit-clopper-pearson; Jagielski et al. 2020 / Nasr et al. 2021): the
upper confidence bounds α_r, β_r of the false-positive and false-negative rates are two-sided
Clopper–Pearson bounds at the given confidence, so both hold together with probability >= the
confidence.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy.stats import beta as beta_dist

from dpcheck.errors import ParameterError


def check_confidence(confidence: float) -> None:
    """Reject a confidence level outside (0, 1)."""
    if not (0.0 < confidence < 1.0):
        raise ParameterError(f"--confidence must lie in (0, 1), got {confidence!r}")


def clopper_pearson(
    errors: NDArray[np.int64], trials: int, confidence: float
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Two-sided Clopper–Pearson interval (lower, upper) for ``errors`` out of ``trials``."""
    check_confidence(confidence)
    k = np.asarray(errors, dtype=np.float64)
    tail = (1.0 - confidence) / 2.0
    with np.errstate(invalid="ignore"):
        lower = np.where(k > 0, beta_dist.ppf(tail, k, trials - k + 1), 0.0)
        upper = np.where(k < trials, beta_dist.ppf(1.0 - tail, k + 1, trials - k), 1.0)
    return lower, upper


def epsilon_lower_bound(
    alpha_upper: NDArray[np.float64], beta_upper: NDArray[np.float64], delta: float
) -> NDArray[np.float64]:
    """ε_L = max{log((1−δ−α_r)/β_r), log((1−δ−β_r)/α_r), 0}.

    A term whose numerator is <= 0 is skipped."""
    a = np.asarray(alpha_upper, dtype=np.float64)
    b = np.asarray(beta_upper, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        one = np.where(1.0 - delta - a > 0, np.log((1.0 - delta - a) / b), 0.0)
        two = np.where(1.0 - delta - b > 0, np.log((1.0 - delta - b) / a), 0.0)
    return np.maximum(np.maximum(one, two), 0.0)


def delta_lower_bound(
    alpha_upper: NDArray[np.float64], beta_upper: NDArray[np.float64], epsilon: float
) -> NDArray[np.float64]:
    """The smallest δ the point (α_r, β_r) allows at ε: max{1−β_r−e^ε α_r, 1−α_r−e^ε β_r, 0}."""
    a = np.asarray(alpha_upper, dtype=np.float64)
    b = np.asarray(beta_upper, dtype=np.float64)
    scale = np.exp(epsilon)
    return np.maximum(np.maximum(1.0 - b - scale * a, 1.0 - a - scale * b), 0.0)


@dataclass(frozen=True)
class ThresholdErrors:
    """Errors of the tests "say D′ iff score >= τ" for each threshold τ, with their CP bounds."""

    thresholds: NDArray[np.float64]
    false_positives: NDArray[np.int64]
    false_negatives: NDArray[np.int64]
    trials_null: int
    trials_alt: int
    alpha_lower: NDArray[np.float64]
    alpha_upper: NDArray[np.float64]
    beta_lower: NDArray[np.float64]
    beta_upper: NDArray[np.float64]

    @property
    def fpr(self) -> NDArray[np.float64]:
        return self.false_positives / self.trials_null

    @property
    def fnr(self) -> NDArray[np.float64]:
        return self.false_negatives / self.trials_alt


def threshold_errors(
    null_scores: NDArray[np.float64],
    alt_scores: NDArray[np.float64],
    thresholds: NDArray[np.float64],
    confidence: float,
) -> ThresholdErrors:
    """Count, for each τ, D trials with score >= τ (false positives) and D′ trials below τ."""
    null_sorted = np.sort(null_scores)
    alt_sorted = np.sort(alt_scores)
    fp = len(null_sorted) - np.searchsorted(null_sorted, thresholds, side="left")
    fn = np.searchsorted(alt_sorted, thresholds, side="left")
    a_lo, a_hi = clopper_pearson(fp, len(null_sorted), confidence)
    b_lo, b_hi = clopper_pearson(fn, len(alt_sorted), confidence)
    return ThresholdErrors(
        thresholds, fp, fn, len(null_sorted), len(alt_sorted), a_lo, a_hi, b_lo, b_hi
    )


def sweep_thresholds(
    scores: NDArray[np.float64], max_count: int | None = None
) -> NDArray[np.float64]:
    """Candidate thresholds: every distinct score (or ``max_count`` quantiles of them) and +∞."""
    distinct = np.unique(scores)
    if max_count is not None and len(distinct) > max_count:
        distinct = np.unique(np.quantile(distinct, np.linspace(0.0, 1.0, max_count)))
    return np.append(distinct, np.inf)
