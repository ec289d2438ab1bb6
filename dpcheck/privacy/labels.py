"""Provenance labels and the labelled-result type every bound of dpcheck is reported as.

docs/theory.md#labels: every number carries where it comes from (``Label``) and what it means
for the claim (``Kind``); a bound outside its validity regime keeps ``valid=False`` and says why in
its notes, so no renderer can print it as if it held."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from dpcheck.privacy._numerics import FloatArray, as_array


class Label(str, Enum):
    """Provenance of a formula (docs/theory.md#labels)."""

    STANDARD = "standard"
    PAPER = "paper"
    RECONSTRUCTED = "reconstructed"
    OWN = "own"
    UNVERIFIED = "unverified"


class Kind(str, Enum):
    """What a bound says about the mechanism relative to the claim."""

    CLAIMED = "claimed"  # what the code's accountant reports
    WITNESS = "witness"  # the mechanism is no better than this
    GUARANTEE = "guarantee"  # the mechanism is at least this good


@dataclass(frozen=True)
class BoundCurve:
    """A labelled trade-off curve sampled at ``curve_alpha``, with its (eps, delta) read-outs.

    ``valid=False`` marks a number outside its validity regime (or a display-only indicator);
    ``notes`` then says why."""

    label: Label
    kind: Kind
    name: str
    curve_alpha: FloatArray
    curve_beta: FloatArray
    epsilon_at_delta: float | None = None
    delta_at_epsilon: float | None = None
    valid: bool = True
    notes: tuple[str, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        alpha = as_array(self.curve_alpha).reshape(-1)
        beta = as_array(self.curve_beta).reshape(-1)
        if alpha.shape != beta.shape:
            raise ValueError(
                f"BoundCurve {self.name!r}: curve_alpha and curve_beta differ in length "
                f"({alpha.size} vs {beta.size})"
            )
        if not self.valid and not self.notes:
            raise ValueError(f"BoundCurve {self.name!r} is invalid but has no note saying why")
        object.__setattr__(self, "curve_alpha", alpha)
        object.__setattr__(self, "curve_beta", beta)

    def beta_at(self, alphas: ArrayLike) -> FloatArray:
        """The stored beta at each requested alpha; every alpha must be a sampled point (no
        interpolation: a chord of a convex curve overstates a guarantee)."""
        wanted = as_array(alphas).reshape(-1)
        out = np.empty_like(wanted)
        for i, a in enumerate(wanted):
            hits = np.flatnonzero(np.isclose(self.curve_alpha, a, rtol=1e-12, atol=0.0))
            if hits.size == 0:
                raise ValueError(f"BoundCurve {self.name!r} was not evaluated at alpha={float(a)!r}")
            out[i] = self.curve_beta[hits[0]]
        return out

    def to_json(self, alphas: ArrayLike | None = None) -> dict[str, Any]:
        """The documented JSON shape; ``alphas`` selects sampled points (default: all)."""
        chosen = self.curve_alpha if alphas is None else as_array(alphas).reshape(-1)
        betas = self.curve_beta if alphas is None else self.beta_at(chosen)
        return {
            "label": self.label.value,
            "kind": self.kind.value,
            "name": self.name,
            "curve": [{"alpha": float(a), "beta": float(b)} for a, b in zip(chosen, betas)],
            "epsilon_at_delta": _json_float(self.epsilon_at_delta),
            "delta_at_epsilon": _json_float(self.delta_at_epsilon),
            "valid": self.valid,
            "notes": list(self.notes),
        }


def _json_float(value: float | None) -> float | str | None:
    """JSON has no infinity: an infinite epsilon is written as the string "inf"."""
    if value is None:
        return None
    return "inf" if np.isinf(value) else float(value)
