"""DP106 unclassified-update: an SGM-accounted pipeline whose update rule or sampling could not
be decided, or a pipeline whose analysis stopped before it was complete (its work budget ran
out), whatever its accountant.

A fallback rule: evaluated only when no other rule fired on the pipeline (those already say
what is wrong). Anchored where the update was left undecided, with the builder's reason. The
mechanism is undecided, so the bound states the claimed side only.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from dpcheck.model import Mechanism, Pipeline, Role, SamplingKind
from dpcheck.project import Project
from dpcheck.rules.accounting import accounted_as_sgm
from dpcheck.rules.anchors import anchor, entry
from dpcheck.rules.rule import BoundPolicy, Hit, PipelineRule

CLAIM_ONLY = ("dpcheck could not decide the update rule or the sampling: check them by hand and "
              "run `dpcheck bound asgm|easgm|feasgm|shuffle` with these inputs")


@dataclass(frozen=True)
class UnclassifiedUpdate(Hit):
    """The ``parts`` left undecided (update rule, sampling), why the update rule was (None when
    it was decided), and who accounts the pipeline as SGM."""

    parts: tuple[str, ...]
    reason: str | None
    accountant: str

    def message(self) -> str:
        why = f" ({self.reason})" if self.reason is not None else ""
        return (f"dpcheck could not decide the {' or the '.join(self.parts)} of this pipeline"
                f"{why}; {self.accountant} accounts it as SGM with Poisson sampling, which is "
                "unverified")


@dataclass(frozen=True)
class IncompleteAnalysis(Hit):
    """A pipeline dpcheck could not finish analysing, and why (``Pipeline.incomplete``)."""

    reason: str

    def message(self) -> str:
        return (f"dpcheck could not finish analysing this pipeline: {self.reason}; what it "
                "reports about the pipeline holds, the rest is unverified")


def check(pipeline: Pipeline, project: Project) -> Iterator[UnclassifiedUpdate | IncompleteAnalysis]:
    if pipeline.incomplete is not None:
        yield IncompleteAnalysis(anchor(pipeline, Role.UPDATE) or entry(pipeline),
                                 pipeline.incomplete)
        return
    parts = tuple(part for part, unknown in (
        ("update rule", pipeline.mechanism == Mechanism.UNKNOWN),
        ("sampling", pipeline.sampling == SamplingKind.UNKNOWN)) if unknown)
    if not parts or not accounted_as_sgm(pipeline):
        return
    undecided = pipeline.undecided
    span = (undecided.span if undecided else None) or anchor(pipeline, Role.UPDATE) \
        or entry(pipeline)
    accountant = pipeline.accountant.name if pipeline.accountant.name != "none" else (
        "the library's default accountant")
    yield UnclassifiedUpdate(span, parts, undecided.reason if undecided else None, accountant)


RULE = PipelineRule("DP106", check, BoundPolicy("sgm", claim_only=CLAIM_ONLY), fallback=True)
