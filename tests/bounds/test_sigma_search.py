"""The sigma dpcheck reproduces for ``make_private_with_epsilon``, against Opacus' own search
(``get_noise_multiplier``) and its own accountants, over a grid that includes the Opacus
tutorial's parameters (eps = 50, delta = 1e-5, batch 512 of 50,176, 20 epochs)."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable

import pytest

from dpcheck.bounds.claimed import accountant_model, opacus_sigma, searched_sigma

opacus_utils = pytest.importorskip("opacus.accountants.utils")
opacus_accountants = pytest.importorskip("opacus.accountants")

TUTORIAL = (50.0, 1e-5, 512 / 50176, 1960)
"""The tutorial's target epsilon, delta, sample rate and steps (int(20 / q))."""
GRID = [(1.0, 1e-5, 0.05, 200), (2.0, 1e-5, 0.01, 300), (8.0, 1e-6, 0.02, 500), (10.0, 1e-5, 0.1, 100)]
TOLERANCE = 0.01
"""``get_noise_multiplier``'s default epsilon_tolerance, which dpcheck's search uses too."""
PRV_ERROR = 0.01
"""``PRVAccountant.get_epsilon``'s default eps_error: its estimate is within this of the truth."""
PLD_GAP = 2e-3
"""Relative room between dpcheck's pessimistic PLD epsilon and the true one at the default grid
(0.1% or less measured on the grid; the gap is second order in the grid step)."""


def prv_epsilon(sigma: float, q: float, steps: int, delta: float) -> float:
    """What Opacus' PRV accountant (``PrivacyEngine``'s default) prints for these parameters."""
    accountant = opacus_accountants.PRVAccountant()
    accountant.history = [(sigma, q, steps)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(accountant.get_epsilon(delta))


def recorded(epsilon_of: Callable[[float], float], trail: list[tuple[float, float]]) -> Callable[[float], float]:
    def ask(sigma: float) -> float:
        value = epsilon_of(sigma)
        trail.append((sigma, value))
        return value
    return ask


@pytest.mark.parametrize("target, delta, q, steps", [*GRID, TUTORIAL])
def test_prv_search_lands_where_opacus_prv_accountant_agrees(target: float, delta: float, q: float,
                                                             steps: int) -> None:
    """dpcheck's sigma has pessimistic epsilon in (target - tolerance, target); Opacus' PRV
    estimate at that sigma is within PRV_ERROR of the truth, which lies below the pessimistic
    value and at most PLD_GAP under it."""
    sigma = searched_sigma("opacus-prv", "1.6.0", target, delta, q, steps)
    printed = prv_epsilon(sigma, q, steps, delta)
    assert target - TOLERANCE - PRV_ERROR - PLD_GAP * target <= printed <= target + PRV_ERROR


@pytest.mark.parametrize("target, delta, q, steps", [*GRID, TUTORIAL])
def test_rdp_search_is_opacus_get_noise_multiplier(target: float, delta: float, q: float, steps: int) -> None:
    ours = searched_sigma("opacus-rdp", "1.6.0", target, delta, q, steps)
    theirs = opacus_utils.get_noise_multiplier(target_epsilon=target, target_delta=delta, sample_rate=q,
                                               steps=steps, accountant="rdp")
    assert math.isclose(ours, theirs, rel_tol=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("target, delta, q, steps", [*GRID, TUTORIAL])
def test_prv_search_is_opacus_get_noise_multiplier_up_to_the_accountants(target: float, delta: float, q: float,
                                                                         steps: int) -> None:
    """Opacus' own search with its PRV accountant (about a minute for the tutorial): both
    sigmas meet both accountants' stopping rule up to the accountants' difference."""
    theirs = opacus_utils.get_noise_multiplier(target_epsilon=target, target_delta=delta, sample_rate=q,
                                               steps=steps, accountant="prv")
    ours = searched_sigma("opacus-prv", "1.6.0", target, delta, q, steps)
    model = accountant_model("opacus-prv", "1.6.0")
    slack = TOLERANCE + PRV_ERROR + PLD_GAP * target
    assert abs(model.epsilon(q, theirs, steps, delta) - target) <= slack
    assert abs(prv_epsilon(ours, q, steps, delta) - target) <= slack
    assert ours == pytest.approx(theirs, rel=1e-2)


@pytest.mark.parametrize("target, delta, q, steps", [*GRID[:2], (3.0, 1e-5, 0.004, 2500), TUTORIAL])
def test_the_search_asks_the_same_questions_with_one_direction_answering(
    target: float, delta: float, q: float, steps: int
) -> None:
    """Each step of the search decides "epsilon below the target?"; answered by the first
    direction above the target, it comes out as with the full (two-sided) epsilon: the same
    sigmas are asked, the same kept, the same returned."""
    model = accountant_model("opacus-prv", "1.6.0")
    full: list[tuple[float, float]] = []
    lazy: list[tuple[float, float]] = []
    expected = opacus_sigma(target, delta, q, steps, recorded(lambda s: model.epsilon(q, s, steps, delta), full))
    found = opacus_sigma(target, delta, q, steps,
                         recorded(lambda s: model.epsilon_above(q, s, steps, delta, target), lazy))
    assert found == expected == searched_sigma("opacus-prv", "1.6.0", target, delta, q, steps)
    assert [s for s, _ in lazy] == [s for s, _ in full]
    for (_, quick), (_, exact) in zip(lazy, full):
        assert quick == exact if exact < target else target < quick <= exact

