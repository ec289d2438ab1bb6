"""The training parameters of a pipeline (sigma, clip, batch_size, N, q, epochs, steps, delta,
target_epsilon, dim, and for fixed-size batches drop_last as 1/0), each resolved statically with
provenance; overrides win.

Sources, in order of preference per parameter: the DP library call (``make_private`` keywords,
the 0.x ``PrivacyEngine`` constructor), the hand-written update (noise std / clip threshold),
the training loader, the loops (the epochs: the trip count of a loop repeating a pass over the
data, or E of a step count written E / q; ``dpcheck.pipelines.data_passes``), the accountant's
arguments, then values derived from the others (``q = B/N``, ``steps = epochs * ceil(N/B)``).
A noise multiplier that differs between the runs its callers make (a sweep,
``dpcheck.pipelines.run_values``) is the lowest of them, the run that leaks most; any other
parameter with several values stays unresolved. Under gradient accumulation
(``dpcheck.pipelines.accumulation``) a loader's batch is the physical one: batch_size is it
times k, and q and steps are derived from that logical batch.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace

from dpcheck.model import ParamValue, Span
from dpcheck.pipelines.accountants import AccountantCall
from dpcheck.pipelines.accumulation import (
    Accumulation,
    LogicalBatch,
    accumulated_steps,
    find_accumulation,
    logical_batch,
)
from dpcheck.pipelines.data_passes import DataPasses
from dpcheck.pipelines.dim import model_size
from dpcheck.pipelines.handwritten import HandwrittenUpdate
from dpcheck.pipelines.index import ProjectIndex
from dpcheck.pipelines.noise_scale import clip_threshold, std_factors
from dpcheck.pipelines.opacus_usage import OpacusUsage
from dpcheck.pipelines.private_loops import Place, runs_private
from dpcheck.pipelines.questions import frozen
from dpcheck.pipelines.run_values import run_values
from dpcheck.pipelines.sampling.decision import Sampling, loader_dataset
from dpcheck.pipelines.scope import Ctx
from dpcheck.pipelines.tf_privacy import KEYWORDS as TF_KEYWORDS
from dpcheck.pipelines.values import Evaluator, Value
from dpcheck.sites.ir import IR
from dpcheck.sites.nodes import BinOp, Call, Name, Node, node
from dpcheck.sites.views import Statement

#: Parameters judged at their lowest value over the runs of a sweep (see the module docstring).
LOWEST_OVER_RUNS = frozenset({"sigma"})
OPACUS_KEYWORDS = {
    "sigma": ("noise_multiplier",), "clip": ("max_grad_norm",), "batch_size": ("batch_size",),
    "N": ("sample_size",), "q": ("sample_rate",), "epochs": ("epochs",),
    "delta": ("target_delta",), "target_epsilon": ("target_epsilon",),
}


class ParamCollector:
    """Resolves the parameters of one pipeline."""

    def __init__(self, index: ProjectIndex, overrides: Mapping[str, ParamValue]) -> None:
        self.index = index
        self.values = Evaluator(index)
        self.overrides = overrides
        #: The gradient accumulation of the last pipeline collected (None: one batch per step).
        self.accumulation: Accumulation | None = None

    def _resolve(self, name: str, ir: IR | None, ctx: Ctx) -> ParamValue | None:
        if ir is None:
            return None
        value = self.values.value(ir, ctx)
        if value is None and name in LOWEST_OVER_RUNS:
            return self._lowest(name, ir, ctx)
        if value is None:
            return ParamValue(name, None, "unresolved", Span(ctx.path, ctx.line), None)
        return value.param(name)

    def _lowest(self, name: str, ir: IR, ctx: Ctx) -> ParamValue:
        """The lowest value ``ir`` holds over the runs its callers make (``run_values``),
        unresolved when one of them is not known."""
        runs = run_values(self.values, ir, ctx)
        if not runs:
            return ParamValue(name, None, "unresolved", Span(ctx.path, ctx.line), None)
        low = min(runs, key=lambda run: run.value)
        numbers = sorted({run.value for run in runs})
        if len(numbers) == 1:
            return low.param(name)
        return ParamValue(name, low.value, "lowest-over-runs", Span(low.path, low.line),
                          f"the lowest of {', '.join(f'{n:g}' for n in numbers)}, "
                          "one per run the callers make")

    def accountant_args(self, call: AccountantCall) -> dict[str, ParamValue]:
        """The accountant's own q, steps, sigma (derived from N/batch/epochs when given so)."""
        found = {k: p for k, (ctx, ir) in call.args.items() if (p := self._resolve(k, ir, ctx))}
        size, batch, epochs = found.get("N"), found.get("batch_size"), found.get("epochs")
        if "q" not in found and _known(size, batch):
            found["q"] = _derived("q", batch.value / size.value, call.span)  # type: ignore
        if "steps" not in found and _known(size, batch, epochs):
            steps = epochs.value * size.value / batch.value  # type: ignore[union-attr]
            found["steps"] = _derived("steps", steps, call.span)
        return found

    def collect(
        self,
        usage: OpacusUsage | None,
        update: HandwrittenUpdate | None,
        sampling: Sampling,
        accountants: list[AccountantCall],
        scopes: Iterable[Ctx],
        optimizer: tuple[Ctx, IR] | None = None,
        private: frozenset[Place] = frozenset(),
    ) -> dict[str, ParamValue]:
        scopes = list(scopes)
        params: dict[str, ParamValue] = {}

        def offer(param: ParamValue | None) -> None:
            if param is not None and param.value is not None and param.name not in params:
                params[param.name] = param

        noise = frozenset((c.path, c.scope, c.line) for c, _, _ in update.noise_calls) \
            if update is not None else frozenset()
        self.accumulation = find_accumulation(self.index, scopes, noise)
        # k loader batches per noisy step (BatchMemoryManager keeps the loader's batch)
        accumulating = self.accumulation if self.accumulation is not None \
            and self.accumulation.multiplies else None
        logical: list[LogicalBatch] = []

        def offer_physical(batch: ParamValue | None) -> None:
            """A loader's batch size: the logical batch only without accumulation."""
            if accumulating is None:
                offer(batch)
                return
            found = logical_batch(accumulating, batch, self.values)
            if found is not None:
                logical.append(found)
                offer(found.param())

        if usage is not None:
            for name, keywords in OPACUS_KEYWORDS.items():
                for keyword in keywords:
                    offer(self._resolve(name, usage.keyword(keyword), usage.ctx))
        if optimizer is not None:
            where, made = optimizer
            constructor = node(made)
            for name, keyword in TF_KEYWORDS.items():
                given = constructor.kwargs.get(keyword) if isinstance(constructor, Call) else None
                offer(self._resolve(name, given, where))
        if update is not None:
            self._handwritten(update, offer)
        # under accumulation a draw's rate and the loop's count are not per noisy step
        per_draw = ("q", "steps") if accumulating is not None else ()
        for name, found in (("q", sampling.rate), ("steps", sampling.steps),
                            ("N", sampling.population)):
            if found is not None and name not in per_draw:
                where, expr = found
                offer(self._resolve(name, expr, where))
        if accumulating is not None and sampling.steps is not None:
            where, count = sampling.steps
            offer(accumulated_steps(accumulating, self._resolve("steps", count, where),
                                    self.values))
        if sampling.rate is not None:
            offer_physical(self._batch_of_rate(*sampling.rate))
        if sampling.loader is not None:
            ctx, made = sampling.loader
            loader = node(made)
            given = loader.kwargs if isinstance(loader, Call) else {}
            offer_physical(self._resolve("batch_size", given.get("batch_size"), ctx))
            offer(self._resolve("epochs", given.get("epochs", given.get("num_epochs")), ctx))
            if sampling.kind == "shuffle" or usage is not None:
                # fixed-size batches per epoch, or Opacus' q = 1/len(loader) of the loader passed
                offer(self._resolve("drop_last", given.get(
                    "drop_last", given.get("drop_remainder")), ctx))
            dataset = loader_dataset(loader)
            if dataset is not None:
                size = self.values.dataset_size(dataset, ctx)
                offer(size.param("N") if size else None)
        passes = DataPasses(self.index, frozenset((c.path, c.scope) for c in scopes),
                            sampling.loader)
        offer(self._epochs(scopes, passes, private))
        if sampling.steps is not None and sampling.rate is not None:
            written = passes.passes_in_steps(sampling.steps, sampling.rate)
            if written is not None:
                where, epochs = written
                offer(self._resolve("epochs", epochs, where))
        if usage is not None and usage.keyword("sample_rate") is not None:
            offer(self._batch_of_rate(usage.ctx, usage.keyword("sample_rate")))
        if sampling.batch is not None:
            where, batch = sampling.batch
            offer_physical(self._resolve("batch_size", batch, where))
        claimed = [self.accountant_args(call) for call in accountants]
        for call in accountants:
            self._rate_terms(call, params.get("batch_size"), offer)
        for found in claimed:
            for name, param in found.items():
                if name not in ("q", "steps"):
                    offer(replace(param, name=name))
        offer(model_size(self.index, scopes))
        chosen = next((b for b in logical if params.get("batch_size") == b.param()), None)
        self._derive(params, usage, sampling, chosen)
        for found in claimed:
            for name in ("q", "steps"):
                offer(found.get(name))
        params.update({k: v for k, v in self.overrides.items()})
        return params

    def _handwritten(
        self, update: HandwrittenUpdate, offer: Callable[[ParamValue | None], None]
    ) -> None:
        clip, threshold = None, None
        for ctx, call in update.clip_calls:
            threshold = clip_threshold(self.index, call, ctx)
            clip = self._resolve("clip", threshold, ctx)
            if clip is not None and clip.value is not None:
                break
        if clip is not None:
            offer(clip)
        for ctx, call, statement in update.noise_calls:
            sigma = self._sigma(call, statement, ctx, clip, threshold)
            if sigma is not None:
                offer(sigma)
                return

    def _sigma(self, call: IR, statement: IR, ctx: Ctx, clip: ParamValue | None,
               threshold: IR | None) -> ParamValue | None:
        """sigma = noise std / clip threshold, from ``normal(0, std)`` or ``std * randn(...)``.
        When the std is a product with a factor equal to the clip threshold, sigma is the other
        factor and keeps that factor's provenance."""
        call = node(call)
        if not isinstance(call, Call):
            return None
        factors = std_factors(self.index, call, statement, ctx)
        if not factors or clip is None or not clip.value:
            return None
        values = [self.values.value(f, ctx) for f in factors]
        if any(v is None for v in values):
            return None
        numbers = [v.value for v in values if v is not None]
        if threshold in factors and len(factors) == 2:
            return self._resolve("sigma", factors[1 - factors.index(threshold)], ctx)
        if clip.value in numbers and len(numbers) == 2:
            return _other_than_clip(values, clip).param("sigma")  # type: ignore[arg-type]
        return ParamValue("sigma", math.prod(numbers) / clip.value, "derived",
                          Span(ctx.path, ctx.line), "noise std / clip")

    def _epochs(self, scopes: list[Ctx], passes: DataPasses,
                private: frozenset[Place]) -> ParamValue | None:
        """The trip count of the first epoch loop that may run, among those that run the
        private update when a pass over the data is known to run it (``private``: the epochs
        of a non-private model trained in the same run are not the pipeline's), else among
        all. An epoch loop is a counted loop whose body makes one pass over the data
        (``data_passes``), whatever its names."""
        if private and any(stmt.kind == "for" and passes.is_pass(where, stmt)
                           and self._runs_private(where, stmt, private)
                           for where, stmt in self.index.statements(scopes)):
            return self._epoch_count(scopes, passes, private)
        return self._epoch_count(scopes, passes, frozenset())

    def _epoch_count(self, scopes: list[Ctx], passes: DataPasses,
                     private: frozenset[Place]) -> ParamValue | None:
        """The count of the first epoch loop that may run and, given ``private``, runs it."""
        for where, stmt in self.index.statements(scopes):
            iterable = stmt.expr
            if stmt.kind != "for" or not isinstance(iterable, Call) \
                    or iterable.name != "range" or not iterable.args:
                continue
            if private and not self._runs_private(where, stmt, private):
                continue
            if not self._repeats_pass(where, stmt, passes):
                continue
            bound = self._resolve("epochs", iterable.args[-1], where)
            if bound is not None and bound.value is not None:
                start = self.values.value(iterable.argument(0), where) \
                    if len(iterable.args) > 1 else None
                if start is not None:
                    return replace(bound, value=bound.value - start.value, source="derived")
                return bound
        return None

    def _repeats_pass(self, where: Ctx, loop: Statement, passes: DataPasses) -> bool:
        """Whether the loop header ``loop`` (read at ``where``) repeats a pass over the data."""
        found = self._placed(where, loop)
        return found is not None and passes.repeats_pass(*found)

    def _runs_private(self, where: Ctx, loop: Statement, private: frozenset[Place]) -> bool:
        """Whether the loop header ``loop`` (read at ``where``) runs the private update."""
        found = self._placed(where, loop)
        return found is not None and runs_private(*found, private)

    def _placed(self, where: Ctx, loop: Statement) -> tuple[Ctx, list[Statement], int] | None:
        """The scope of the loop header ``loop`` (read at ``where``), its statements and the
        header's position among them."""
        scope = self.index.scope(where)
        stmts = scope.statements if scope is not None else []
        position = next((i for i, stmt in enumerate(stmts) if stmt is loop), None)
        return None if position is None else (Ctx(where.path, where.scope), stmts, position)

    def _batch_of_rate(self, ctx: Ctx, ir: IR) -> ParamValue | None:
        """The expected batch size B of a sample rate written ``B / N``."""
        ratio = _ratio(self.index, ctx, ir)
        if ratio is None:
            return None
        where, numerator, _ = ratio
        return self._resolve("batch_size", numerator, where)

    def _rate_terms(self, call: AccountantCall, batch: ParamValue | None,
                    offer: Callable[[ParamValue | None], None]) -> None:
        """N of the sample rate an accountant is given as ``B / N``
        (``PoissonSampledDpEvent(FLAGS.batch_size / 60000, ...)``) when that B equals the
        batch size the code was found to use: the accountant's N then counts the same examples
        the code batches. With no batch size from the code, or a different one (the loader
        batches tokens, the accountant sequences), N is left alone: the code's q is not made
        equal to the accountant's by construction, so DP103 can still compare them."""
        given = call.args.get("q")
        ratio = _ratio(self.index, *given) if given is not None else None
        if ratio is None or batch is None:
            return
        where, numerator, denominator = ratio
        claimed = self._resolve("batch_size", numerator, where)
        if claimed is not None and claimed.value is not None and claimed.value == batch.value:
            size = self._resolve("N", denominator, where)
            offer(replace(size, expression=f"the N of the q = B/N given to {call.name}")
                  if size is not None else None)

    @staticmethod
    def _derive(params: dict[str, ParamValue], usage: OpacusUsage | None,
                sampling: Sampling, logical: LogicalBatch | None = None) -> None:
        size, batch = params.get("N"), params.get("batch_size")
        epochs = params.get("epochs")
        if logical is not None:
            _derive_accumulated(params, sampling, logical)
            return
        span = (size.span if size else None) or (batch.span if batch else None)
        rounds = batches_per_epoch(params)
        length = "floor" if _drops_last(params) else "ceil"
        if "q" not in params and rounds and usage is not None:
            params["q"] = ParamValue("q", 1 / rounds, "derived", span,
                                     f"1/len(data_loader) = 1/{length}(N/batch_size)")
        elif "q" not in params and rounds is not None and usage is None:
            params["q"] = ParamValue("q", batch.value / size.value, "derived",  # type: ignore
                                     span, "batch_size/N")
        if "steps" not in params and rounds and _known(epochs):
            params["steps"] = ParamValue("steps", epochs.value * rounds, "derived",  # type: ignore
                                         span, f"epochs*{length}(N/batch_size)")


