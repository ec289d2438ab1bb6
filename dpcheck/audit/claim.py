"""The guarantee an SGM accountant claims for one step, which the audit tries to refute.

Every audited mechanism is accounted as the Poisson subsampled Gaussian: its claimed one-step
trade-off is the symmetric C_q(G_{1/σ}) (docs/theory.md#sgm-one-step), and its claimed ε at δ comes
from the same SGM accounting with one step. Both come from :mod:`dpcheck.privacy.sgm`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from dpcheck.audit.setting import AuditSetting
from dpcheck.errors import ParameterError
from dpcheck.privacy.sgm import poisson_sgm_epsilon, poisson_sgm_tradeoff


@dataclass(frozen=True)
class ClaimedGuarantee:
    """C_q(G_{1/σ}) for one step, and the ε it gives at ``delta``."""

    q: float
    sigma: float
    delta: float
    epsilon: float

    def tradeoff(self, alpha: NDArray[np.float64]) -> NDArray[np.float64]:
        """The claimed smallest FNR at FPR ``alpha`` (symmetric, so valid in both directions)."""
        return np.asarray(poisson_sgm_tradeoff(np.asarray(alpha, dtype=np.float64), self.q,
                                               self.sigma), dtype=np.float64)

    def margin(
        self, alpha_upper: NDArray[np.float64], beta_upper: NDArray[np.float64]
    ) -> NDArray[np.float64]:
        """How far the point (α_r, β_r) lies below the claimed curve, in either orientation.

        Positive means no mechanism satisfying the claim can produce those error rates: the
        claim is refuted at whatever confidence (α_r, β_r) hold.
        """
        a = np.asarray(alpha_upper, dtype=np.float64)
        b = np.asarray(beta_upper, dtype=np.float64)
        return np.maximum(self.tradeoff(a) - b, self.tradeoff(b) - a)


def claimed_sgm(setting: AuditSetting, delta: float) -> ClaimedGuarantee:
    """The one-step SGM claim for the setting's (q, σ) at ``delta``."""
    if not (0.0 < delta < 1.0):
        raise ParameterError(f"--delta must lie in (0, 1), got {delta!r}")
    epsilon = float(poisson_sgm_epsilon(setting.q, setting.sigma, 1, delta))
    return ClaimedGuarantee(setting.q, setting.sigma, delta, epsilon)
