"""The names and defaults of ``dpcheck bound`` requests, apart from the numeric engine, so the
command line can list them without importing numpy or scipy."""

from __future__ import annotations

MECHANISM_NAMES: tuple[str, ...] = ("sgm", "asgm", "easgm", "feasgm", "shuffle")
DEFAULT_ALPHAS: tuple[float, ...] = (1e-3, 1e-2, 0.05, 0.1, 0.25, 0.5)
DEFAULT_DELTA: float = 1e-5