def _derive_accumulated(params: dict[str, ParamValue], sampling: Sampling,
                        logical: LogicalBatch) -> None:
    """q = logical batch / N and steps = epochs x (loader batches per epoch / k), for fixed-size
    batches only: k Poisson batches together are not a Poisson sample, so nothing is derived
    for them."""
    size, epochs = params.get("N"), params.get("epochs")
    if sampling.kind != "shuffle" or not _known(size):
        return
    span = logical.factor.span
    if "q" not in params:
        params["q"] = ParamValue("q", logical.size / size.value, "derived", span,  # type: ignore
                                 "logical batch / N (loader batch_size x k accumulated)")
    if "steps" not in params and _known(epochs):
        rounds = logical.rounds(size.value, _drops_last(params))  # type: ignore[union-attr]
        params["steps"] = ParamValue("steps", epochs.value * rounds, "derived",  # type: ignore
                                     span, "epochs*(loader batches per epoch / k)")


def batches_per_epoch(params: Mapping[str, ParamValue]) -> int | None:
    """M, the fixed-size batches of one epoch: ceil(N / batch_size), or floor(N / batch_size)
    when the loader drops the last partial batch (``drop_last=True``, tf.data's
    ``drop_remainder=True``); None unless N and the batch size are known."""
    size, batch = params.get("N"), params.get("batch_size")
    if not _known(size, batch):
        return None
    ratio = size.value / batch.value  # type: ignore[union-attr,operator]
    return math.floor(ratio) if _drops_last(params) else math.ceil(ratio)


