"""DP104 low-noise-shuffle: sampling that puts every example in one batch per epoch (shuffled,
sequential, buffered, balls-and-bins) with sigma below 1/sqrt(2 ln M).

M is the number of batches per epoch (floor(N/b) with ``drop_last``, else ceil(N/b)); below
that threshold no favourable guarantee exists for shuffled DP-SGD
(docs/theory.md#shuffle-threshold). Anchored where the user hands the noise over. The bound is
the shuffling one.

The threshold falls as M grows, so the rule is decidable without counting M when sigma is below
the threshold of the largest M the code can have: M <= N (every batch holds an example), and N
<= ``MAX_BATCHES_PER_EPOCH`` = 10^12 when N is not known. That bound is far above any training
set (the largest public ones hold ~10^10 examples: LAION-5B 5.85·10^9 image-text pairs) and above
any epoch a training run takes (10^12 optimizer steps); its threshold is 1/sqrt(2 ln 10^12) =
0.1345, so sigma < 0.134 (the sigma = 0.1 of low-noise experiments: M would have to exceed
5·10^21) is flagged whatever N and the batch size are, and the message says that M was bounded,
not counted.

A noise multiplier of zero is not low noise but no mechanism at all: the run has DP switched off
(a ``--noise 0`` default, a non-private baseline) and makes no privacy claim for this rule to
refute, so it is left out.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from dpcheck.model import Pipeline, Role
from dpcheck.pipelines.params import batches_per_epoch
from dpcheck.privacy.shuffle_threshold import sigma_threshold
from dpcheck.project import Project
from dpcheck.rules.anchors import entry, users_side
from dpcheck.rules.rule import BoundPolicy, Hit, PipelineRule
from dpcheck.samplers import kind_of_pipeline


#: The most shuffled batches per epoch assumed when they cannot be counted and N is unknown (see
#: the module docstring).
MAX_BATCHES_PER_EPOCH = 10**12


@dataclass(frozen=True)
class LowNoiseShuffle(Hit):
    """Noise multiplier ``sigma`` under ``threshold`` = 1/sqrt(2 ln ``rounds``); ``counted``
    False when ``rounds`` is not the code's M but the largest M it can have (``bounded_by``
    says why), so the inequality holds for every M up to it."""

    sigma: float
    threshold: float
    rounds: int
    kind: str
    counted: bool = True
    bounded_by: str = ""

    def message(self) -> str:
        if not self.counted:
            return (f"noise multiplier {self.sigma:g} < 1/sqrt(2 ln M) for every number M of "
                    f"batches per epoch ({self.kind}) up to {_count(self.rounds)} ({self.bounded_by}; "
                    f"the threshold there is {self.threshold:.3f}): no favourable privacy "
                    "guarantee exists, whatever the dataset size and batch size")
        return (f"noise multiplier {self.sigma:g} < 1/sqrt(2 ln M) = {self.threshold:.3f} with "
                f"M = {self.rounds} batches per epoch ({self.kind}): no favourable privacy "
                "guarantee exists")


def _count(rounds: int) -> str:
    """``10^12`` for the assumed maximum, the plain number otherwise."""
    return "10^12" if rounds == MAX_BATCHES_PER_EPOCH else str(rounds)


def check(pipeline: Pipeline, project: Project) -> Iterator[LowNoiseShuffle]:
    kind = kind_of_pipeline(pipeline.sampler, pipeline.sampling.value)
    if kind is None or not kind.dp104:
        return
    sigma = pipeline.params.get("sigma")
    if sigma is None or sigma.value is None or sigma.value <= 0:
        return  # no noise: DP switched off (a non-private run), not a low-noise DP run
    span = users_side(pipeline, Role.NOISE) or sigma.span or entry(pipeline)
    rounds = batches_per_epoch(pipeline.params)
    if rounds is not None:
        threshold = sigma_threshold(rounds) if rounds >= 2 else 0.0
        if sigma.value < threshold:
            yield LowNoiseShuffle(span, sigma.value, threshold, rounds, kind.title)
        return
    most, why = _most_batches(pipeline)
    if most >= 2 and sigma.value < (threshold := sigma_threshold(most)):
        yield LowNoiseShuffle(span, sigma.value, threshold, most, kind.title, counted=False,
                              bounded_by=why)


def _most_batches(pipeline: Pipeline) -> tuple[int, str]:
    """The largest M the pipeline can have when it cannot be counted, and why: N (batches of
    at least one example) when N is known, else ``MAX_BATCHES_PER_EPOCH``."""
    size = pipeline.params.get("N")
    if size is not None and size.value is not None and size.value >= 1:
        return int(size.value), f"M <= N = {int(size.value)}; the batch size is unknown"
    return MAX_BATCHES_PER_EPOCH, "the dataset size is unknown; no dataset reaches 10^12 examples"


RULE = PipelineRule("DP104", check, BoundPolicy("shuffle"))
