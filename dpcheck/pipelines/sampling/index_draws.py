"""The sampling a statement's index draws make, read per step of a training loop over
``range``: Bernoulli masks (``rand(n) < q``, ``rand(n) > 1 - q``, ``binomial(1, q, n)``) are
Poisson; a permutation cut into fixed slices is shuffle, its prefix drawn afresh each step a
fixed-size subset; a draw of B indices selects by its ``replace=`` switch, and a draw with
replacement compared for equality with a batch number allocates examples to batches
(balls-and-bins). TF input sites in the same statements (``tf_inputs``) are read here too.
Draws are recognised by import-qualified name through the sampler table."""

from __future__ import annotations

from typing import Any

from dpcheck.model import Evidence
from dpcheck.pipelines.handwritten import assigned_names
from dpcheck.pipelines.hf_datasets import is_to_tf_dataset
from dpcheck.pipelines.provenance import Provenance
from dpcheck.pipelines.sampling.decision import (
    EVAL_NAME,
    INPUT_FNS,
    Sampling,
    of_scheme,
    site,
    title,
)
from dpcheck.pipelines.sampling.sampler_calls import SamplerCalls
from dpcheck.pipelines.sampling.tf_inputs import (
    input_fn,
    keras_fit,
    shuffle_buffer,
    shuffled_batches,
    to_tf_dataset,
)
from dpcheck.pipelines.scope import Ctx
from dpcheck.pipelines.vocabulary import calls_in
from dpcheck.samplers import SamplerApi
from dpcheck.sites.nodes import BinOp, Call, Compare, Name, Node, Num, Seq, Slice, Subscript, walk
from dpcheck.sites.views import Statement


