"""Per-example gradients in a hand-written update, and where clipping reaches them.

Per-example gradients are recognised however they are computed: ``vmap``/``jacrev`` (JAX,
torch.func), BackPACK's ``BatchGrad``/``BatchL2Grad`` attributes, TF's ``vectorized_map``/
``pfor`` or a tape's ``jacobian``, row-wise norms, a project function computing them, a library
privatizer, and gradient calls inside a loop over the examples of a batch (by where the loop's
items come from, ``Origin.EXAMPLE``, or a ``range`` over the realized batch size). The evidence
counts only where a clip reaches them. A clip factor bounded the wrong way round
(``min(norm/C, 1)``) is kept as evidence too: it does not bound the per-example sensitivity.
"""

from __future__ import annotations

from collections.abc import Callable

from dpcheck.model import Evidence
from dpcheck.pipelines.divisor import DivisorClassifier
from dpcheck.pipelines.dp_libraries import Privatizer
from dpcheck.pipelines.handwritten_update import HandwrittenUpdate, evidence_span
from dpcheck.pipelines.index import ProjectIndex
from dpcheck.pipelines.provenance import Origin
from dpcheck.pipelines.scope import Ctx
from dpcheck.pipelines.steps import StepFinder, is_clip_call, mentions_norm, scope_clips
from dpcheck.pipelines.taint import assigned_names, touches
from dpcheck.sites.ir import IR
from dpcheck.sites.nodes import BinOp, Call, Name, node
from dpcheck.sites.views import Statement

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
#: Attributes in which the frameworks keep per-sample gradients or norms: Opacus
#: ``grad_sample``, BackPACK ``grad_batch`` (``BatchGrad``) and ``batch_l2`` (``BatchL2Grad``).
#: Matched as attributes (``p.grad_batch``), never inside another name: a count of
#: ``accumulate_grad_batches`` is a number of micro-batches, not a gradient.
PER_SAMPLE_ATTRIBUTES = frozenset({"grad_sample", "grad_batch", "batch_l2"})
GRAD_CALLS = frozenset({"backward", "grad", "value_and_grad", "gradient"})


def clip_factor_inverted(expr: IR) -> bool:
    """A per-example clip factor bounded the wrong way round: ``min(norm/C, 1)``
    (``clamp_max``, ``clamp(max=1)``) or ``max(C/norm, 1)``. The right factors are
    ``min(C/norm, 1)`` to multiply by and ``max(norm/C, 1)`` to divide by; the inverted ones
    scale a large gradient *up* (or leave it unbounded), so C bounds nothing."""
    call = node(expr)
    if not isinstance(call, Call):
        return False
    tail = call.method
    keyword = {"max", "min"} & set(call.kwargs)
    upper = tail in UPPER_BOUNDS or keyword == {"max"}
    lower = tail in LOWER_BOUNDS or keyword == {"min"}
    for ratio in call.walk():
        if not isinstance(ratio, BinOp) or ratio.op != "/":
            continue
        norm_above, norm_below = mentions_norm(ratio.left), mentions_norm(ratio.right)
        if norm_above != norm_below:
            return (upper and norm_above) or (lower and norm_below)
    return False


def computes_gradient(calls: list[Call], names: set[str]) -> bool:
    """A gradient computed here: a gradient or per-example gradient call, or a framework's
    gradient attribute read or written (``p.grad``, ``p.grad_sample``)."""
    return any(call.method in GRAD_CALLS | PER_SAMPLE_CALLS for call in calls) \
        or any(set(name.split(".")[1:]) & GRADIENT_ATTRIBUTES for name in names)


def _row_norm(call: Call) -> bool:
    return "norm" in call.method and any(k in call.kwargs for k in ("dim", "axis"))


