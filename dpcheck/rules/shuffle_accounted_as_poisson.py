"""DP102 shuffle-accounted-as-poisson: fixed-size batches of a shuffled or fixed order accounted
by an accountant that assumes a fresh random subsample at every step: Poisson subsampling, or
sampling without replacement (dp_accounting's ``SampledWithoutReplacementDpEvent``, autodp). Both
model steps whose batches are drawn independently of the others; an epoch of disjoint batches is
the same mismatch for either (the rule keeps its id and name; the message says which
assumption).

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


#: What each subsampling assumption means, as the message says it.
SUBSAMPLING = {
    Assumption.SGM_POISSON: "Poisson subsampling",
    Assumption.SGM_WITHOUT_REPLACEMENT: "a random subsample drawn without replacement at "
                                        "every step",
}


@dataclass(frozen=True)
class ShuffleAccountedAsPoisson(Hit):
    """Shuffled batches accounted by ``accountant``, which assumes the subsampling
    ``assumption`` (Poisson unless told)."""

    accountant: str
    assumption: str = SUBSAMPLING[Assumption.SGM_POISSON]

    def message(self) -> str:
        return (f"batches are fixed-size slices of a shuffled or fixed order, but "
                f"{self.accountant} assumes {self.assumption}")


def check(pipeline: Pipeline, project: Project) -> Iterator[ShuffleAccountedAsPoisson]:
    if pipeline.sampling != SamplingKind.SHUFFLE \
            or pipeline.accountant.assumes not in SUBSAMPLING \
            or batches_per_epoch(pipeline.params) == 1:
        return
    span = anchor(pipeline, Role.SAMPLER) or entry(pipeline)
    yield ShuffleAccountedAsPoisson(span, pipeline.accountant.name,
                                    SUBSAMPLING[Assumption(pipeline.accountant.assumes)])


RULE = PipelineRule("DP102", check, BoundPolicy("shuffle"))