class IndexDraws:
    """Reads the index sampling of statements (see the module docstring)."""

    def __init__(self, calls: SamplerCalls) -> None:
        self.calls = calls
        self.index = calls.index
        self.provenance = Provenance(calls.index)

    def in_statement(self, stmt: Statement, ctx: Ctx) -> list[Sampling]:
        """The sampling sites of one statement, each a decision."""
        found: list[Sampling] = []
        steps = self.index.iterations(ctx, stmt)
        subscripts = [item for item in walk(stmt.expr) if isinstance(item, Subscript)]
        subscripted = {id(item.value): item.index for item in subscripts}
        indexing = {id(item.index) for item in subscripts}
        for item in walk(stmt.expr):
            if isinstance(item, Call):
                found.extend(self._call(item, stmt, ctx, steps, subscripted.get(id(item)),
                                        id(item) in indexing))
            elif isinstance(item, Compare):
                found.extend(self._threshold(item, stmt, ctx, steps))
        return found

    def _call(self, call: Call, stmt: Statement, ctx: Ctx, steps: tuple[Ctx, Node] | None,
              subscript: Node | None, indexes: bool) -> list[Sampling]:
        """The sampling a call of the statement makes (an index draw, a Bernoulli mask, a TF
        input site); empty for any other call."""
        api = self.calls.api_of(call, ctx)
        if api is not None and api.role in ("permutation", "draw"):
            drawn = self._drawn_indices(api, call, stmt, ctx, steps, subscript, indexes)
            return [drawn] if drawn is not None else []
        if calls_in("bernoulli_draws", call, ctx, self.index):
            rate, population = _bernoulli_arguments(call)
            return [Sampling("poisson", [Evidence("sampler", site(ctx, call, stmt),
                                                  "Bernoulli mask: Poisson sampling")],
                             rate=(ctx, rate) if rate is not None else None, steps=steps,
                             population=(ctx, population) if population is not None else None)]
        buffer = shuffle_buffer(call)
        if buffer is not None:
            return [shuffled_batches(self.calls, call, buffer, ctx, stmt)]
        if call.method in INPUT_FNS:
            return input_fn(self.calls, call, ctx, stmt)
        if is_to_tf_dataset(self.index, call, ctx):
            evaluation = any(EVAL_NAME.search(t) for t in assigned_names(stmt.target))
            return [] if evaluation else [to_tf_dataset(self.calls, call, ctx)]
        if call.method == "fit" and "batch_size" in call.kwargs:
            return [keras_fit(self.calls, call, ctx, stmt)]
        return []

    def _threshold(self, test: Compare, stmt: Statement, ctx: Ctx,
                   steps: tuple[Ctx, Node] | None) -> list[Sampling]:
        """A uniform draw compared with a threshold: ``rand(n) < q`` keeps each item with
        probability q, ``rand(n) > 1 - q`` too; Poisson sampling either way. A threshold
        computed from the draw itself (``u < np.percentile(u, 70)``) is no probability: it
        keeps a fixed fraction, a split of the data, not a sample."""
        found = self.provenance.uniform_draw(test.left, ctx)
        held = test.left.dotted if isinstance(test.left, Name) else None
        if found is None or any(isinstance(n, Name) and n.dotted == held
                                for n in walk(test.right)):
            return []
        draw, drawn_at = found
        if test.op in ("<", "<="):
            rate, note = test.right, "uniform draw < q: Poisson sampling"
        elif test.op in (">", ">=") and draw.args:
            rate, note = _complement(test.right), "uniform draw > 1 - q: Poisson sampling"
        else:
            return []
        return [Sampling("poisson", [Evidence("sampler", site(drawn_at, draw, stmt), note)],
                         rate=(ctx, rate), steps=steps,
                         population=(drawn_at, next(iter(draw.args))) if draw.args else None)]

    def _drawn_indices(self, api: SamplerApi, call: Call, stmt: Statement, ctx: Ctx,
                       steps: tuple[Ctx, Node] | None, subscript: Node | None,
                       indexes: bool) -> Sampling | None:
        """An index draw of the table: a permutation cut into consecutive slices is shuffle,
        the prefix of a fresh permutation a fixed-size subset; a draw of B indices (inside a
        loop, used to index the data) selects by its switch (``replace=``); a draw with
        replacement compared for equality with a batch number assigns examples to batches
        (balls-and-bins). A draw used for anything else (random labels) is not a sampler."""
        span = site(ctx, call, stmt)
        name = call.name
        population = api.population.of(call.args, call.kwargs) if api.population else None
        found: dict[str, Any] = {"population": (ctx, population) if population is not None else None}
        prefix = _prefix(subscript) if subscript is not None else None
        if api.role == "permutation":
            if prefix is None:
                return of_scheme("shuffle", [Evidence("sampler", span, "permutation then fixed-size slices")],
                                 batch=self._slice_width(ctx), **found)
            return of_scheme("fixed-subsets", [Evidence(
                "sampler", span, f"the first B of a fresh {name}(...) every time: {title('fixed-subsets')}")],
                batch=(ctx, prefix), steps=steps, **found)
        use = "index" if indexes else self._use_of(stmt, ctx)
        if stmt.loop_depth < 1 or use is None:
            return None
        scheme = self.calls.selected(api, call, ctx)
        size = api.size.of(call.args, call.kwargs) if api.size else None
        if scheme == "with-replacement" and use == "allocation":
            # the draw's range is the number of batches M, its size the dataset: batches of N/M
            batches = (ctx, BinOp(["b", "/", size, population])) \
                if size is not None and population is not None else None
            return of_scheme("balls-and-bins", [Evidence(
                "sampler", span, f"{name}(...) gives every example a batch number, compared with the "
                "batch in turn: balls-and-bins (random allocation)")],
                population=(ctx, size) if size is not None else None, batch=batches)
        return of_scheme(scheme, [Evidence("sampler", span, f"{name}(...): {title(scheme)}")],
                         batch=(ctx, _first_item(size)) if size is not None else None, steps=steps, **found)

    def _use_of(self, stmt: Statement, ctx: Ctx) -> str | None:
        """How the names ``stmt`` assigns are used in its scope: ``"allocation"`` when compared
        for equality (``bins == b``: a batch number per example), ``"index"`` when they index
        something (``x[idx]``) or a loop runs over them (``for i in idx``), None otherwise
        (random labels passed to a loss are not a batch selection)."""
        names = set(assigned_names(stmt.target)) if stmt.kind == "assign" else set()
        scope = self.index.scope(ctx)
        if not names or scope is None:
            return None
        use = None
        for other in scope.statements:
            for item in walk(other.expr):
                if isinstance(item, Compare) and item.op == "==" and any(
                        isinstance(side, Name) and side.dotted in names
                        for side in (item.left, item.right)):
                    return "allocation"
                if isinstance(item, Subscript) and any(
                        isinstance(n, Name) and n.dotted in names for n in walk(item.index)):
                    use = "index"
            if other.kind == "for" and any(isinstance(n, Name) and n.head in names
                                           for n in walk(other.expr)):
                use = "index"
        return use

    def _slice_width(self, ctx: Ctx) -> tuple[Ctx, Node] | None:
        """The step of a ``for start in range(0, n, B)`` loop in the scope: the batch size of
        fixed slices of a permutation."""
        scope = self.index.scope(ctx)
        for stmt in scope.statements if scope else []:
            iterable = stmt.expr
            if stmt.kind == "for" and isinstance(iterable, Call) and iterable.name == "range" \
                    and len(iterable.args) == 3:
                _, _, step = iterable.args
                return Ctx(ctx.path, ctx.scope, stmt.line), step
        return None


def _prefix(index: Node) -> Node | None:
    """B of a prefix slice ``[:B]`` / ``[0:B]`` (no step), else None."""
    if not isinstance(index, Slice) or not index.bounded:
        return None
    if index.lower not in (["c", None], ["n", 0]) or index.step != ["c", None] \
            or index.upper == ["c", None]:
        return None
    return index.upper


def _first_item(size: Node) -> Node:
    """The batch size of a draw's size argument: ``B``, or the one item of ``(B,)``."""
    if isinstance(size, Seq) and len(size.items) == 1:
        [item] = size.items
        return item
    return size


def _complement(threshold: Node) -> Node:
    """``q`` of a threshold ``1 - q`` (``rand(n) > 1 - q`` keeps each item with probability q),
    else the expression ``1 - threshold``."""
    if isinstance(threshold, BinOp) and threshold.tag == "b" and threshold.op == "-" \
            and threshold.left in (["n", 1], ["n", 1.0]):
        return threshold.right
    return BinOp(["b", "-", Num(["n", 1]), threshold])


def _bernoulli_arguments(call: Call) -> tuple[Node | None, Node | None]:
    """(q, N) of ``np.random.binomial(1, q, N)`` or ``torch.bernoulli(torch.full((N,), q))``."""
    args = call.args
    if call.method == "binomial" and len(args) > 2:
        _, rate, population, *_ = args
        return rate, population
    filled = next(iter(args), None)
    if isinstance(filled, Call) and filled.method in ("full", "ones") and filled.args:
        shape, *values = filled.args
        return next(iter(values), filled.kwargs.get("fill_value")), _first_item(shape)
    return None, None
