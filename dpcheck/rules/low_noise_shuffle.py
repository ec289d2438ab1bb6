"""DP104 low-noise-shuffle: sampling that puts every example in one batch per epoch (shuffled,
sequential, buffered, balls-and-bins) with sigma below 1/sqrt(2 ln M).

M is the number of batches per epoch (floor(N/b) with ``drop_last``, else ceil(N/b)); below
that threshold no favourable guarantee exists for shuffled DP-SGD
(docs/theory.md#shuffle-threshold). Anchored where the user hands the noise over. The bound is
the shuffling one.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from dpcheck.model import Pipeline, Role
from dpcheck.pipelines.params import batches_per_epoch
from dpcheck.privacy.shuffle import sigma_threshold
from dpcheck.project import Project
from dpcheck.rules.anchors import entry, users_side
from dpcheck.rules.rule import BoundPolicy, Hit, PipelineRule
from dpcheck.samplers import kind_of_pipeline


@dataclass(frozen=True)
class LowNoiseShuffle(Hit):
    """Noise multiplier ``sigma`` under ``threshold`` = 1/sqrt(2 ln ``rounds``)."""

    sigma: float
    threshold: float
    rounds: int
    kind: str

    def message(self) -> str:
        return (f"noise multiplier {self.sigma:g} < 1/sqrt(2 ln M) = {self.threshold:.3f} with "
                f"M = {self.rounds} batches per epoch ({self.kind}): no favourable privacy "
                "guarantee exists")


def check(pipeline: Pipeline, project: Project) -> Iterator[LowNoiseShuffle]:
    kind = kind_of_pipeline(pipeline.sampler, pipeline.sampling.value)
    if kind is None or not kind.dp104:
        return
    sigma = pipeline.params.get("sigma")
    rounds = batches_per_epoch(pipeline.params)
    if sigma is None or sigma.value is None or rounds is None or rounds < 2:
        return
    threshold = sigma_threshold(rounds)
    if sigma.value < threshold:
        span = users_side(pipeline, Role.NOISE) or sigma.span or entry(pipeline)
        yield LowNoiseShuffle(span, sigma.value, threshold, rounds, kind.title)


RULE = PipelineRule("DP104", check, BoundPolicy("shuffle"))
