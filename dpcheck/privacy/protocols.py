"""The interface between a neighbouring pair of distributions and the tools that consume it.

A pair (P, Q) is seen through its privacy loss l = log dQ/dP. The Neyman-Pearson test "reject
H0 (P) iff l >= tau" has type-I error alpha(tau) = P(l >= tau) and type-II error
beta(tau) = Q(l < tau); sweeping tau traces the exact trade-off curve T(P, Q), and beta is the
CDF of l under Q, from which a PLD is discretised (docs/theory.md#loss-pairs). Mixtures with a
revealed index (docs/theory.md#revealed-index-mixtures), PLD construction
(docs/theory.md#sgm-pld) and (eps, delta) conversion (docs/theory.md#tradeoff-conversions) all
take any object with this shape, so a new pair needs no new glue.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np
from numpy.typing import NDArray


class LossPair(Protocol):
    """A neighbouring pair (P, Q) described by the law of its privacy loss."""

    def alpha(self, tau: NDArray[np.float64]) -> NDArray[np.float64]:
        """P(l >= tau): the false-positive rate of the likelihood-ratio test at threshold tau."""
        ...

    def beta(self, tau: NDArray[np.float64]) -> NDArray[np.float64]:
        """Q(l < tau): the false-negative rate at threshold tau (the CDF of l under Q)."""
        ...

    def reversed(self) -> LossPair:
        """The pair (Q, P), whose loss is -l (the other neighbouring direction)."""
        ...


# A pair may also offer ``hockey_stick(eps) -> delta`` (delta_{Q||P}(eps) in closed form);
# ``dpcheck.privacy.tradeoff.hockey_stick`` and the PLD builder use it when present because it
# stays accurate in the far tails where 1 - beta - e^eps * alpha cancels.
