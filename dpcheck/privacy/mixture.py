"""Mixtures with a revealed index (docs/theory.md#revealed-index-mixtures).

If M(D) = sum_i w_i P_i and M(D') = sum_i w_i Q_i and the adversary is told i, the trade-off
can only drop, so the index-revealed curve is a valid lower bound on T(M(D), M(D')). Its loss is
the component loss l_i, hence alpha(tau) = sum_i w_i P_i(l_i >= tau) and beta likewise: the
mixture is itself a ``LossPair`` and every tool (trade-off, delta, PLD) applies to it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from dpcheck.errors import ParameterError
from dpcheck.privacy._numerics import FloatArray, as_array, scalar_or_array
from dpcheck.privacy.protocols import LossPair
from dpcheck.privacy.tradeoff import hockey_stick, loss_pair_tradeoff


@dataclass(frozen=True)
class Mixture:
    """sum_i w_i (P_i, Q_i) with the index i revealed; weights are non-negative, sum to 1."""

    weights: FloatArray
    pairs: tuple[LossPair, ...]

    def __init__(self, weights: ArrayLike, pairs: Sequence[LossPair]) -> None:
        w = as_array(weights).ravel()
        if w.size != len(pairs) or w.size == 0:
            raise ParameterError(
                f"Mixture needs one weight per pair, got {w.size} weights for {len(pairs)} pairs"
            )
        if not np.all(np.isfinite(w)) or np.any(w < 0.0) or abs(w.sum() - 1.0) > 1e-9:
            raise ParameterError(f"Mixture weights must be >= 0 and sum to 1, got sum {w.sum()!r}")
        object.__setattr__(self, "weights", w / w.sum())
        object.__setattr__(self, "pairs", tuple(pairs))

    def _mix(self, values: Sequence[FloatArray]) -> FloatArray:
        return sum((w * v for w, v in zip(self.weights, values)), start=np.zeros(()))

    def _mix_probability(self, values: Sequence[FloatArray], shape: tuple[int, ...]) -> FloatArray:
        """sum_i w_i v_i for probabilities v_i, summed as 1 - sum_i w_i (1 - v_i) where that is
        the more accurate form (above 1/2): a sure event then gives exactly 1, where the direct
        sum of the weights can stop an ulp short (which stalled the PLD's tail search)."""
        direct = self._mix(values)
        complement = self._mix([1.0 - v for v in values])
        out = np.where(direct <= 0.5, direct, 1.0 - complement)
        return np.broadcast_to(np.clip(out, 0.0, 1.0), shape).copy()

    def alpha(self, tau: FloatArray) -> FloatArray:
        """sum_i w_i P_i(l_i >= tau)."""
        t = as_array(tau)
        return self._mix_probability([p.alpha(t) for p in self.pairs], t.shape)

    def beta(self, tau: FloatArray) -> FloatArray:
        """sum_i w_i Q_i(l_i < tau)."""
        t = as_array(tau)
        return self._mix_probability([p.beta(t) for p in self.pairs], t.shape)

    def reversed(self) -> Mixture:
        """The other direction: the same weights over the reversed components."""
        return Mixture(self.weights, [p.reversed() for p in self.pairs])

    def hockey_stick(self, eps: FloatArray) -> FloatArray:
        """delta_{Q||P}(eps) = sum_i w_i delta_i(eps) (the index is part of the output)."""
        e = as_array(eps)
        return np.broadcast_to(self._mix([hockey_stick(p, e) for p in self.pairs]), e.shape).copy()

    def tradeoff(self, alpha: ArrayLike) -> FloatArray | float:
        """T(sum w_i P_i, sum w_i Q_i) with the index revealed, at a common LR threshold."""
        return loss_pair_tradeoff(self, alpha)

    def delta(self, eps: ArrayLike) -> FloatArray | float:
        """delta(eps) taken in both directions (remove: this pair; add: reversed), the max."""
        e = as_array(eps)
        both = np.maximum(self.hockey_stick(e), self.reversed().hockey_stick(e))
        return scalar_or_array(both, eps)
