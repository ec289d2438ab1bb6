"""DP102 shuffle-accounted-as-poisson: fixed-size batches of a shuffled or fixed order accounted
by an accountant that assumes Poisson subsampling.

One batch per epoch is the whole dataset at every step: Poisson sampling with q = 1 draws the
same batch, so nothing is mis-accounted and the rule stays silent. Anchored on the sampler; the
bound is the shuffling one.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from dpcheck.model import Assumption, Pipeline, Role, SamplingKind
from dpcheck.pipelines.params import batches_per_epoch
from dpcheck.project import Project
from dpcheck.rules.anchors import anchor, entry
from dpcheck.rules.rule import BoundPolicy, Hit, PipelineRule


@dataclass(frozen=True)
class ShuffleAccountedAsPoisson(Hit):
    """Shuffled batches accounted by ``accountant``, which assumes Poisson subsampling."""

    accountant: str

    def message(self) -> str:
        return (f"batches are fixed-size slices of a shuffled or fixed order, but "
                f"{self.accountant} assumes Poisson subsampling")


def check(pipeline: Pipeline, project: Project) -> Iterator[ShuffleAccountedAsPoisson]:
    if pipeline.sampling != SamplingKind.SHUFFLE \
            or pipeline.accountant.assumes != Assumption.SGM_POISSON \
            or batches_per_epoch(pipeline.params) == 1:
        return
    span = anchor(pipeline, Role.SAMPLER) or entry(pipeline)
    yield ShuffleAccountedAsPoisson(span, pipeline.accountant.name)


RULE = PipelineRule("DP102", check, BoundPolicy("shuffle"))
