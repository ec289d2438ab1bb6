"""Hand-written DP-SGD updates: per-sample gradients, clipping, noise and the divisor.

Works on the statements of the scopes a pipeline reaches. Noise is followed forward through
local variables ("taint"), only through arithmetic and tensor-arithmetic calls, so noise added to
the *input* and pushed through ``model(x)`` never reaches the update. A scope set is a DP-SGD
update only with noise that reaches gradients, clipping, and per-sample evidence; noise on the
whole gradient after one global ``clip_grad_norm_`` is therefore not a pipeline.

PyTorch, JAX/NumPy and TensorFlow 2 idioms are read alike: per-sample gradients from ``vmap``,
BackPACK's ``grad_batch``/``batch_l2``, ``tf.vectorized_map``/``pfor`` or a tape's
``jacobian``; TF divisors (``tf.cast``, ``tf.shape(x)[0]``) as the divisor classifier reads
them; updates handed to ``apply_gradients``. A clip factor bounded the wrong way round
(``min(norm/C, 1)``) is kept as evidence: it does not bound the per-example sensitivity.

Steps that are not a known call are recognised by ``steps``: noise a project helper returns,
clips written as a test on the norm or a masked bound, loops that differentiate one example at
a time, a backward hook's gradient parameters, and library privatizers (which do some of the
steps, with their own division, for the caller).

The module is over 500 lines because it is one analysis: the statement-by-statement taint over
a scope, whose noise, clip, per-example and divisor steps read and extend the same sets.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from dpcheck.model import Evidence, Span
from dpcheck.pipelines.binding import Binding
from dpcheck.pipelines.calls import argument
from dpcheck.pipelines.divisor import Dep, DivisorClassifier
from dpcheck.pipelines.dp_libraries import Privatizer
from dpcheck.pipelines.index import ProjectIndex
from dpcheck.pipelines.provenance import Origin
from dpcheck.pipelines.scope import Ctx
from dpcheck.pipelines.steps import (
    BOUND_CALLS,
    CLIP_CALLS,
    MAX_HELPER_DEPTH,
    NOISE_TAILS,
    StepFinder,
    conditional_clip,
    derives_norm,
    is_clip_call,
    is_noise_draw,
    masked_bound,
    mentions_norm,
    scope_clips,
)
from dpcheck.sites.ir import IR, callee_name, tail_name, walk
from dpcheck.sites.nodes import Call, Node
from dpcheck.sites.views import Scope, Statement

__all__ = ["CLIP_CALLS", "NOISE_TAILS", "HandwrittenAnalyzer", "HandwrittenUpdate",
           "assigned_names", "clip_factor_inverted", "is_clip_call", "mentions_norm"]
#: Bounds from above (``min(x, 1)``) and from below (``max(x, 1)``), for the clip-factor check.
UPPER_BOUNDS = frozenset({"min", "minimum", "clamp_max"})
LOWER_BOUNDS = frozenset({"max", "maximum", "clamp_min"})
#: Attributes the frameworks keep gradients in (torch ``.grad``, Opacus ``.grad_sample``,
#: BackPACK ``.grad_batch``).
GRADIENT_ATTRIBUTES = frozenset({"grad", "grad_sample", "grad_batch"})
#: Per-sample gradients: ``vmap``/``jacrev`` (JAX, torch.func), BackPACK's ``BatchGrad``, TF's
#: ``vectorized_map``/``pfor`` over examples and ``GradientTape.jacobian`` of a loss vector.
PER_SAMPLE_CALLS = frozenset({"vmap", "jacrev", "BatchGrad", "per_sample_grads",
                              "compute_per_sample_gradients", "vectorized_map", "pfor",
                              "jacobian", "batch_jacobian"})
#: Attributes holding per-sample gradients or norms: Opacus ``grad_sample``, BackPACK
#: ``grad_batch`` (``BatchGrad``) and ``batch_l2`` (``BatchL2Grad``), ``per_sample_*`` names.
PER_SAMPLE_NAMES = ("grad_sample", "per_sample", "grad_batch", "batch_l2")
MEAN_CALLS = frozenset({"mean", "reduce_mean"})
GRAD_CALLS = frozenset({"backward", "grad", "value_and_grad", "gradient"})
ARITH_CALLS = frozenset({
    "sum", "add", "add_", "sub", "sub_", "mul", "mul_", "div", "div_", "true_divide", "stack",
    "cat", "concatenate", "mean", "clone", "detach", "reshape", "view", "to", "copy_", "float",
    "view_as", "reshape_as",
    "enumerate",
    "normal", "randn", "randn_like", "normal_", "standard_normal", "stateless_normal",
    "random_normal", "tensor", "zeros_like",
    "flatten", "squeeze", "unsqueeze", "tree_map", "asarray", "array", "multiply", "divide",
    "einsum", "matmul", "dot", "tensordot", "where", "pow", "sqrt", "zip", "items", "values",
    "reduce_sum", "reduce_mean", "add_n", "cast", "convert_to_tensor", "identity",
    # Optimizer steps that take the update itself (TF ``apply_gradients(zip(grads, vars))``,
    # optax ``apply_updates``): a noisy gradient handed to them is applied.
    "apply_gradients", "apply_updates",
})
PARAMETER_CALLS = frozenset({"parameters", "named_parameters", "trainable_variables"})
#: Methods that change their receiver (``acc.add_(g)``, ``norms.append(p.batch_l2)``).
INPLACE = frozenset({"add_", "sub_", "mul_", "div_", "copy_", "append"})
DIVIDE_CALLS = frozenset({"div", "div_", "true_divide"})
#: Multiplications by a reciprocal (``g.mul_(1.0 / lot)``) divide by the reciprocal's divisor.
RECIPROCAL_CALLS = frozenset({"mul", "mul_", "multiply"})
#: Parameter names of a noise scale handed to the code that draws the noise.
NOISE_SCALE = re.compile(r"noise|sigma|std|scale", re.I)


@dataclass(frozen=True)
class Divisor:
    """A division applied to the noisy (or clipped) sum, with its data dependence."""

    dep: Dep
    span: Span
    text: str


@dataclass
class HandwrittenUpdate:
    """What a set of scopes does to gradients; ``is_dp_sgd`` when it is a DP-SGD update."""

    noise: list[Evidence] = field(default_factory=list)
    clip: list[Evidence] = field(default_factory=list)
    per_sample: list[Evidence] = field(default_factory=list)
    divisors: list[Divisor] = field(default_factory=list)
    updates: list[Evidence] = field(default_factory=list)
    opaque: list[Evidence] = field(default_factory=list)
    inverted: list[Evidence] = field(default_factory=list)
    noise_calls: list[tuple[Ctx, IR, IR]] = field(default_factory=list)
    clip_calls: list[tuple[Ctx, IR]] = field(default_factory=list)
    per_sample_names: set[str] = field(default_factory=set)
    #: Where per-example gradients are computed, whether or not a clip reaches them.
    per_sample_seen: list[Evidence] = field(default_factory=list)
    #: The noise draws whose noise reaches a value computed as a gradient (by a gradient call,
    #: a framework's gradient attribute, a clip, a per-example gradient, a backward hook's
    #: parameter), not merely a value whose name says so: the DP marker of ``markers``.
    gradient_noise: list[Evidence] = field(default_factory=list)
    #: The project functions followed with noisy-gradient parameters (``HandwrittenAnalyzer.
    #: _follow``), and whether the noise reaches an update or a return in them.
    followed: dict[tuple[Ctx, frozenset[str]], bool] = field(default_factory=dict)

    @property
    def is_dp_sgd(self) -> bool:
        return bool(self.noise and self.clip and self.per_sample and self.updates)


def _refs(ir: IR) -> Iterator[str]:
    for node in walk(ir):
        if node[0] == "r":
            yield node[1]


def assigned_names(target: Any) -> Iterator[str]:
    """The names a summary statement target binds (``x``, ``a.b``, ``x[]`` as ``x``, the
    names of an unpacking list)."""
    if isinstance(target, str):
        yield target.removesuffix("[]")
    elif isinstance(target, list):
        for item in target:
            yield from assigned_names(item)


def _touches(names: Iterable[str], tainted: set[str]) -> bool:
    return any(n in tainted or any(n.startswith(t + ".") for t in tainted) for n in names)


def clip_factor_inverted(node: IR) -> bool:
    """A per-example clip factor bounded the wrong way round: ``min(norm/C, 1)``
    (``clamp_max``, ``clamp(max=1)``) or ``max(C/norm, 1)``. The right factors are
    ``min(C/norm, 1)`` to multiply by and ``max(norm/C, 1)`` to divide by; the inverted ones
    scale a large gradient *up* (or leave it unbounded), so C bounds nothing."""
    tail = tail_name(callee_name(node))
    keyword = {"max", "min"} & set(node[3]) if tail in BOUND_CALLS else set()
    upper = tail in UPPER_BOUNDS or keyword == {"max"}
    lower = tail in LOWER_BOUNDS or keyword == {"min"}
    for ratio in walk(node):
        if ratio[0] != "b" or ratio[1] != "/":
            continue
        norm_above, norm_below = mentions_norm(ratio[2]), mentions_norm(ratio[3])
        if norm_above != norm_below:
            return (upper and norm_above) or (lower and norm_below)
    return False


def _row_norm(node: IR) -> bool:
    return "norm" in tail_name(callee_name(node)) and any(k in node[3] for k in ("dim", "axis"))


class HandwrittenAnalyzer:
    """Finds the hand-written DP-SGD update in a set of scopes."""

    def __init__(self, index: ProjectIndex) -> None:
        self.index = index
        self.divisors = DivisorClassifier(index)
        self.steps = StepFinder(index, self.divisors)
        self._clipping: dict[Ctx, bool] = {}
        self._per_sample_functions: dict[Ctx, bool] = {}
        self._targets: dict[tuple[str, Ctx], Ctx | None] = {}

    def analyze(self, scopes: Iterable[Ctx]) -> HandwrittenUpdate:
        result = HandwrittenUpdate()
        for ctx in scopes:
            scope = self.index.scope(ctx)
            if scope is not None:
                self._scope(ctx, scope, result)
        return result

    def _span(self, ctx: Ctx, stmt: dict[str, Any], node: IR | None = None) -> Span:
        if node is not None and node[0] == "call":
            line, col, end_line, end_col = node[4]
            return Span(ctx.path, line, col, end_line, end_col)
        return Span(ctx.path, stmt["line"], stmt["col"], stmt["end"][0], stmt["end"][1])

    def _example_loop(self, ctx: Ctx, stmts: list[dict[str, Any]], loop: int) -> bool:
        while loop >= 0:
            header = stmts[loop]
            iterable = header["e"]
            where = Ctx(ctx.path, ctx.scope, header["line"])
            name = callee_name(iterable) if iterable[0] == "call" else None
            if name == "range" and iterable[2]:
                dep = self.divisors.classify(iterable[2][-1], where)
                if dep.kind == "realized":
                    return True
            else:
                targets = list(assigned_names(header["t"]))
                if targets:
                    binding = self.index.bind(targets[-1], Ctx(ctx.path, ctx.scope,
                                                               header["line"] + 1))
                    if binding is not None and self.divisors.origin(
                        ["r", targets[-1]], Ctx(ctx.path, ctx.scope, header["line"] + 1)
                    ) == Origin.EXAMPLE:
                        return True
            if self.steps.element_loop(ctx, stmts, loop):
                return True
            loop = header["loop"]
        return False

    def _privatizers(self, calls: list[IR], where: Ctx) -> list[tuple[Call, Privatizer]]:
        """The library privatizer calls among ``calls`` (only in files importing a DP
        library: a privatizer is reached through its library's import)."""
        if not self.steps.dp_imports(where.path):
            return []
        return [(node, found) for node in calls if isinstance(node, Call)
                and (found := self.steps.privatizer(node, where)) is not None]

    def _draws_noise(self, node: IR, where: Ctx) -> bool:
        """A Gaussian draw, or a call of a project helper that returns one."""
        if is_noise_draw(node):
            return True
        target = self._function(callee_name(node), where)
        return target is not None and self.steps.returns_noise(target)

    def _privatized(self, ctx: Ctx, stmt: Statement, privatizers: list[tuple[Call, Privatizer]],
                    result: HandwrittenUpdate) -> None:
        """What a privatizer call does for the update: its clipping and its division."""
        where = Ctx(ctx.path, ctx.scope, stmt.line)
        for call, privatizer in privatizers:
            span = self._span(ctx, stmt, call)
            if "clip" in privatizer.provides:
                result.clip.append(Evidence("clip", span, privatizer.what))
                result.clip_calls.append((where, call))
            divisor = privatizer.divisor(call)
            if divisor == "realized":
                result.divisors.append(Divisor(Dep(b=True), span, privatizer.what))
            elif isinstance(divisor, Node):
                self._add(where, divisor, span, privatizer.what, result)

    def _scope(self, ctx: Ctx, scope: Scope, result: HandwrittenUpdate,
               seeds: frozenset[str] = frozenset(), depth: int = 0) -> bool:
        """Analyse one scope into ``result``. ``seeds`` are parameters a caller hands a noisy
        gradient (``_follow``); the answer is whether the noise reaches an update or a return
        of the scope."""
        stmts = scope.statements
        noisy: set[str] = set(seeds)
        clipped: set[str] = set()
        gradients: set[str] = self.steps.hook_gradients(ctx) | seeds
        computed = set(gradients)  # gradients by how they were computed, not by their names
        carried = False
        parameters: set[str] = set()
        normed: set[str] = set()
        pending: list[tuple[Ctx, IR, IR, Evidence]] = []
        for stmt in stmts:
            if not self.index.runs(ctx, stmt):
                continue
            expr: IR = stmt["e"]
            where = Ctx(ctx.path, ctx.scope, stmt["line"])
            calls = [n for n in walk(expr) if n[0] == "call"]
            refs = set(_refs(expr))
            targets = set(assigned_names(stmt["t"]))
            for node in calls:
                if tail_name(callee_name(node)) in INPLACE and node[1][0] == "r":
                    targets.add(node[1][1].rsplit(".", 1)[0])
            # A tensor's ``.data`` is the tensor itself: ``p.grad.data += noise`` changes p.grad.
            targets |= {t.removesuffix(".data") for t in targets if t.endswith(".data")}
            privatizers = self._privatizers(calls, where)
            clip_here = [n for n in calls if is_clip_call(n, normed)]
            # A clip written as a scaling under a norm test or a masked bound changes its target
            # in place: the target is clipped, and per-example when it was.
            clip_stmt = not clip_here and (conditional_clip(stmt, scope, normed)
                                           or masked_bound(stmt, normed))
            self._per_sample(ctx, stmts, stmt, calls, refs, targets, result,
                             clip_here, clip_stmt, privatizers)
            self._privatized(ctx, stmt, privatizers, result)
            if clip_stmt:
                result.clip.append(Evidence("clip", self._span(ctx, stmt),
                                            stmt.source or "clipping"))
                clipped |= targets
            if derives_norm(expr, normed):
                normed |= targets
            for node in clip_here:
                result.clip.append(Evidence("clip", self._span(ctx, stmt, node),
                                            stmt.get("src", "clipping")))
                if clip_factor_inverted(node):
                    result.inverted.append(Evidence("clip", self._span(ctx, stmt, node), (
                        "clip factor inverted: the bound is taken of norm/C (or C/norm) the wrong "
                        "way round, so the factor grows with the gradient norm and per-example "
                        "sensitivity is unbounded")))
                result.clip_calls.append((where, node))
            noise_here = [n for n in calls if self._draws_noise(n, where)] + [
                call for call, privatizer in privatizers if "noise" in privatizer.provides]
            flows = self._arith_flow(expr, refs)
            if stmt["k"] == "aug":
                flows |= targets
            flows |= self._handed(ctx, stmt, calls, noisy & gradients, result, depth)
            for node in walk(expr):
                if node[0] == "comp":
                    bound = set(node[2])
                    iterated = set().union(*(self._arith_flow(i, set()) for i in node[3]))
                    for tainted in (noisy, clipped):
                        if _touches(iterated, tainted):
                            tainted |= bound
            if clip_here or _touches(flows, clipped) or any("grad_sample" in r for r in refs) \
                    or any(self._clips(r, where) for r in refs):
                clipped |= targets
            if stmt["k"] == "for" and any(
                    tail_name(callee_name(n)) in PARAMETER_CALLS for n in calls):
                parameters |= targets
            grad_like = _touches(refs | targets, clipped | gradients) or any(
                "grad" in n for n in refs | targets
            ) or (stmt["k"] != "for" and _touches(targets, parameters)) or any(
                "noise" in privatizer.provides for _, privatizer in privatizers)
            if grad_like and _touches(flows, clipped | gradients) or any("grad" in n for n in flows):
                gradients |= targets
            if _computes_gradient(calls, refs | targets) or _touches(
                    flows, computed | clipped | result.per_sample_names):
                computed |= targets
            seeds = noise_here and (grad_like or any("nois" in t.lower() for t in targets))
            if seeds or _touches(flows, noisy):
                noisy |= targets
                pending.extend((where, node, expr, Evidence(
                    "noise", self._span(ctx, stmt, node), stmt.get("src", "noise draw")))
                    for node in noise_here)
                carried = carried or stmt.kind == "return"
                if not grad_like:
                    continue
                carried = True
                on_gradients = _touches(refs | targets, computed | clipped) or any(
                    "noise" in privatizer.provides for _, privatizer in privatizers)
                for place, node, statement, evidence in pending:
                    result.noise.append(evidence)
                    result.noise_calls.append((place, node, statement))
                    if on_gradients:
                        result.gradient_noise.append(evidence)
                pending.clear()
                result.updates.append(Evidence("update", self._span(ctx, stmt),
                                               stmt.get("src", "noisy update")))
                self._divisors(where, stmt, noisy, clipped, result)
            elif _touches(refs, clipped):
                self._mean_divisor(where, stmt, clipped, result)
        return carried

    def _handed(self, ctx: Ctx, stmt: Statement, calls: list[IR], noisy: set[str],
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
            if not isinstance(call, Call) or tail_name(call.name) in ARITH_CALLS \
                    or self._draws_noise(call, where):
                continue
            target = self._function(call.name, where)
            scope = self.index.scope(target) if target is not None else None
            if target is None or scope is None:
                continue
            names = [param.name for param in scope.params]
            passed = {name: self._arith_flow(arg, set()) for name in names
                      if (arg := argument(call, names, name)) is not None}
            seeds = frozenset(name for name, flow in passed.items() if _touches(flow, noisy))
            if not seeds:
                continue
            if depth < MAX_HELPER_DEPTH and self._follow(target, scope, seeds, result, depth + 1):
                flowing |= set().union(*passed.values())
            else:
                result.opaque.append(Evidence(
                    "update", self._span(ctx, stmt, call),
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

    def hand_over(self, update: HandwrittenUpdate) -> list[Evidence]:
        """Where the pipeline's own calls hand the noise scale to the code that draws the noise
        (``DPSequential(noise_multiplier=...)`` in the script when the draw sits in a model
        class of a library): the keyword a caller in the reach (``index.reach``) passes for the
        parameter the noise statement is built from, followed through local and ``self.``
        assignments. Only for a draw outside the caller's file; none when nothing is found."""
        found: list[Evidence] = []
        for ctx, _, statement in update.noise_calls[:1]:
            for param in self._scale_params(statement, ctx, 0):
                for where, call in self.index.call_sites(param.ctx):
                    line = call[5].get(param.name) if len(call) > 5 else None
                    if line is not None and where.path != ctx.path \
                            and (where.path, where.scope) in self.index.reach:
                        found.append(Evidence("noise", Span(where.path, line), (
                            f"{param.name} handed to {callee_name(call)}(), which draws the "
                            f"noise at {ctx.path}:{ctx.line}")))
        return found

    def _scale_params(self, expr: IR, ctx: Ctx, depth: int) -> Iterator[Binding]:
        """The function parameters named like a noise scale (``noise_multiplier``, ``sigma``,
        ``std``) that ``expr`` is computed from."""
        for name in sorted(set(_refs(expr))):
            binding = self.index.attribute(name, ctx)
            if binding is None:
                continue
            if binding.kind == "param" and NOISE_SCALE.search(binding.name):
                yield binding
            elif binding.kind == "assign" and binding.ir is not None and not binding.index \
                    and depth < 4:
                yield from self._scale_params(binding.ir, replace(binding.ctx, line=binding.line),
                                              depth + 1)

    def _function(self, callee: str | None, ctx: Ctx) -> Ctx | None:
        """The project function ``callee`` names at ``ctx`` (memoised: every statement asks
        about each of its names and calls, pipeline after pipeline)."""
        if not callee:
            return None
        key = (callee, ctx)
        if key not in self._targets:
            self._targets[key] = self.index.function(callee, ctx)
        return self._targets[key]

    def _clips(self, callee: str | None, ctx: Ctx) -> bool:
        """Whether ``callee`` is a project function that clips (its result is clipped)."""
        target = self._function(callee, ctx)
        if target is None:
            return False
        if target not in self._clipping:
            scope = self.index.scope(target)
            self._clipping[target] = scope is not None and scope_clips(scope)
        return self._clipping[target]

    def _per_sample(self, ctx: Ctx, stmts: list[Statement], stmt: Statement,
                    calls: list[IR], refs: set[str], targets: set[str],
                    result: HandwrittenUpdate, clips: list[IR], clip_stmt: bool,
                    privatizers: list[tuple[Call, Privatizer]]) -> None:
        """Per-sample gradients: ``vmap``/``grad_sample`` values, row-wise norms, a privatizer
        that computes them and gradient calls inside a loop over examples seed a taint; the
        evidence is recorded where a clip reaches them, so per-sample machinery that clipping
        never touches does not count (``per_sample_seen`` keeps where it was computed). A clip
        that changes its target in place (``clip_stmt``) reaches the target's taint."""
        tainted = result.per_sample_names
        where = Ctx(ctx.path, ctx.scope, stmt.line)
        by_privatizer = any("per-sample" in p.provides for _, p in privatizers)
        seeded = by_privatizer or any(word in r for r in refs for word in PER_SAMPLE_NAMES) \
            or any(tail_name(callee_name(n)) in PER_SAMPLE_CALLS or _row_norm(n)
                   or self._per_sample_function(callee_name(n), where) for n in calls)
        in_examples = stmt.loop >= 0 and (clip_stmt or any(
            tail_name(callee_name(n)) in GRAD_CALLS or is_clip_call(n)
            or self._clips(callee_name(n), where) for n in calls
        )) and self._example_loop(ctx, stmts, stmt.loop)
        reached = _touches(refs | targets if clip_stmt else refs, tainted)
        if (seeded or in_examples) and not reached:
            result.per_sample_seen.append(Evidence("per-sample-grad", self._span(ctx, stmt), (
                "per-example gradients computed in a loop over the examples of a batch"
                if in_examples else "per-example gradients")))
        if seeded or in_examples or reached:
            tainted |= targets
        clips_here = bool(clips) or clip_stmt or any(self._clips(r, where) for r in refs) \
            or any("clip" in p.provides for _, p in privatizers)
        if clips_here and (seeded or in_examples or reached):
            note = "clipping inside a loop over the examples of a batch" if in_examples else (
                "clipping of per-sample gradients")
            result.per_sample.append(Evidence(
                "per-sample-grad", self._span(ctx, stmt, clips[0] if clips else None), note))

    def _per_sample_function(self, callee: str | None, ctx: Ctx) -> bool:
        """Whether ``callee`` is a project function computing per-sample gradients (``vmap``,
        or gradients taken inside a loop over examples)."""
        target = self._function(callee, ctx)
        if target is None:
            return False
        if target not in self._per_sample_functions:
            self._per_sample_functions[target] = False
            scope = self.index.scope(target)
            stmts = scope["stmts"] if scope else []
            self._per_sample_functions[target] = any(
                tail_name(callee_name(n)) in PER_SAMPLE_CALLS
                or (tail_name(callee_name(n)) in GRAD_CALLS and stmt["loop"] >= 0
                    and self._example_loop(target, stmts, stmt["loop"]))
                for stmt in stmts for n in walk(stmt["e"]) if n[0] == "call")
        return self._per_sample_functions[target]

    def _arith_flow(self, expr: IR, refs: set[str]) -> set[str]:
        """Names whose value flows into ``expr`` through arithmetic only (not ``model(x)``)."""
        flowing: set[str] = set()
        stack = [expr]
        while stack:
            node = stack.pop()
            tag = node[0]
            if tag == "r":
                flowing.add(node[1])
            elif tag == "call":
                name = callee_name(node) or ""
                if tail_name(name) not in ARITH_CALLS:
                    continue
                if node[1][0] == "r" and "." in name:
                    flowing.add(name.rsplit(".", 1)[0])
                elif node[1][0] == "a":
                    stack.append(node[1][1])
                stack.extend(node[2])
                stack.extend(node[3].values())
            elif tag in ("b", "cmp"):
                stack.extend((node[2], node[3]))
            elif tag == "u":
                stack.append(node[2])
            elif tag == "i":
                stack.append(node[1])
            elif tag == "t":
                stack.extend(node[1])
            elif tag == "comp":
                stack.append(node[1])
                stack.extend(node[3])
        return flowing

    def _divisors(self, ctx: Ctx, stmt: dict[str, Any], noisy: set[str], clipped: set[str],
                  result: HandwrittenUpdate) -> None:
        tainted = noisy | clipped
        span = self._span(ctx, stmt)
        text = stmt.get("src", "")
        if stmt["k"] == "aug" and stmt.get("op") in ("/", "//"):
            self._add(ctx, stmt["e"], span, text, result, floor=stmt["op"] == "//")
        for node in walk(stmt["e"]):
            if node[0] == "b" and node[1] in ("/", "//"):
                dividend = set(self._arith_flow(node[2], set())) | _noise_marker(node[2])
                if _touches(dividend, tainted) or "<noise>" in dividend:
                    self._add(ctx, node[3], span, text, result, floor=node[1] == "//")
            elif node[0] == "b" and node[1] == "*":
                for factor, other in ((node[2], node[3]), (node[3], node[2])):
                    if factor[0] == "b" and factor[1] == "/" and (
                        _touches(self._arith_flow(other, set()), tainted) or _noise_marker(other)
                    ) and not _touches(self._arith_flow(factor[2], set()), tainted):
                        self._add(ctx, factor[3], span, text, result)
            elif node[0] == "call" and tail_name(callee_name(node)) in DIVIDE_CALLS:
                if node[2]:
                    self._add(ctx, node[2][-1], span, text, result)
            elif node[0] == "call" and tail_name(callee_name(node)) in RECIPROCAL_CALLS:
                for factor in node[2]:
                    if factor[0] == "b" and factor[1] == "/" and not _touches(
                            self._arith_flow(factor[2], set()), tainted):
                        self._add(ctx, factor[3], span, text, result)
        self._mean_divisor(ctx, stmt, clipped, result)

    def _mean_divisor(self, ctx: Ctx, stmt: dict[str, Any], clipped: set[str],
                      result: HandwrittenUpdate) -> None:
        for node in walk(stmt["e"]):
            if node[0] == "call" and tail_name(callee_name(node)) in MEAN_CALLS:
                base = set(self._arith_flow(node[1][1], set())) if node[1][0] == "a" else {
                    (callee_name(node) or "").rsplit(".", 1)[0]}
                inputs = base | set().union(*(self._arith_flow(a, set()) for a in node[2]))
                if _touches(inputs, clipped):
                    result.divisors.append(Divisor(
                        Dep(b=True), self._span(ctx, stmt, node),
                        "mean over the per-sample axis divides by the realized batch size"))

    def _add(self, ctx: Ctx, divisor: IR, span: Span, text: str, result: HandwrittenUpdate,
             floor: bool = False) -> None:
        dep = self.divisors.classify(divisor, ctx)
        if floor and dep.n:
            dep = Dep(n=True, floor=True)
        result.divisors.append(Divisor(dep, span, text))


def _computes_gradient(calls: list[IR], names: set[str]) -> bool:
    """A gradient computed here: a gradient or per-example gradient call, or a framework's
    gradient attribute read or written (``p.grad``, ``p.grad_sample``)."""
    return any(tail_name(callee_name(n)) in GRAD_CALLS | PER_SAMPLE_CALLS for n in calls) \
        or any(set(name.split(".")[1:]) & GRADIENT_ATTRIBUTES for name in names)


def _noise_marker(ir: IR) -> set[str]:
    return {"<noise>"} if any(n[0] == "call" and is_noise_draw(n) for n in walk(ir)) else set()

