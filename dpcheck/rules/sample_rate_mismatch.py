"""DP103 sample-rate-mismatch: the accountant's q or step count differs from the code's.

Both sides must be resolved and come from different places (one value read twice is not a
mismatch); values equal up to a relative 1e-6 agree. Anchored on the first mismatching argument
of the accountant call, else on the call. The bound is SGM at the accountant's numbers (the
claim) against SGM at the code's.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from dpcheck.model import ParamValue, Pipeline, Role
from dpcheck.project import Project
from dpcheck.rules.anchors import anchor
from dpcheck.rules.rule import BoundPolicy, Hit, PipelineRule

RELATIVE_TOLERANCE = 1e-6
#: The accountant arguments compared with the code, and the evidence role of each.
COMPARED: tuple[tuple[str, Role], ...] = (
    ("q", Role.ACCOUNTANT_Q),
    ("steps", Role.ACCOUNTANT_STEPS),
)


@dataclass(frozen=True)
class Mismatch:
    """One parameter given to the accountant as ``claimed`` while the code has ``actual``;
    ``overridden_by`` names the override that supplied the code's value (None: the code)."""

    name: str
    claimed: float
    actual: float
    overridden_by: str | None = None

    @property
    def where(self) -> str:
        """Where the code's value came from: the code, or the override that replaced it."""
        return "in the code" if self.overridden_by is None else f"from {self.overridden_by}"


@dataclass(frozen=True)
class SampleRateMismatch(Hit):
    """The parameters (q, steps) whose accountant value differs from the code's."""

    mismatches: tuple[Mismatch, ...]

    def message(self) -> str:
        return "; ".join(f"{m.name} = {m.claimed:g} given to the accountant, "
                         f"{m.actual:g} {m.where}" for m in self.mismatches)


def _mismatch(name: str, claimed: ParamValue | None, actual: ParamValue | None) -> Mismatch | None:
    """The mismatch of one parameter: both sides resolved, from different places, different."""
    if claimed is None or actual is None or claimed.value is None or actual.value is None:
        return None
    if claimed.span is not None and claimed.span == actual.span:
        return None
    scale = max(abs(claimed.value), abs(actual.value))
    if scale > 0 and abs(claimed.value - actual.value) > RELATIVE_TOLERANCE * scale:
        override = (actual.expression or "").rpartition(": ")[0] or "an override" \
            if actual.source == "override" else None
        return Mismatch(name, claimed.value, actual.value, override)
    return None


def mismatched(pipeline: Pipeline) -> tuple[tuple[Mismatch, Role], ...]:
    """The parameters the accountant is given differently from the code, each with the
    evidence role of its accountant argument (empty without an accountant call)."""
    accountant = pipeline.accountant
    if accountant.span is None:
        return ()
    given = {"q": accountant.q, "steps": accountant.steps}
    found = ((_mismatch(name, given[name], pipeline.params.get(name)), role)
             for name, role in COMPARED)
    return tuple((mismatch, role) for mismatch, role in found if mismatch is not None)


def check(pipeline: Pipeline, project: Project) -> Iterator[SampleRateMismatch]:
    found = mismatched(pipeline)
    if found:
        span = next((s for _, role in found if (s := anchor(pipeline, role))), None)
        yield SampleRateMismatch(span or pipeline.accountant.span,  # type: ignore[arg-type]
                                 tuple(mismatch for mismatch, _ in found))


RULE = PipelineRule("DP103", check, BoundPolicy("sgm", claimed_by_accountant=True))
