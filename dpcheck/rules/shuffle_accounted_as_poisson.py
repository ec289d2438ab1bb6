"""DP102 shuffle-accounted-as-poisson: batches that are not Poisson (every fixed-size scheme, and
balls-and-bins) accounted by an accountant that assumes Poisson subsampling.

The scheme is the pipeline's sampler kind (``dpcheck/data/samplers.json``), which names it in the
message and gives its severity (balls-and-bins: ``info``, its privacy is close to Poisson's). One
batch per epoch is the whole dataset at every step: Poisson sampling with q = 1 draws the same
batch, so nothing is mis-accounted and the rule stays silent. Anchored on the sampler; the bound
is the one of the scheme.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from dpcheck.model import Assumption, Pipeline, Role, Severity
from dpcheck.pipelines.params import batches_per_epoch
from dpcheck.project import Project
from dpcheck.rules.anchors import anchor, entry
from dpcheck.rules.rule import BoundPolicy, Hit, PipelineRule
from dpcheck.samplers import SamplerKind, kind_of_pipeline


@dataclass(frozen=True)
class ShuffleAccountedAsPoisson(Hit):
    """Batches of the sampler ``kind`` accounted by ``accountant``, which assumes Poisson
    subsampling."""

    accountant: str
    kind: SamplerKind

    def message(self) -> str:
        return (f"batch sampling: {self.kind.title}, but {self.accountant} assumes Poisson "
                "subsampling")

    def severity(self, catalog: Severity) -> Severity:
        scheme = Severity(self.kind.dp102) if self.kind.dp102 else catalog
        return scheme if scheme.rank < catalog.rank else catalog


def check(pipeline: Pipeline, project: Project) -> Iterator[ShuffleAccountedAsPoisson]:
    kind = kind_of_pipeline(pipeline.sampler, pipeline.sampling.value)
    if kind is None or kind.dp102 is None \
            or pipeline.accountant.assumes != Assumption.SGM_POISSON \
            or batches_per_epoch(pipeline.params) == 1:
        return
    span = anchor(pipeline, Role.SAMPLER) or entry(pipeline)
    yield ShuffleAccountedAsPoisson(span, pipeline.accountant.name, kind)


RULE = PipelineRule("DP102", check, BoundPolicy("shuffle"))
