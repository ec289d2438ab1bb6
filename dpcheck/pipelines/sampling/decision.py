"""The sampling decision (``Sampling``) and what every reader of batch formation shares: the
scheme titles of the sampler table, the agreement of several decisions, where a site is, and
the dataset a decision's loader batches (``loader_dataset``, read for the dataset size)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from dpcheck.model import Evidence, Span
from dpcheck.pipelines.scope import Ctx
from dpcheck.samplers import UNKNOWN, sampler_table
from dpcheck.sites.nodes import Call, DictDisplay, Node
from dpcheck.sites.views import Statement

#: TF estimator input functions over in-memory arrays (``tf.compat.v1.estimator.inputs``).
INPUT_FNS = frozenset({"numpy_input_fn", "pandas_input_fn"})
#: Names saying a loader or its data is for evaluation, not training.
EVAL_NAME = re.compile(r"(test|val|eval|valid)", re.I)
#: The note of a pipeline in which no sampling site at all was found (no loop over a loader, no
#: index draw): ``full_batch`` reads it.
NO_SAMPLING = "no training loop over a data loader or sampled indices found"


@dataclass
class Sampling:
    """The sampling decision, its evidence, and the loader call the batch size comes from."""

    kind: str = "unknown"
    evidence: list[Evidence] = field(default_factory=list)
    loader: tuple[Ctx, Call] | None = None
    note: str = ""
    rate: tuple[Ctx, Node] | None = None
    steps: tuple[Ctx, Node] | None = None
    population: tuple[Ctx, Node] | None = None
    batch: tuple[Ctx, Node] | None = None
    #: The batches of one pass over the loader (a project sampler's ``range``): ``steps`` only
    #: once multiplied by the passes the training loop makes (``loader_passes``).
    per_pass: tuple[Ctx, Node] | None = None
    #: The scheme, a kind of the sampler table ("" until decided: see ``sampler``).
    scheme: str = ""

    @property
    def sampler(self) -> str:
        """The scheme: as decided, else what the coarse kind alone says (fixed-size batches of
        an order not decided are "shuffled-or-sequential")."""
        if self.scheme:
            return self.scheme
        return {"poisson": "poisson", "shuffle": "shuffled-or-sequential"}.get(self.kind, self.kind)


def of_scheme(scheme: str, evidence: list[Evidence], loader: tuple[Ctx, Call] | None = None,
              **found: Any) -> Sampling:
    """A decision for a kind of the sampler table: its coarse kind is the table's ``sampling``."""
    kind = UNKNOWN if scheme == UNKNOWN else sampler_table().kind(scheme).sampling
    return Sampling(kind, evidence, loader, scheme=scheme, **found)


def agreed(group: list[Sampling]) -> Sampling:
    """One decision from decisions of the same coarse kind. Once-per-epoch fixed-size schemes
    that differ (a permutation drawn once, then batches taken in order by a non-shuffling input
    fn: a persistent shuffle) are "shuffle", whose witness and guarantee hold for every one of
    them; a "sequential" witness would assume an order the adversary knows."""
    first, *_ = group
    schemes = {d.sampler for d in group}
    kinds = sampler_table().kinds
    if len(schemes) > 1 and all(s in kinds and kinds[s].fixed_size and kinds[s].once_per_epoch for s in schemes):
        return replace(first, scheme="shuffle", evidence=[e for d in group for e in d.evidence])
    return first


def title(scheme: str) -> str:
    """The table's title of a kind (``unknown`` for none)."""
    return sampler_table().kinds[scheme].title if scheme in sampler_table().kinds else scheme


def site(ctx: Ctx, expr: Node | None, stmt: Statement) -> Span:
    """Where a sampling site is: the call itself, else its statement."""
    if isinstance(expr, Call):
        return Span(ctx.path, *expr.position)
    return Span(ctx.path, stmt.line, stmt.column)


def loader_dataset(call: Call) -> Node | None:
    """The dataset a loader call batches: ``DataLoader(dataset)``/``dataset=``, the ``x`` of an
    estimator input fn (the first array of an ``x={'name': array}`` dict), the dataset whose
    ``to_tf_dataset`` made the batches (a call the loader reader took for that method), the
    tf.data dataset a ``.batch(B)`` batches."""
    if call.method in ("to_tf_dataset", "batch", "padded_batch") and call.receiver is not None:
        return call.receiver
    if call.method in INPUT_FNS:
        data = call.argument(0, "x")
        if isinstance(data, DictDisplay):
            return next((value for _, value in data.items), None)
        return data
    return next(iter(call.args), call.kwargs.get("dataset"))
