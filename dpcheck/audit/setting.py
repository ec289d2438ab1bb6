"""The audited neighbouring pair: mechanism, parameters and the divisor each dataset gets.

The audit runs the worst-case pair of Wang, Cui, Cui, Yuan (2026) (docs/theory.md#audit-setting):
every record of D has the gradient ``+2C·e₁`` (clipped to ``C·e₁``) and the canary added in D′ has
``−2C·e₁`` (clipped to ``−C·e₁``). Everything the reference mechanism, the Opacus adapter and the
distinguisher need to agree on (sizes, rates, divisors) lives here, so they cannot drift apart.
Pure, numpy only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from dpcheck.errors import ParameterError

AUDIT_MECHANISMS: tuple[str, ...] = ("SGM", "ASGM", "EASGM", "FEASGM")
RAW_GRADIENT_NORM_FACTOR = 2.0
"""Records' raw gradients have norm 2C, so clipping really acts on them."""
MAX_N = 1_000_000
"""Largest |D|: the divisor of every batch size 0..N+1 and the mixtures over them are tabulated,
and an audit is tightest on tiny datasets anyway."""


def check_rate(q: float) -> None:
    """Reject a sampling rate outside (0, 1] (NaN included)."""
    if not (0.0 < q <= 1.0):
        raise ParameterError(f"--q must lie in (0, 1], got {q!r}")


@dataclass(frozen=True)
class AuditSetting:
    """One audited configuration. ``N`` is |D|; D′ is D plus one canary, so |D′| = N + 1.

    ``sigma`` is the noise multiplier: the noise added to the clipped sum is N(0, σ²C² I_dim).
    """

    mechanism: str
    N: int
    q: float
    sigma: float
    clip: float
    dim: int

    def __post_init__(self) -> None:
        if self.mechanism not in AUDIT_MECHANISMS:
            raise ParameterError(
                f"mechanism {self.mechanism!r} cannot be audited; choose one of "
                f"{', '.join(m.lower() for m in AUDIT_MECHANISMS)}"
            )
        if not (isinstance(self.N, int) and 1 <= self.N <= MAX_N):
            raise ParameterError(
                f"--N must be an integer in [1, {MAX_N:,}] (the audit tabulates every batch "
                f"size of D; audits are tightest on tiny datasets), got {self.N!r}"
            )
        check_rate(self.q)
        if not (self.sigma > 0.0 and math.isfinite(self.sigma)):
            raise ParameterError(f"--sigma must be a positive number, got {self.sigma!r}")
        if not (self.clip > 0.0 and math.isfinite(self.clip)):
            raise ParameterError(f"--clip must be a positive number, got {self.clip!r}")
        if not (isinstance(self.dim, int) and self.dim >= 1):
            raise ParameterError(f"--dim must be an integer >= 1, got {self.dim!r}")
        for size in (self.N, self.N + 1):
            if np.any(self.divisors(size) <= 0):
                raise ParameterError(
                    f"FEASGM divisor floor(N*q) is 0 for a dataset of size {size} at q={self.q}; "
                    f"choose N >= {math.ceil(1 / self.q)}"
                )

    def divisors(self, data_size: int) -> NDArray[np.float64]:
        """The divisor of the noisy sum for each realized batch size 0..data_size.

        FEASGM uses the float expression ``int(size * q)`` as Opacus 1.x does (not an exact
        rational floor): the audit must reproduce the code, rounding included. ASGM divides an
        empty batch by 1 (the convention of docs/theory.md#asgm).
        """
        batch = np.arange(data_size + 1, dtype=np.float64)
        if self.mechanism == "SGM":
            return np.ones_like(batch)
        if self.mechanism == "ASGM":
            return np.maximum(batch, 1.0)
        if self.mechanism == "EASGM":
            return np.full_like(batch, data_size * self.q)
        return np.full_like(batch, float(int(data_size * self.q)))

    def describe(self) -> dict[str, float | int | str]:
        """The inputs as they appear in the JSON report."""
        return {
            "mechanism": self.mechanism,
            "N": self.N,
            "N_prime": self.N + 1,
            "q": self.q,
            "sigma": self.sigma,
            "clip": self.clip,
            "dim": self.dim,
        }
