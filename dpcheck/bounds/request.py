"""A bound request: the mechanism and the numbers one corrected-bound report is computed from.

``BoundRequest`` is frozen and hashable, so it is also the cache key of ``build_report``: two
findings with the same parameter set share one computation. ``validated`` checks every number
and raises ``ParameterError`` naming the bad parameter (the CLI turns it into exit code 2).
The derived quantities (q, T, rounds per epoch M, epochs E) follow the code's own arithmetic:
an Opacus loader has ceil(N/b) batches (floor with ``drop_last``) and q = 1/len(loader).

There is no limit on T itself: the closed forms, the RDP and GDP accountants and the
deterministic-batch bound cost the same for any T, and a PLD composition costs about 2 log2 T
FFT products on a grid whose size is bounded (``dpcheck.privacy.pld``: MAX_POINTS for one round,
COMPOSED_POINTS for the composition, coarsening the grid instead of growing it). The only limit
is MAX_ROUNDS, beyond which a count of rounds is no longer an exact float.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from dpcheck.bounds.defaults import DEFAULT_ALPHAS, DEFAULT_DELTA, MECHANISM_NAMES
from dpcheck.errors import ParameterError
from dpcheck.privacy._checks import require_sigma
from dpcheck.privacy.divisor import (
    Divisor,
    DivisorCheck,
    DivisorRule,
    Rate,
    batch_over_n_rule,
    check_divisor,
    easgm_rule,
    feasgm_rule,
    loader_length,
)
from dpcheck.samplers import sampler_table

MAX_ROUNDS: int = 2**53
"""The most rounds T a report takes: beyond 2^53 a count of rounds is not an exact float (the
work of every bound is bounded independently of T; see the module docstring)."""


@dataclass(frozen=True)
class BoundRequest:
    """What to compute. ``sigma`` is the noise multiplier (noise std / C).

    ``claimed_q`` / ``claimed_steps`` / ``claimed_sigma`` are what the accountant was given when
    it differs from the code (DP103); ``target_epsilon`` without ``sigma`` asks for the sigma
    Opacus' ``make_private_with_epsilon`` would choose. ``accountant`` names the accountant whose
    printed epsilon the claimed side reproduces (see ``dpcheck.bounds.claimed.ACCOUNTANTS``)."""

    mechanism: str
    sigma: float | None = None
    q: float | None = None
    batch_size: int | None = None
    n_records: int | None = None
    steps: int | None = None
    epochs: float | None = None
    dim: int | None = None
    delta: float = DEFAULT_DELTA
    epsilon: float | None = None
    alphas: tuple[float, ...] = DEFAULT_ALPHAS
    clip: float | None = None
    opacus_divisor: bool = False
    drop_last: bool = False
    accountant: str = "pld"
    library_version: str | None = None
    claimed_q: float | None = None
    claimed_steps: int | None = None
    claimed_sigma: float | None = None
    target_epsilon: float | None = None
    sampler: str = "shuffle"

    @property
    def loader_length(self) -> int | None:
        """Batches per epoch of a fixed-size loader: ceil(N/b), floor(N/b) with drop_last."""
        if self.batch_size is None or self.n_records is None:
            return None
        return loader_length(self.n_records, self.batch_size, self.drop_last)

    @property
    def rate(self) -> float:
        """The sampling rate q the code uses: given, 1/len(loader) for Opacus, else b/N."""
        if self.q is not None:
            return self.q
        length = self.loader_length
        if length is None:
            raise ParameterError("q is unknown: give --q, or --batch-size with --N")
        return 1.0 / length if self.opacus_divisor else self.batch_size / self.n_records  # type: ignore[operator]

    @property
    def rounds(self) -> int:
        """T, the number of noisy releases: given, or epochs x steps per epoch. An Opacus
        Poisson loader runs int(1/q) steps per epoch (``UniformWithReplacementSampler``), which
        float rounding can make one less than len(loader)."""
        if self.steps is not None:
            return self.steps
        if self.epochs is None:
            raise ParameterError("the number of steps is unknown: give --steps or --epochs")
        length = self.loader_length
        if self.opacus_divisor:
            per_epoch: float = int(1.0 / self.rate)
        elif length is not None and self.q is None:
            per_epoch = length
        else:
            per_epoch = 1.0 / self.rate
        return max(int(self.epochs * per_epoch + 1e-9), 1)

    @property
    def shuffle_rounds(self) -> int:
        """M, the batches per shuffled epoch: len(loader), or round(1/q) when only q is known."""
        length = self.loader_length
        return length if length is not None else max(round(1.0 / self.rate), 1)

    @property
    def shuffle_epochs(self) -> int:
        """E, the number of epochs a guarantee must cover: given, or ceil(T / M) (a partial
        epoch counts as one: it holds the changed example at most once)."""
        if self.epochs is not None:
            return max(math.ceil(self.epochs - 1e-9), 1)
        return max(math.ceil(self.rounds / self.shuffle_rounds), 1)

    @property
    def full_epochs(self) -> int:
        """The complete epochs the run makes (floor of E or of T / M): what a witness may
        count on, since a partial epoch may miss the changed example."""
        if self.epochs is not None:
            return int(math.floor(self.epochs + 1e-9))
        return self.rounds // self.shuffle_rounds

    @property
    def miss_probability(self) -> float:
        """The chance that an epoch leaves the changed example out: (N - M b)/N with
        ``drop_last`` (the dropped remainder), 0 otherwise."""
        if not self.drop_last or self.batch_size is None or self.n_records is None:
            return 0.0
        return (self.n_records - self.shuffle_rounds * self.batch_size) / self.n_records

    @property
    def accounted_rate(self) -> float:
        """The q the accountant was given (the code's when not told otherwise)."""
        return self.claimed_q if self.claimed_q is not None else self.rate

    @property
    def accounted_rounds(self) -> int:
        """The T the accountant was given."""
        return self.claimed_steps if self.claimed_steps is not None else self.rounds

    def divisor_rule(self) -> DivisorRule:
        """The code's divisor d(N): Opacus' int(N * (1/len(loader))), N q with a fixed q, or
        N b/N (EASGM: N q; FEASGM: its floor)."""
        kind = Divisor.FLOOR if self.mechanism == "feasgm" else Divisor.EXPECTED
        if self.opacus_divisor:
            return DivisorRule(kind, Rate.LOADER, batch_size=self.batch_size, drop_last=self.drop_last)
        if self.q is not None:
            return feasgm_rule(self.q) if kind is Divisor.FLOOR else easgm_rule(self.q)
        return batch_over_n_rule(int(self.batch_size or 0), kind)

    def divisor_check(self) -> DivisorCheck:
        """The divisor at N-1, N and N+1 (docs/theory.md#divisor-dependence): it needs N and
        the divisor's rule only, not sigma or the number of steps."""
        if self.n_records is None:
            raise ParameterError("the divisor check needs N: give --N")
        return check_divisor(self.divisor_rule(), int(self.n_records))

    def with_sigma(self, sigma: float) -> BoundRequest:
        """The same request with sigma resolved (after a make_private_with_epsilon search)."""
        return replace(self, sigma=sigma)


def _positive(name: str, value: float | None, *, integer: bool = False, minimum: float = 0.0) -> None:
    if value is None:
        return
    bad = isinstance(value, bool) or not math.isfinite(float(value))
    if integer and not bad:
        bad = int(value) != value
    if bad or float(value) < minimum or (minimum == 0.0 and float(value) <= 0.0):
        kind = "an integer" if integer else "a number"
        bound = f">= {minimum:g}" if minimum > 0.0 else "> 0"
        raise ParameterError(f"{name} must be {kind} {bound}, got {value!r}")


def _unit(name: str, value: float | None, *, closed_high: bool) -> None:
    if value is None:
        return
    v = float(value)
    ok = math.isfinite(v) and v > 0.0 and (v <= 1.0 if closed_high else v < 1.0)
    if not ok:
        raise ParameterError(f"{name} must lie in (0, 1{']' if closed_high else ')'}, got {value!r}")


def validated(request: BoundRequest) -> BoundRequest:
    """``request`` unchanged when every parameter is in its domain; otherwise a
    ``ParameterError`` naming the first bad one."""
    if request.mechanism not in MECHANISM_NAMES:
        raise ParameterError(
            f"mechanism must be one of {', '.join(MECHANISM_NAMES)}, got {request.mechanism!r}"
        )
    if request.sigma is None and request.target_epsilon is None:
        raise ParameterError("sigma is unknown: give --sigma (or a target epsilon to search it)")
    _positive("sigma", request.sigma)
    _positive("clip", request.clip)
    _unit("q", request.q, closed_high=True)
    _unit("claimed q", request.claimed_q, closed_high=True)
    _positive("claimed sigma", request.claimed_sigma)
    _positive("dim", request.dim, integer=True, minimum=1)
    _positive("N", request.n_records, integer=True, minimum=2)
    _positive("batch size", request.batch_size, integer=True, minimum=1)
    _positive("steps", request.steps, integer=True, minimum=1)
    _positive("claimed steps", request.claimed_steps, integer=True, minimum=1)
    _positive("epochs", request.epochs)
    _positive("epsilon", request.epsilon)
    _positive("target epsilon", request.target_epsilon)
    _unit("delta", request.delta, closed_high=False)
    if request.batch_size is not None and request.n_records is not None:
        if request.batch_size > request.n_records:
            raise ParameterError(
                f"batch size {request.batch_size} is larger than the dataset size N={request.n_records}"
            )
    if not request.alphas:
        raise ParameterError("alpha: give at least one level")
    for a in request.alphas:
        _unit("alpha", a, closed_high=False)
    needs_n = request.mechanism in ("easgm", "feasgm", "asgm-or-easgm", "shuffle") or request.opacus_divisor
    if needs_n and request.n_records is None:
        raise ParameterError(f"N (the dataset size) is needed for {request.mechanism}: give --N")
    if request.mechanism == "shuffle" and request.batch_size is None and request.q is None:
        raise ParameterError("shuffle needs the batch size (--batch-size) or --q")
    kinds = sampler_table().kinds
    if request.sampler not in kinds or kinds[request.sampler].sampling == "poisson":
        choices = ", ".join(k for k, v in kinds.items() if v.sampling != "poisson")
        raise ParameterError(f"sampler must be one of {choices}, got {request.sampler!r}")
    if request.opacus_divisor and request.batch_size is None:
        raise ParameterError("--opacus-divisor needs --batch-size")
    if request.sigma is not None:
        require_sigma("sigma", request.sigma)
    if request.claimed_sigma is not None:
        require_sigma("claimed sigma", request.claimed_sigma)
    _unit("q", request.rate, closed_high=True)
    _at_most_rounds("steps", request.rounds)
    _at_most_rounds("claimed steps", request.accounted_rounds)
    _positive("steps", request.rounds, integer=True, minimum=1)
    return request


def _at_most_rounds(name: str, rounds: int) -> None:
    if rounds > MAX_ROUNDS:
        raise ParameterError(
            f"{name} T={rounds:.4g} (from steps or epochs) is above 2^53 = {MAX_ROUNDS:.4g} rounds, where a "
            "count of rounds is no longer exact; check the steps/epochs parameter"
        )
