"""The low-noise threshold of shuffled DP-SGD, 1/sqrt(2 ln M) (Ertan & van Dijk 2026;
docs/theory.md#shuffle-threshold). A closed form without the numeric
engine: rule DP104 compares a scanned sigma with it before any bound is computed."""

from __future__ import annotations

import math

from dpcheck.privacy._checks import require_rounds


def sigma_threshold(rounds: int) -> float:
    """1/sqrt(2 ln M): below this noise multiplier shuffled DP-SGD has no favourable guarantee.

    The threshold of Ertan & van Dijk (2026) that DP104 checks (docs/theory.md#shuffle-threshold):
    either sigma >= 1/sqrt(2 ln M) or one epoch's separation is at least ``kappa_closed_form(M)``.

    Parameters
    ----------
    rounds : int
        Rounds (batches) per epoch M, >= 2.

    Returns
    -------
    float
        The sigma threshold.

    Examples
    --------
    >>> from dpcheck.privacy.shuffle_threshold import sigma_threshold
    >>> round(sigma_threshold(5000), 5)  # ImageNet-sized epoch
    0.24229
    >>> round(sigma_threshold(23_000_000), 5)  # LAION-sized epoch
    0.17175
    """
    return 1.0 / math.sqrt(2.0 * math.log(require_rounds(rounds)))
