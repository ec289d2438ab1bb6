"""Hand-written DP-SGD updates: per-sample gradients, clipping, noise and the divisor.

Works on the statements of the scopes a pipeline reaches. Noise is followed forward through
local variables ("taint", ``dpcheck.pipelines.taint``), only through arithmetic and
tensor-arithmetic calls, so noise added to the *input* and pushed through ``model(x)`` never
reaches the update. A scope set is a DP-SGD update only with noise that reaches gradients,
clipping, and per-sample evidence; noise on the whole gradient after one global
``clip_grad_norm_`` is therefore not a pipeline. A noisy gradient handed to a project function
is followed into it, so a division there is judged where it happens.

PyTorch, JAX/NumPy and TensorFlow 2 idioms are read alike: per-sample gradients from ``vmap``,
BackPACK's ``grad_batch``/``batch_l2``, ``tf.vectorized_map``/``pfor`` or a tape's
``jacobian``; TF divisors (``tf.cast``, ``tf.shape(x)[0]``) as the divisor classifier reads
them; updates handed to ``apply_gradients``. A clip factor bounded the wrong way round
(``min(norm/C, 1)``) is kept as evidence: it does not bound the per-example sensitivity.

Steps that are not a known call are recognised by ``steps``: noise a project helper returns,
clips written as a test on the norm or a masked bound, loops that differentiate one example at
a time, a backward hook's gradient parameters, and library privatizers (which do some of the
steps, with their own division, for the caller).

The analysis is one statement-by-statement taint over a scope (this module); what it records
lives beside it: the record (``handwritten_update``), per-example gradients and clip factors
(``per_sample``), the divisions of the noisy sum (``update_divisors``) and the hand-over of the
noise scale (``noise_scale``).
"""

from __future__ import annotations

from collections.abc import Iterable

from dpcheck.model import Evidence
from dpcheck.pipelines.calls import argument
from dpcheck.pipelines.divisor import Dep, DivisorClassifier
from dpcheck.pipelines.dp_libraries import Privatizer
from dpcheck.pipelines.handwritten_update import Divisor, HandwrittenUpdate, evidence_span
from dpcheck.pipelines.index import ProjectIndex
from dpcheck.pipelines.noise_scale import hand_over
from dpcheck.pipelines.per_sample import PerSampleFinder, clip_factor_inverted, computes_gradient
from dpcheck.pipelines.scope import Ctx
from dpcheck.pipelines.steps import (
    MAX_HELPER_DEPTH,
    StepFinder,
    conditional_clip,
    derives_norm,
    is_clip_call,
    is_noise_draw,
    masked_bound,
    mentions_norm,
)
from dpcheck.pipelines.taint import (
    ARITH_CALLS,
    INPLACE,
    arith_flow,
    assigned_names,
    descent_directions,
    read_names,
    touches,
)
from dpcheck.pipelines.update_divisors import UpdateDivisors
from dpcheck.sites.ir import IR
from dpcheck.sites.nodes import Call, Comp, Name, Node
from dpcheck.sites.views import Scope, Statement

__all__ = ["HandwrittenAnalyzer", "HandwrittenUpdate",
           "assigned_names", "clip_factor_inverted", "is_clip_call", "mentions_norm"]
PARAMETER_CALLS = frozenset({"parameters", "named_parameters", "trainable_variables"})


