"""DP101 normalized-update-accounted-as-sgm: a data-dependent normalization accounted as SGM.

Fires on a pipeline whose update divides the noisy sum by a data-dependent batch size (ASGM,
EASGM, FEASGM, or ASGM|EASGM: a size of data that is the batch or the dataset, undecided which)
while its epsilon comes from an SGM accountant or from the DP library's own accounting. Anchored
on the divisor of hand-written code, else on the update. The bound is the corrected one of the
update's mechanism (docs/theory.md#normalized-mechanisms); for ASGM|EASGM its witness holds for
both (docs/theory.md#undecided-normalization); a FEASGM divisor
that is the same at N-1, N and N+1 leaks nothing at this N (docs/theory.md#divisor-dependence),
so the finding becomes ``info`` and says at which N it would leak.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from dpcheck.model import Finding, Mechanism, Pipeline, Role, Severity
from dpcheck.project import Project
from dpcheck.rules.accounting import accounted_as_sgm, accountant_phrase
from dpcheck.rules.anchors import anchor, entry
from dpcheck.rules.rule import BoundPolicy, Hit, PipelineRule

if TYPE_CHECKING:
    from dpcheck.privacy.divisor import DivisorCheck


@dataclass(frozen=True)
class NormalizedUpdate(Hit):
    """A normalized ``mechanism`` accounted as SGM by ``accountant`` (a phrase naming it)."""

    mechanism: Mechanism
    accountant: str

    def message(self) -> str:
        if self.mechanism == Mechanism.ASGM_OR_EASGM:
            return ("the update is ASGM or EASGM (the noisy sum is divided by a size of the "
                    "private data, the batch or the dataset: dpcheck cannot decide which) but "
                    f"{self.accountant} accounts it as SGM")
        return (f"the update is {self.mechanism} (the noisy sum is divided by a data-dependent "
                f"batch size) but {self.accountant} accounts it as SGM")


def check(pipeline: Pipeline, project: Project) -> Iterator[NormalizedUpdate]:
    if not pipeline.mechanism.normalized or not accounted_as_sgm(pipeline):
        return
    span = anchor(pipeline, Role.DIVISOR) if pipeline.library is None else None
    span = span or anchor(pipeline, Role.UPDATE) or entry(pipeline)
    yield NormalizedUpdate(span, pipeline.mechanism, accountant_phrase(pipeline, project))


#: The ``dpcheck bound`` mechanism of each normalized update rule.
BOUND_MECHANISMS: dict[Mechanism, str] = {
    Mechanism.ASGM: "asgm",
    Mechanism.EASGM: "easgm",
    Mechanism.FEASGM: "feasgm",
    Mechanism.ASGM_OR_EASGM: "asgm-or-easgm",
}


def bound_mechanism(pipeline: Pipeline) -> str | None:
    """The corrected bound of the update's own mechanism (``BOUND_MECHANISMS``)."""
    return BOUND_MECHANISMS.get(pipeline.mechanism)


def downgrade(finding: Finding, divisor: DivisorCheck) -> Finding:
    """A FEASGM divisor that does not change at N-1, N, N+1 makes the finding an info note."""
    if divisor.changes:
        return finding
    sizes = ", ".join(str(n) for n in divisor.nearest_changes) or "none within 10000"
    message = f"{finding.message}; no leak at this N={divisor.n}; leaks at N ∈ {{{sizes}}}"
    return replace(finding, severity=Severity.INFO, message=message)


RULE = PipelineRule("DP101", check, BoundPolicy(bound_mechanism, downgrade=downgrade))