class PerSampleFinder:
    """Records per-example gradients reached by clipping; ``function`` is the analysis'
    memoised lookup of the project function a callee names."""

    def __init__(self, index: ProjectIndex, divisors: DivisorClassifier, steps: StepFinder,
                 function: Callable[[str | None, Ctx], Ctx | None]) -> None:
        self.index = index
        self.divisors = divisors
        self.steps = steps
        self.function = function
        self._clipping: dict[Ctx, bool] = {}
        self._per_sample_functions: dict[Ctx, bool] = {}

    def example_loop(self, ctx: Ctx, stmts: list[Statement], loop: int) -> bool:
        """Whether the loop at ``loop`` (or one around it) runs over the examples of a batch."""
        while loop >= 0:
            header = stmts[loop]
            iterable = header.expr
            where = Ctx(ctx.path, ctx.scope, header.line)
            if isinstance(iterable, Call) and iterable.name == "range" and iterable.args:
                dep = self.divisors.classify(iterable.args[-1], where)
                if dep.kind == "realized" and self.steps.selects_by_counter(stmts, loop):
                    return True
            else:
                targets = list(assigned_names(header.target))
                if targets:
                    binding = self.index.bind(targets[-1], Ctx(ctx.path, ctx.scope,
                                                               header.line + 1))
                    if binding is not None and self.divisors.origin(
                        Name(["r", targets[-1]]), Ctx(ctx.path, ctx.scope, header.line + 1)
                    ) == Origin.EXAMPLE:
                        return True
            if self.steps.element_loop(ctx, stmts, loop):
                return True
            loop = header.loop
        return False

    def clips(self, callee: str | None, ctx: Ctx) -> bool:
        """Whether ``callee`` is a project function that clips (its result is clipped)."""
        target = self.function(callee, ctx)
        if target is None:
            return False
        if target not in self._clipping:
            scope = self.index.scope(target)
            self._clipping[target] = scope is not None and scope_clips(scope, target, self.index)
        return self._clipping[target]

    def record(self, ctx: Ctx, stmts: list[Statement], stmt: Statement,
               calls: list[Call], refs: set[str], targets: set[str],
               result: HandwrittenUpdate, clips: list[Call], clip_stmt: bool,
               privatizers: list[tuple[Call, Privatizer]]) -> None:
        """Per-sample gradients: ``vmap``/``grad_sample`` values, row-wise norms, a privatizer
        that computes them and gradient calls inside a loop over examples seed a taint; the
        evidence is recorded where a clip reaches them, so per-sample machinery that clipping
        never touches does not count (``per_sample_seen`` keeps where it was computed). A clip
        that changes its target in place (``clip_stmt``) reaches the target's taint."""
        tainted = result.per_sample_names
        where = Ctx(ctx.path, ctx.scope, stmt.line)
        by_privatizer = any("per-sample" in p.provides for _, p in privatizers)
        seeded = by_privatizer or any(set(r.split(".")[1:]) & PER_SAMPLE_ATTRIBUTES for r in refs) \
            or any(call.method in PER_SAMPLE_CALLS or _row_norm(call)
                   or self._per_sample_function(call.name, where) for call in calls)
        in_examples = stmt.loop >= 0 and (clip_stmt or any(
            call.method in GRAD_CALLS or is_clip_call(call, where, self.index)
            or self.clips(call.name, where) for call in calls
        )) and self.example_loop(ctx, stmts, stmt.loop)
        reached = touches(refs | targets if clip_stmt else refs, tainted)
        if (seeded or in_examples) and not reached:
            result.per_sample_seen.append(Evidence("per-sample-grad", evidence_span(ctx, stmt), (
                "per-example gradients computed in a loop over the examples of a batch"
                if in_examples else "per-example gradients")))
        if seeded or in_examples or reached:
            tainted |= targets
        clips_here = bool(clips) or clip_stmt or any(self.clips(r, where) for r in refs) \
            or any("clip" in p.provides for _, p in privatizers)
        if clips_here and (seeded or in_examples or reached):
            note = "clipping inside a loop over the examples of a batch" if in_examples else (
                "clipping of per-sample gradients")
            result.per_sample.append(Evidence(
                "per-sample-grad", evidence_span(ctx, stmt, next(iter(clips), None)), note))

    def _per_sample_function(self, callee: str | None, ctx: Ctx) -> bool:
        """Whether ``callee`` is a project function computing per-sample gradients (``vmap``,
        or gradients taken inside a loop over examples)."""
        target = self.function(callee, ctx)
        if target is None:
            return False
        if target not in self._per_sample_functions:
            self._per_sample_functions[target] = False
            scope = self.index.scope(target)
            stmts = scope.statements if scope else []
            self._per_sample_functions[target] = any(
                part.method in PER_SAMPLE_CALLS
                or (part.method in GRAD_CALLS and stmt.loop >= 0
                    and self.example_loop(target, stmts, stmt.loop))
                for stmt in stmts for part in stmt.expr.walk() if isinstance(part, Call))
        return self._per_sample_functions[target]
