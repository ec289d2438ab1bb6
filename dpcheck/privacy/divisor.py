"""Does the normalising divisor depend on the dataset size? (docs/theory.md#divisor-dependence)

EASGM divides the noisy sum by N q, FEASGM by floor(N q), and Opacus 1.x by
``int(N * (1 / len(data_loader)))`` where the loader length itself depends on N. A neighbouring
dataset (N -> N +- 1) then sees another divisor, so the release scale changes with membership and
the variance witness (docs/theory.md#variance-witness) applies with s = d(N)/d(N+1). When the
divisor is the same on both sides there is no normalisation leak *for this N*, and the nearest
sizes where it would appear are reported as a robustness note.

Each divisor is evaluated twice: with exact rationals (``fractions.Fraction``) and with the code's
own float expression, because float rounding can move a floor (e.g. ``int(100 * 0.29) == 28``).
The code's value is what the mechanism really uses, so it drives the verdict.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum
from fractions import Fraction
from itertools import islice

from dpcheck.errors import ParameterError


def loader_length(n_records: int, batch_size: int, drop_last: bool = False) -> int:
    """len(DataLoader) for N records in batches of b: ceil(N/b), or floor(N/b) with ``drop_last``.

    Parameters
    ----------
    n_records : int
        Dataset size N.
    batch_size : int
        Batch size b, >= 1.
    drop_last : bool, default False
        Whether the last partial batch is dropped.

    Returns
    -------
    int
        The number of batches per epoch (docs/theory.md#shuffle-rounds).

    Examples
    --------
    >>> from dpcheck.privacy.divisor import loader_length
    >>> loader_length(50_000, 256), loader_length(50_000, 256, drop_last=True)
    (196, 195)
    """
    return n_records // batch_size if drop_last else -(-n_records // batch_size)


class Rate(str, Enum):
    """How the code derives the sampling rate q from the dataset size N."""

    FIXED = "fixed"  # q is a constant
    BATCH_OVER_N = "batch_over_n"  # q = b / N
    LOADER = "loader"  # q = 1 / len(loader), len = ceil(N/b), or floor(N/b) with drop_last


class Divisor(str, Enum):
    """What the noisy sum is divided by."""

    EXPECTED = "expected"  # N * q: EASGM
    FLOOR = "floor"  # int(N * q): FEASGM (Opacus 1.x expected_batch_size)


@dataclass(frozen=True)
class DivisorRule:
    """The divisor d(N) as the code computes it.

    ``q`` (for ``Rate.FIXED``) is the rate as written in the code: a float is read back through
    its shortest repr, so ``0.29`` means 29/100 exactly while the code still computes with the
    binary float. ``batch_size`` is needed for the other rates.
    """

    divisor: Divisor
    rate: Rate
    q: Fraction | None = None
    q_literal: float | None = None
    batch_size: int | None = None
    drop_last: bool = False

    def exact(self, n: int) -> Fraction:
        """d(n) in exact rational arithmetic."""
        product = n * self._exact_rate(n)
        return Fraction(math.floor(product)) if self.divisor is Divisor.FLOOR else product

    def as_code(self, n: int) -> float:
        """d(n) as the code's float expression evaluates it."""
        if self.rate is Rate.FIXED:
            product = n * float(self.q_literal or 0.0)
        elif self.rate is Rate.BATCH_OVER_N:
            product = n * (int(self.batch_size or 0) / n)
        else:
            product = n * (1 / self._loader_length(n))
        return float(int(product)) if self.divisor is Divisor.FLOOR else product

    def _exact_rate(self, n: int) -> Fraction:
        if self.rate is Rate.FIXED:
            return Fraction(self.q or 0)
        if self.rate is Rate.BATCH_OVER_N:
            return Fraction(int(self.batch_size or 0), n)
        return Fraction(1, self._loader_length(n))

    def _loader_length(self, n: int) -> int:
        return loader_length(n, int(self.batch_size or 0), self.drop_last)

    def describe(self) -> str:
        """The code expression in words, for notes."""
        rate = {
            Rate.FIXED: f"q={self.q_literal!r}",
            Rate.BATCH_OVER_N: f"q=b/N with b={self.batch_size}",
            Rate.LOADER: f"q=1/len(loader) with b={self.batch_size}, "
            f"len={'floor' if self.drop_last else 'ceil'}(N/b)",
        }[self.rate]
        form = "int(N*q)" if self.divisor is Divisor.FLOOR else "N*q"
        return f"d(N)={form}, {rate}"


def _rate_from_literal(q: float | Fraction | str) -> tuple[Fraction, float]:
    """(exact rational, float the code holds) for a sampling rate given as written in the code."""
    try:
        exact = Fraction(repr(q)) if isinstance(q, float) else Fraction(q)
    except (ValueError, ZeroDivisionError) as exc:
        raise ParameterError(f"q must be a number in (0, 1], got {q!r}") from exc
    if not 0 < exact <= 1:
        raise ParameterError(f"q must lie in (0, 1], got {q!r}")
    return exact, float(q) if isinstance(q, float) else float(exact)


def _require_batch(batch_size: int) -> int:
    if isinstance(batch_size, bool) or int(batch_size) != batch_size or batch_size < 1:
        raise ParameterError(f"batch size must be an integer >= 1, got {batch_size!r}")
    return int(batch_size)


def easgm_rule(q: float | Fraction | str) -> DivisorRule:
    """EASGM with a constant rate: d(N) = N q (docs/theory.md#divisor-dependence).

    Parameters
    ----------
    q : float or Fraction or str
        The sampling rate as written in the code, in (0, 1]; a float is read back through its
        shortest repr, so ``0.29`` means 29/100 exactly while the code still computes with the
        binary float.

    Returns
    -------
    DivisorRule
        The rule, for ``check_divisor``.

    Raises
    ------
    ParameterError
        If q is not a number in (0, 1].

    Examples
    --------
    >>> from dpcheck.privacy.divisor import check_divisor, easgm_rule
    >>> check = check_divisor(easgm_rule(0.01), 60_000)
    >>> check.code, check.changes
    ((599.99, 600.0, 600.01), True)
    >>> f"{check.one_minus_s_add:.6g}"  # 1 - d(N)/d(N+1) = 1/(N+1)
    '1.66664e-05'
    """
    exact, literal = _rate_from_literal(q)
    return DivisorRule(Divisor.EXPECTED, Rate.FIXED, q=exact, q_literal=literal)


def feasgm_rule(q: float | Fraction | str) -> DivisorRule:
    """FEASGM with a constant rate: d(N) = floor(N q) (docs/theory.md#divisor-dependence).

    Parameters
    ----------
    q : float or Fraction or str
        The sampling rate as written in the code, in (0, 1] (see ``easgm_rule``).

    Returns
    -------
    DivisorRule
        The rule, for ``check_divisor``.

    Raises
    ------
    ParameterError
        If q is not a number in (0, 1].

    Examples
    --------
    Float rounding moves the floor: ``int(100 * 0.29)`` is 28, although 100 * 29/100 = 29.

    >>> from dpcheck.privacy.divisor import check_divisor, feasgm_rule
    >>> check = check_divisor(feasgm_rule(0.29), 100)
    >>> check.code, [int(d) for d in check.exact], check.float_differs
    ((28.0, 28.0, 29.0), [28, 29, 29], True)
    """
    exact, literal = _rate_from_literal(q)
    return DivisorRule(Divisor.FLOOR, Rate.FIXED, q=exact, q_literal=literal)


def batch_over_n_rule(batch_size: int, divisor: Divisor) -> DivisorRule:
    """q = b/N, so N q = b: the divisor depends on N only through float rounding.

    Parameters
    ----------
    batch_size : int
        Batch size b, >= 1.
    divisor : Divisor
        ``Divisor.EXPECTED`` (N q) or ``Divisor.FLOOR`` (int(N q)).

    Returns
    -------
    DivisorRule
        The rule, for ``check_divisor`` (docs/theory.md#divisor-dependence).

    Examples
    --------
    >>> from dpcheck.privacy.divisor import Divisor, batch_over_n_rule, check_divisor
    >>> check = check_divisor(batch_over_n_rule(256, Divisor.EXPECTED), 60_000)
    >>> check.code, check.changes
    ((256.0, 256.0, 256.0), False)
    """
    return DivisorRule(divisor, Rate.BATCH_OVER_N, batch_size=_require_batch(batch_size))


def opacus_rule(batch_size: int, drop_last: bool = False) -> DivisorRule:
    """Opacus 1.x: d(N) = int(N * (1 / len(data_loader))), the loader's length depending on N.

    Parameters
    ----------
    batch_size : int
        The loader's batch size b, >= 1.
    drop_last : bool, default False
        Whether the loader drops its last partial batch (len = floor(N/b) instead of ceil(N/b)).

    Returns
    -------
    DivisorRule
        The rule, for ``check_divisor`` (docs/theory.md#divisor-dependence).

    Examples
    --------
    >>> from dpcheck.privacy.divisor import check_divisor, opacus_rule
    >>> check_divisor(opacus_rule(256), 50_000).code  # CIFAR-10: the same at N-1, N, N+1
    (255.0, 255.0, 255.0)
    """
    return DivisorRule(
        Divisor.FLOOR, Rate.LOADER, batch_size=_require_batch(batch_size), drop_last=drop_last
    )


@dataclass(frozen=True)
class DivisorCheck:
    """d(N-1), d(N), d(N+1) exactly and as the code computes them, and what follows.

    ``one_minus_s_add`` = 1 - d(N)/d(N+1) and ``one_minus_s_remove`` = 1 - d(N-1)/d(N), from the
    code's values, computed exactly and then rounded once (so 1 - s keeps full precision).
    """

    rule: DivisorRule
    n: int
    exact: tuple[Fraction, Fraction, Fraction]
    code: tuple[float, float, float]
    nearest_changes: tuple[int, ...]

    @property
    def one_minus_s_add(self) -> float:
        return float(1 - Fraction(self.code[1]) / Fraction(self.code[2]))

    @property
    def one_minus_s_remove(self) -> float:
        return float(1 - Fraction(self.code[0]) / Fraction(self.code[1]))

    @property
    def s_add(self) -> float:
        """s = d(N)/d(N+1): the variance ratio when the target is added."""
        return 1.0 - self.one_minus_s_add

    @property
    def s_remove(self) -> float:
        """d(N-1)/d(N): the variance ratio between N-1 and N."""
        return 1.0 - self.one_minus_s_remove

    @property
    def changes(self) -> bool:
        """Whether the code's divisor differs between N and one of its neighbours."""
        return self.code[0] != self.code[1] or self.code[1] != self.code[2]

    @property
    def exact_changes(self) -> bool:
        """Whether the exact divisor differs between N and a neighbour."""
        return self.exact[0] != self.exact[1] or self.exact[1] != self.exact[2]

    @property
    def float_differs(self) -> bool:
        """Whether float rounding moved the code's divisor off the exact value somewhere."""
        return any(Fraction(c) != e for c, e in zip(self.code, self.exact))

    def notes(self) -> tuple[str, ...]:
        """Human-readable statements about this check, including the robustness note."""
        out = [f"{self.rule.describe()}; d(N-1), d(N), d(N+1) = " + ", ".join(f"{d:g}" for d in self.code)]
        if self.float_differs:
            exact = ", ".join(str(e) for e in self.exact)
            out.append(f"float rounding moves the divisor: exact values are {exact}")
        if self.changes:
            out.append(f"divisor depends on |D|: s = d(N)/d(N+1) = {self.s_add:.12g}, "
                       f"d(N-1)/d(N) = {self.s_remove:.12g}")
        else:
            out.append(f"no normalisation leak for N={self.n}: the divisor is the same at N-1, N, N+1")
        if self.nearest_changes:
            sizes = ", ".join(str(m) for m in self.nearest_changes)
            out.append(f"robustness: the divisor changes next to dataset sizes {sizes}")
        return tuple(out)


def _changes_at(rule: DivisorRule, n: int) -> bool:
    """Whether the code's divisor differs between n and one of n-1, n+1."""
    here = rule.as_code(n)
    return rule.as_code(n - 1) != here or rule.as_code(n + 1) != here


def _smallest_size(rule: DivisorRule) -> int:
    """The smallest N for which d(N-1) is defined (a drop_last loader needs N-1 >= b)."""
    if rule.rate is Rate.LOADER and rule.drop_last:
        return int(rule.batch_size or 0) + 1
    return 2


def check_divisor(rule: DivisorRule, n: int, radius: int = 10_000, keep: int = 2) -> DivisorCheck:
    """The divisor at N - 1, N and N + 1, exactly and as the code computes it, and where it changes.

    A neighbouring dataset sees another divisor exactly when d changes next to N; then the release
    scale leaks membership and s = d(N)/d(N + 1) feeds the variance witness. When d is the same at
    all three sizes there is no normalization leak at this N, and up to ``keep`` sizes on each side
    (within ``radius``) where the code's divisor would change are reported
    (docs/theory.md#divisor-dependence).

    Parameters
    ----------
    rule : DivisorRule
        The divisor as the code computes it (``easgm_rule``, ``feasgm_rule``,
        ``batch_over_n_rule``, ``opacus_rule``).
    n : int
        Dataset size N, >= 2.
    radius : int, default 10000
        How far from N to look for sizes where the divisor changes.
    keep : int, default 2
        How many such sizes to keep on each side.

    Returns
    -------
    DivisorCheck
        d(N - 1), d(N), d(N + 1) exactly and as the code's floats, the ratios s, the nearest
        changes, and notes in words.

    Raises
    ------
    ParameterError
        If N is not an integer >= 2, the batch size exceeds N, or the divisor is 0 near N.

    Examples
    --------
    >>> from dpcheck.privacy.divisor import check_divisor, opacus_rule
    >>> check = check_divisor(opacus_rule(256), 50_000)
    >>> check.changes, check.nearest_changes
    (False, (49980, 49981, 50176, 50177))
    """
    if isinstance(n, bool) or int(n) != n or n < 2:
        raise ParameterError(f"dataset size N must be an integer >= 2, got {n!r}")
    n = int(n)
    if rule.batch_size is not None and rule.batch_size > n:
        raise ParameterError(f"batch size {rule.batch_size} is larger than the dataset size N={n}")
    floor_size = _smallest_size(rule)
    if n < floor_size:
        raise ParameterError(f"dataset size N={n} leaves an empty loader at N-1 ({rule.describe()})")
    sizes = (n - 1, n, n + 1)
    code = [rule.as_code(m) for m in sizes]
    exact = [rule.exact(m) for m in sizes]
    if min(code) <= 0 or min(exact) <= 0:
        raise ParameterError(f"the divisor is 0 near N={n} ({rule.describe()}): the code divides by zero")
    lower = range(n - 1, max(n - radius, floor_size) - 1, -1)
    below = islice((m for m in lower if _changes_at(rule, m)), keep)
    above = islice((m for m in range(n + 1, n + radius + 1) if _changes_at(rule, m)), keep)
    return DivisorCheck(
        rule,
        n,
        (exact[0], exact[1], exact[2]),
        (code[0], code[1], code[2]),
        tuple(sorted([*below, *above])),
    )
