"""DP105 unpinned-dp-library: the DP library release is not pinned to one update rule.

Anchored on the requirement line, else on the library evidence. When the release was still
decided (every release of the API line the code calls behaves alike) the finding says that the
run is not reproducible; otherwise that the update rule cannot be known. The mechanism is then
undecided, so the bound states the claimed side only.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from dpcheck.model import Pipeline, Role
from dpcheck.pipelines.versions import resolve_opacus
from dpcheck.project import Project
from dpcheck.rules.accounting import library_accounts
from dpcheck.rules.anchors import anchor, entry
from dpcheck.rules.rule import BoundPolicy, Hit, PipelineRule

CLAIM_ONLY = ("the update rule depends on the library release: pin it, or run "
              "`dpcheck bound asgm|easgm|feasgm` with these inputs")


@dataclass(frozen=True)
class UnpinnedLibrary(Hit):
    """How the release was (not) decided (``reason``), and whether one was decided anyway."""

    reason: str
    decided: bool

    def message(self) -> str:
        if self.decided:
            return f"{self.reason}; still, which release runs is not reproducible"
        return f"{self.reason}: the update rule cannot be known"


def check(pipeline: Pipeline, project: Project) -> Iterator[UnpinnedLibrary]:
    if not library_accounts(pipeline):
        return
    resolution = resolve_opacus(project, pipeline.path)
    if resolution.pinned:
        return
    span = resolution.span or anchor(pipeline, Role.LIBRARY) or entry(pipeline)
    # the message says what the pin allows; how the release was decided anyway (by the API
    # line, say) is the pipeline's library evidence, listed under the finding
    yield UnpinnedLibrary(span, resolution.reason, pipeline.release is not None)


RULE = PipelineRule("DP105", check, BoundPolicy("sgm", claim_only=CLAIM_ONLY), site_fact=True)
