"""DP102 shuffle-accounted-as-poisson: batches that are not drawn the way the accountant assumes
(every fixed-size scheme, and balls-and-bins) accounted by an accountant that assumes a fresh
random subsample at every step: Poisson subsampling, or sampling without replacement
(dp_accounting's ``SampledWithoutReplacementDpEvent``, autodp). Both model steps whose batches
are drawn independently of the others; an epoch of disjoint batches is the same mismatch for
either (the rule keeps its id and name; the message says which assumption). Fixed-size subsets
drawn afresh every step are exactly what a without-replacement accountant assumes: no finding.

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


#: The sampler kind a without-replacement accountant models (a fresh fixed-size subset per step).
WITHOUT_REPLACEMENT_KIND = "fixed-subsets"
#: What each subsampling assumption means, as the message says it.
SUBSAMPLING = {
    Assumption.SGM_POISSON: "Poisson subsampling",
    Assumption.SGM_WITHOUT_REPLACEMENT: "a random subsample drawn without replacement at "
                                        "every step",
}


@dataclass(frozen=True)
class ShuffleAccountedAsPoisson(Hit):
    """Batches of the sampler ``kind`` accounted by ``accountant``, which assumes the
    subsampling ``assumption``."""

    accountant: str
    kind: SamplerKind
    assumption: str

    def message(self) -> str:
        return (f"batch sampling: {self.kind.title}, but {self.accountant} assumes "
                f"{self.assumption}")

    def severity(self, catalog: Severity) -> Severity:
        scheme = Severity(self.kind.dp102) if self.kind.dp102 else catalog
        return scheme if scheme.rank < catalog.rank else catalog


def check(pipeline: Pipeline, project: Project) -> Iterator[ShuffleAccountedAsPoisson]:
    kind = kind_of_pipeline(pipeline.sampler, pipeline.sampling.value)
    assumes = pipeline.accountant.assumes
    if kind is None or kind.dp102 is None or assumes not in SUBSAMPLING \
            or batches_per_epoch(pipeline.params) == 1:
        return
    if assumes == Assumption.SGM_WITHOUT_REPLACEMENT and kind.name == WITHOUT_REPLACEMENT_KIND:
        return
    span = anchor(pipeline, Role.SAMPLER) or entry(pipeline)
    yield ShuffleAccountedAsPoisson(span, pipeline.accountant.name, kind,
                                    SUBSAMPLING[Assumption(assumes)])


RULE = PipelineRule("DP102", check, BoundPolicy("shuffle"))
