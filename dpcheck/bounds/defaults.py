"""The names and defaults of ``dpcheck bound`` requests, apart from the numeric engine, so the
command line can list them without importing numpy or scipy."""

from __future__ import annotations

#: Each mechanism ``dpcheck bound`` takes, and how a report names it. ``asgm-or-easgm`` is a
#: normalized update whose divisor sizes the batch or the dataset, undecided which
#: (docs/theory.md#undecided-normalization).
MECHANISM_TITLES: dict[str, str] = {
    "sgm": "SGM", "asgm": "ASGM", "easgm": "EASGM", "feasgm": "FEASGM",
    "asgm-or-easgm": "ASGM or EASGM", "shuffle": "shuffled",
}
MECHANISM_NAMES: tuple[str, ...] = tuple(MECHANISM_TITLES)
DEFAULT_ALPHAS: tuple[float, ...] = (1e-3, 1e-2, 0.05, 0.1, 0.25, 0.5)
DEFAULT_DELTA: float = 1e-5