def _drops_last(params: Mapping[str, ParamValue]) -> bool:
    drop = params.get("drop_last")
    return drop is not None and bool(drop.value)


def _known(*params: ParamValue | None) -> bool:
    return all(p is not None and p.value is not None and p.value != 0 for p in params)


def _other_than_clip(factors: list[Value], clip: ParamValue) -> Value:
    """Of a two-factor noise std one of whose factors equals the clip threshold, the other one:
    the clip factor is told by where it was written (the clip's own place), by its value only
    when neither or both were written there (``SIGMA * CLIP`` with ``SIGMA == CLIP == 1.0``
    keeps SIGMA's place)."""
    first, second = factors
    at_clip = [clip.span is not None and (v.path, v.line) == (clip.span.path, clip.span.line)
               for v in factors]
    if at_clip.count(True) == 1:
        return second if at_clip == [True, False] else first
    return second if first.value == clip.value else first


def _derived(name: str, value: float, span: Span) -> ParamValue:
    return ParamValue(name, value, "derived", span, None)


def _ratio(index: ProjectIndex, ctx: Ctx, ir: IR) -> tuple[Ctx, Node, Node] | None:
    """(where to read, B, N) of a sample rate written ``B / N``, followed through names (each a
    question of the index's memo and cycle guard, ``dpcheck.pipelines.questions``)."""
    ir = node(ir)
    if isinstance(ir, BinOp) and ir.op == "/":
        return ctx, ir.left, ir.right
    if isinstance(ir, Name):
        binding = index.attribute(ir.dotted, ctx)
        if binding is not None and binding.kind in ("assign", "option") and binding.ir \
                and binding.index is None:
            where, bound = replace(binding.ctx, line=binding.line), binding.ir
            key = ("ratio", frozen(ir), ctx, index.reach)
            return index.questions.ask(key, lambda: _ratio(index, where, bound), None)
    return None
