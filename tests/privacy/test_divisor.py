"""Divisor checks (docs/theory.md#divisor-dependence): exact rationals vs the code's float
expression."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest

from dpcheck.errors import ParameterError
from dpcheck.privacy.divisor import (
    Divisor,
    batch_over_n_rule,
    check_divisor,
    easgm_rule,
    feasgm_rule,
    opacus_rule,
)


def opacus_expr(n: int, b: int) -> int:
    """Opacus 1.x as written: int(len(dataset) * (1 / len(loader))), len(loader) = ceil(N/b)."""
    return int(n * (1 / math.ceil(n / b)))


@pytest.mark.parametrize(
    ("n", "divisors", "changes"),
    [(1000, (62, 62, 62), False), (1007, (62, 62, 63), True), (1008, (62, 63, 59), True)],
)
def test_opacus_reference(n: int, divisors: tuple[int, int, int], changes: bool) -> None:
    check = check_divisor(opacus_rule(63), n)
    assert check.code == divisors
    assert check.exact == tuple(Fraction(d) for d in divisors)
    assert check.changes is changes


def test_opacus_ratios() -> None:
    assert check_divisor(opacus_rule(63), 1007).s_add == pytest.approx(62 / 63, rel=1e-15)
    n1008 = check_divisor(opacus_rule(63), 1008)
    assert n1008.s_add == pytest.approx(63 / 59, rel=1e-15)
    assert n1008.s_remove == pytest.approx(62 / 63, rel=1e-15)


def test_robustness_note_lists_the_nearest_changes() -> None:
    check = check_divisor(opacus_rule(63), 1000)
    changing = [m for m in range(900, 1100) if len({opacus_expr(m + d, 63) for d in (-1, 0, 1)}) > 1]
    below = [m for m in changing if m < 1000][-2:]
    above = [m for m in changing if m > 1000][:2]
    assert check.nearest_changes == tuple(below + above)
    assert any("robustness" in note for note in check.notes())
    assert any("no normalisation leak" in note for note in check.notes())


def test_float_rounding_moves_a_floor() -> None:
    """int(100 * 0.29) == 28 while floor(100 * 29/100) == 29."""
    check = check_divisor(feasgm_rule(0.29), 100)
    assert check.code[1] == 28.0 and check.exact[1] == 29
    assert check.float_differs
    assert check.changes


def test_feasgm_examples() -> None:
    leak = check_divisor(feasgm_rule(Fraction(1, 100)), 999)
    assert leak.code[1:] == (9.0, 10.0) and leak.s_add == pytest.approx(0.9)
    mnist = check_divisor(feasgm_rule(Fraction(256, 60000)), 60000)
    assert mnist.code[1] == mnist.code[2] == 256.0  # no leak adding a record ...
    assert mnist.code[0] == 255.0  # ... but removing one moves the floor


def test_easgm_exact_one_minus_s() -> None:
    check = check_divisor(easgm_rule(Fraction(1, 100)), 60000)
    assert check.one_minus_s_add == pytest.approx(1 / 60001, rel=1e-12)
    assert check.changes


def test_constant_expected_batch_size_only_float_noise() -> None:
    """q = b/N makes N q = b exactly; the code's float product can still miss b."""
    check = check_divisor(batch_over_n_rule(63, Divisor.EXPECTED), 1000)
    assert not check.exact_changes
    assert all(abs(d - 63) < 1e-12 for d in check.code)


def test_bad_inputs() -> None:
    with pytest.raises(ParameterError):
        feasgm_rule(1.5)
    with pytest.raises(ParameterError):
        check_divisor(opacus_rule(63), 1)
    with pytest.raises(ParameterError):
        check_divisor(opacus_rule(2000), 1000)
    with pytest.raises(ParameterError):
        check_divisor(feasgm_rule(0.0001), 100)  # floor(N q) = 0
    with pytest.raises(ParameterError):
        opacus_rule(0)
