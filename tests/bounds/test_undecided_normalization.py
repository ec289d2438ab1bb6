"""The bound of a divisor of undecided kind, ASGM or EASGM (docs/theory.md#undecided-normalization):
its witness is the pointwise maximum of the ASGM and the EASGM witness curves, each computed here
by its own builder, and it shows no more leak than either of them."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

from dpcheck.bounds.corrected import Claim, asgm, asgm_or_easgm, normalized
from dpcheck.bounds.defaults import DEFAULT_ALPHAS
from dpcheck.bounds.request import BoundRequest
from dpcheck.cli import main
from dpcheck.privacy.labels import BoundCurve

CLAIM = Claim(1.0, 1e-5, DEFAULT_ALPHAS)


def _witnesses(q: float, sigma: float, steps: int, n: int) -> tuple[BoundCurve, BoundCurve, BoundCurve]:
    """(combined, ASGM alone, EASGM alone) witness curves of one parameter set, n = 1."""
    request = BoundRequest("asgm-or-easgm", sigma=sigma, q=q, n_records=n, steps=steps)
    both = asgm_or_easgm(request, CLAIM)
    assert both.guarantee is None
    alone_asgm = asgm(replace(request, mechanism="asgm"), CLAIM).witness
    alone_easgm = normalized(replace(request, mechanism="easgm"), CLAIM).witness
    assert both.witness is not None and alone_asgm is not None and alone_easgm is not None
    return both.witness.curve, alone_asgm.curve, alone_easgm.curve


# Parameter sets (q, sigma, T, N) where the two witness curves cross: each is the larger one at
# some alphas, so taking one of them would not do.
CROSSING = [(0.01, 1.0, 10, 30), (0.05, 1.0, 10, 10), (0.01, 2.0, 100, 100)]


@pytest.mark.parametrize("q, sigma, steps, n", CROSSING)
def test_the_witness_is_the_larger_of_the_two_witness_curves(q: float, sigma: float, steps: int, n: int) -> None:
    both, alone_asgm, alone_easgm = _witnesses(q, sigma, steps, n)
    assert np.array_equal(both.curve_alpha, alone_asgm.curve_alpha)
    assert np.array_equal(both.curve_alpha, alone_easgm.curve_alpha)
    a, e, b = alone_asgm.curve_beta, alone_easgm.curve_beta, both.curve_beta
    assert np.any(a > e) and np.any(e > a)
    assert np.all(b >= a) and np.all(b >= e)
    assert np.all((b == a) | (b == e))


@pytest.mark.parametrize("q, sigma, steps, n", CROSSING)
def test_the_combined_witness_shows_no_more_leak_than_either(q: float, sigma: float, steps: int, n: int) -> None:
    """Its delta at the claimed eps is at most each witness's (the sup of a minimum is at most the
    minimum of the sups), and so is its eps at the claimed delta."""
    both, alone_asgm, alone_easgm = _witnesses(q, sigma, steps, n)
    deltas = [c.delta_at_epsilon for c in (alone_asgm, alone_easgm)]
    epsilons = [c.epsilon_at_delta for c in (alone_asgm, alone_easgm)]
    assert both.delta_at_epsilon is not None and both.epsilon_at_delta is not None
    assert both.delta_at_epsilon <= min(d for d in deltas if d is not None) * (1 + 1e-9)
    assert both.epsilon_at_delta <= min(e for e in epsilons if e is not None) + 1e-9


@pytest.mark.parametrize("q, sigma, steps, n, dominant", [
    (0.05, 2.0, 100, 20, "asgm"),  # the ASGM witness is the larger curve at every sampled alpha
    (0.01, 1.0, 1000, 200, "easgm"),  # the EASGM witness is
])
def test_where_one_witness_dominates_the_combined_read_outs_are_its_own(
        q: float, sigma: float, steps: int, n: int, dominant: str) -> None:
    """The combined profile is read off its curve on a dense alpha grid; where one witness lies
    above the other everywhere, that gives back the dominant witness's own delta and eps (the
    optimistic PLD's, or the variance witness's closed form) to within the grid's error."""
    both, alone_asgm, alone_easgm = _witnesses(q, sigma, steps, n)
    top, other = (alone_asgm, alone_easgm) if dominant == "asgm" else (alone_easgm, alone_asgm)
    assert np.all(top.curve_beta > other.curve_beta)
    assert both.delta_at_epsilon == pytest.approx(top.delta_at_epsilon, rel=1e-3)
    assert both.epsilon_at_delta == pytest.approx(top.epsilon_at_delta, rel=1e-3)


def test_bound_command_computes_it(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bound", "asgm-or-easgm", "--sigma", "1", "--q", "0.01", "--steps", "10", "--N", "30",
                 "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["mechanism"] == "asgm-or-easgm" and out["guarantee"] is None
    assert out["witness"]["kind"] == "witness" and out["witness"]["label"] == "own"
    assert any("max(f_ASGM(alpha), f_EASGM(alpha))" in note for note in out["notes"])
    assert any("dim unknown" in note for note in out["notes"])
    assert out["computation"]["witness"].startswith("pointwise maximum of the curves of: PLD of T=10 rounds")
    assert out["verdict"] in ("violated", "unsupported")
    both, _, _ = _witnesses(0.01, 1.0, 10, 30)
    assert [p["beta"] for p in out["witness"]["curve"]] == pytest.approx(list(both.beta_at(DEFAULT_ALPHAS)))


def test_bound_command_needs_the_dataset_size(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bound", "asgm-or-easgm", "--sigma", "1", "--q", "0.02", "--steps", "100"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dpcheck: error: ") and "N (the dataset size)" in err
