"""From distinguisher scores to the empirical trade-off, ε_L, δ at the claimed ε and the verdict.

Choosing the threshold on the same trials that certify it would overstate the confidence (the
best of thousands of thresholds is optimistic). So trials are split: even-numbered trials pick
the threshold with the largest ε_L (ties broken by the margin below the claimed curve), and the
odd-numbered trials, untouched by that choice, give the Clopper–Pearson bounds, ε_L, δ and the
verdict at that one threshold. The empirical curve uses all trials, with pointwise CP bounds.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from dpcheck.audit.claim import ClaimedGuarantee
from dpcheck.audit.stats import (
    ThresholdErrors,
    delta_lower_bound,
    epsilon_lower_bound,
    sweep_thresholds,
    threshold_errors,
)

ALPHA_GRID: tuple[float, ...] = (
    1e-3, 2e-3, 5e-3, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9,
)
SELECTION_CANDIDATES = 512


@dataclass(frozen=True)
class CurvePoint:
    """Smallest empirical FNR among thresholds with FPR <= ``alpha``, and its CP upper bound."""

    alpha: float
    beta: float
    beta_upper: float


@dataclass(frozen=True)
class HeldOutTest:
    """The certified outcome at the threshold chosen on the selection half."""

    threshold: float
    errors: ThresholdErrors
    epsilon_lower: float
    delta_at_claimed_epsilon: float
    margin: float

    @property
    def violation(self) -> bool:
        """The CP corner (α_r, β_r) lies strictly below the claimed curve."""
        return self.margin > 0.0


def empirical_curve(
    null_scores: NDArray[np.float64],
    alt_scores: NDArray[np.float64],
    confidence: float,
    grid: tuple[float, ...] = ALPHA_GRID,
) -> tuple[ThresholdErrors, list[CurvePoint]]:
    """The full threshold sweep over all trials, and its value at each FPR level of ``grid``."""
    sweep = threshold_errors(
        null_scores, alt_scores, sweep_thresholds(np.concatenate([null_scores, alt_scores])),
        confidence,
    )
    points = []
    for alpha in grid:
        admissible = np.flatnonzero(sweep.fpr <= alpha)
        best = admissible[np.argmin(sweep.false_negatives[admissible])]
        points.append(CurvePoint(alpha, float(sweep.fnr[best]), float(sweep.beta_upper[best])))
    return sweep, points


def held_out_test(
    null_scores: NDArray[np.float64],
    alt_scores: NDArray[np.float64],
    claim: ClaimedGuarantee,
    confidence: float,
) -> HeldOutTest:
    """Pick a threshold on even trials, certify it on odd trials (see the module docstring)."""
    sel_null, sel_alt = null_scores[0::2], alt_scores[0::2]
    candidates = sweep_thresholds(np.concatenate([sel_null, sel_alt]), SELECTION_CANDIDATES)
    selection = threshold_errors(sel_null, sel_alt, candidates, confidence)
    eps = epsilon_lower_bound(selection.alpha_upper, selection.beta_upper, claim.delta)
    margin = claim.margin(selection.alpha_upper, selection.beta_upper)
    best = int(np.lexsort((margin, eps))[-1])
    threshold = float(candidates[best])
    held = threshold_errors(null_scores[1::2], alt_scores[1::2], candidates[best : best + 1],
                            confidence)
    return HeldOutTest(
        threshold=threshold,
        errors=held,
        epsilon_lower=float(epsilon_lower_bound(held.alpha_upper, held.beta_upper,
                                                claim.delta)[0]),
        delta_at_claimed_epsilon=float(
            delta_lower_bound(held.alpha_upper, held.beta_upper, claim.epsilon)[0]
        ),
        margin=float(claim.margin(held.alpha_upper, held.beta_upper)[0]),
    )