class HandwrittenAnalyzer:
    """Finds the hand-written DP-SGD update in a set of scopes."""

    def __init__(self, index: ProjectIndex) -> None:
        self.index = index
        self.divisors = DivisorClassifier(index)
        self.steps = StepFinder(index, self.divisors)
        self.division = UpdateDivisors(self.divisors)
        self.per_sample = PerSampleFinder(index, self.divisors, self.steps, self._function)
        self._targets: dict[tuple[str, Ctx], Ctx | None] = {}

    def analyze(self, scopes: Iterable[Ctx]) -> HandwrittenUpdate:
        result = HandwrittenUpdate()
        for ctx in scopes:
            scope = self.index.scope(ctx)
            if scope is not None:
                self._scope(ctx, scope, result)
        return result

    def hand_over(self, update: HandwrittenUpdate) -> list[Evidence]:
        """Where the pipeline's own calls hand the noise scale to the code that draws the noise
        (``noise_scale.hand_over``)."""
        return hand_over(self.index, update)

    def _function(self, callee: str | None, ctx: Ctx) -> Ctx | None:
        """The project function ``callee`` names at ``ctx`` (memoised: every statement asks
        about each of its names and calls, pipeline after pipeline)."""
        if not callee:
            return None
        key = (callee, ctx)
        if key not in self._targets:
            self._targets[key] = self.index.function(callee, ctx)
        return self._targets[key]

    def _privatizers(self, calls: list[Call], where: Ctx) -> list[tuple[Call, Privatizer]]:
        """The library privatizer calls among ``calls`` (only in files importing a DP
        library: a privatizer is reached through its library's import)."""
        if not self.steps.dp_imports(where.path):
            return []
        return [(call, found) for call in calls
                if (found := self.steps.privatizer(call, where)) is not None]

    def _draws_noise(self, call: Call, where: Ctx) -> bool:
        """A Gaussian draw, or a call of a project helper that returns one."""
        if is_noise_draw(call, where, self.index):
            return True
        target = self._function(call.name, where)
        return target is not None and self.steps.returns_noise(target)

    def _privatized(self, ctx: Ctx, stmt: Statement, privatizers: list[tuple[Call, Privatizer]],
                    result: HandwrittenUpdate) -> None:
        """What a privatizer call does for the update: its clipping and its division."""
        where = Ctx(ctx.path, ctx.scope, stmt.line)
        for call, privatizer in privatizers:
            span = evidence_span(ctx, stmt, call)
            if "clip" in privatizer.provides:
                result.clip.append(Evidence("clip", span, privatizer.what))
                result.clip_calls.append((where, call))
            divisor = privatizer.divisor(call)
            if divisor == "realized":
                result.divisors.append(Divisor(Dep(b=True), span, privatizer.what))
            elif isinstance(divisor, Node):
                self.division.add(where, divisor, span, privatizer.what, result)

    def _scope(self, ctx: Ctx, scope: Scope, result: HandwrittenUpdate,
               seeds: frozenset[str] = frozenset(), depth: int = 0) -> bool:
        """Analyse one scope into ``result``. ``seeds`` are parameters a caller hands a noisy
        gradient (``_follow``); the answer is whether the noise reaches an update or a return
        of the scope."""
        stmts = scope.statements
        noisy: set[str] = set(seeds)
        clipped: set[str] = set()
        gradients: set[str] = self.steps.hook_gradients(ctx) | seeds | descent_directions(stmts)
        computed = set(gradients)  # gradients by how they were computed or used, not by their names
        carried = False
        parameters: set[str] = set()
        normed: set[str] = set()
        pending: list[tuple[Ctx, IR, IR, Evidence]] = []
        for stmt in stmts:
            if not self.index.runs(ctx, stmt):
                continue
            expr = stmt.expr
            where = Ctx(ctx.path, ctx.scope, stmt.line)
            calls = [part for part in expr.walk() if isinstance(part, Call)]
            refs = set(read_names(expr))
            targets = set(assigned_names(stmt.target))
            for call in calls:
                callee = call.callee
                if call.method in INPLACE and isinstance(callee, Name):
                    # The receiver of the method (``acc`` of ``acc.add_``).
                    targets.add(callee.base or callee.dotted)
            # A tensor's ``.data`` is the tensor itself: ``p.grad.data += noise`` changes p.grad.
            targets |= {t.removesuffix(".data") for t in targets if t.endswith(".data")}
            privatizers = self._privatizers(calls, where)
            clip_here = [n for n in calls if is_clip_call(n, where, self.index, normed)]
            # A clip written as a scaling under a norm test or a masked bound changes its target
            # in place: the target is clipped, and per-example when it was.
            clip_stmt = not clip_here and (conditional_clip(stmt, scope, normed)
                                           or masked_bound(stmt, normed))
            self.per_sample.record(ctx, stmts, stmt, calls, refs, targets, result,
                                   clip_here, clip_stmt, privatizers)
            self._privatized(ctx, stmt, privatizers, result)
            if clip_stmt:
                result.clip.append(Evidence("clip", evidence_span(ctx, stmt),
                                            stmt.source or "clipping"))
                clipped |= targets
            if derives_norm(expr, normed):
                normed |= targets
            for node in clip_here:
                result.clip.append(Evidence("clip", evidence_span(ctx, stmt, node),
                                            stmt.source or "clipping"))
                if clip_factor_inverted(node):
                    result.inverted.append(Evidence("clip", evidence_span(ctx, stmt, node), (
                        "clip factor inverted: the bound is taken of norm/C (or C/norm) the wrong "
                        "way round, so the factor grows with the gradient norm and per-example "
                        "sensitivity is unbounded")))
                result.clip_calls.append((where, node))
            noise_here = [n for n in calls if self._draws_noise(n, where)] + [
                call for call, privatizer in privatizers if "noise" in privatizer.provides]
            flows = arith_flow(expr)
            if stmt.kind == "aug":
                flows |= targets
            flows |= self._handed(ctx, stmt, calls, noisy & gradients, result, depth)
            for part in expr.walk():
                if isinstance(part, Comp):
                    bound = set(part.names)
                    iterated = set().union(*(arith_flow(i) for i in part.iterables))
                    for tainted in (noisy, clipped):
                        if touches(iterated, tainted):
                            tainted |= bound
            if clip_here or touches(flows, clipped) or any("grad_sample" in r for r in refs) \
                    or any(self.per_sample.clips(r, where) for r in refs):
                clipped |= targets
            if stmt.kind == "for" and any(call.method in PARAMETER_CALLS for call in calls):
                parameters |= targets
            grad_like = touches(refs | targets, clipped | gradients) or any(
                "grad" in n for n in refs | targets
            ) or (stmt.kind != "for" and touches(targets, parameters)) or any(
                "noise" in privatizer.provides for _, privatizer in privatizers)
            if grad_like and touches(flows, clipped | gradients) or any("grad" in n for n in flows):
                gradients |= targets
            if computes_gradient(calls, refs | targets) or touches(
                    flows, computed | clipped | result.per_sample_names):
                computed |= targets
            seeds = noise_here and (grad_like or any("nois" in t.lower() for t in targets))
            if seeds or touches(flows, noisy):
                noisy |= targets
                pending.extend((where, node, expr, Evidence(
                    "noise", evidence_span(ctx, stmt, node), stmt.source or "noise draw"))
                    for node in noise_here)
                carried = carried or stmt.kind == "return"
                if not grad_like:
                    continue
                carried = True
                on_gradients = touches(refs | targets, computed | clipped) or any(
                    "noise" in privatizer.provides for _, privatizer in privatizers)
                computed_here = touches(refs | targets, computed)
                for place, node, statement, evidence in pending:
                    result.noise.append(evidence)
                    result.noise_calls.append((place, node, statement))
                    if on_gradients:
                        result.gradient_noise.append(evidence)
                    if computed_here:
                        result.computed_noise.append(evidence)
                pending.clear()
                result.updates.append(Evidence("update", evidence_span(ctx, stmt),
                                               stmt.source or "noisy update"))
                self.division.statement(where, stmt, noisy, clipped, result)
            elif touches(refs, clipped):
                self.division.mean(where, stmt, clipped, result)
        return carried

    def _handed(self, ctx: Ctx, stmt: Statement, calls: list[Call], noisy: set[str],
                result: HandwrittenUpdate, depth: int) -> set[str]:
        """The noisy gradients ``stmt`` hands to project functions that update with them or
        return them. Each such function is followed (``_follow``) with the parameters the
        noisy arguments bind, so a division inside it is judged where it happens, its
        parameters read through the callers' arguments (the provenance analysis); the names
        returned then flow on as through arithmetic, and the statement is an update whose own
        divisions (``step(noisy / mask.sum())``) count. A function past the helper depth, or
        one where the noise is not seen applied or returned, makes the update undecided (when
        nothing else divides it), never an undivided sum."""
        flowing: set[str] = set()
        if not noisy:
            return flowing
        where = Ctx(ctx.path, ctx.scope, stmt.line)
        for call in calls:
            if call.method in ARITH_CALLS \
                    or self._draws_noise(call, where):
                continue
            target = self._function(call.name, where)
            scope = self.index.scope(target) if target is not None else None
            if target is None or scope is None:
                continue
            names = [param.name for param in scope.params]
            passed = {name: arith_flow(arg) for name in names
                      if (arg := argument(call, names, name)) is not None}
            seeds = frozenset(name for name, flow in passed.items() if touches(flow, noisy))
            if not seeds:
                continue
            if depth < MAX_HELPER_DEPTH and self._follow(target, scope, seeds, result, depth + 1):
                flowing |= set().union(*passed.values())
            else:
                result.opaque.append(Evidence(
                    "update", evidence_span(ctx, stmt, call),
                    f"the noisy sum is passed to {call.name}(), where dpcheck does not see it "
                    "applied or returned"))
        return flowing

    def _follow(self, target: Ctx, scope: Scope, seeds: frozenset[str],
                result: HandwrittenUpdate, depth: int) -> bool:
        """Analyse the project function ``target`` with its parameters ``seeds`` holding a
        noisy gradient (once per function and parameters in one analysis; a cycle of calls
        adds nothing): whether the noise reaches an update or a return there."""
        key = (target, seeds)
        if key not in result.followed:
            result.followed[key] = False
            result.followed[key] = self._scope(target, scope, result, seeds, depth)
        return result.followed[key]
