"""Gradient accumulation: several loader batches per noisy step.

The logical batch, not the physical one, sets the divisor, q and the step count. A training loop
accumulates when the step runs only on every k-th batch; k is read from the ``if`` test that
gates it (the summary keeps each scope's ``if`` tests), never guessed:

* Opacus 1.x: ``optimizer.signal_skip_step()`` (or ``signal_skip_step(do_skip=True)``, or
  ``signal_skip_step(do_skip=<test>)``) in the arm taken on the batches that are not the k-th.
  The library then divides by ``expected_batch_size × accumulated_iterations``, a fixed number;
* Opacus 0.x: ``optimizer.virtual_step()`` in that arm, ``optimizer.step()`` in the other; the
  library's realized count runs on across the virtual steps;
* hand-written loops: the update's noise draw (directly, or in a project function called
  there) in the arm taken on every k-th batch, so the noisy sum of k micro-batches is divided
  once;
* library privatizers that draw the noise for the caller (Opacus' ``DPOptimizer``, an engine's
  ``attach(optimizer)`` that patches ``step``): the ``step()`` of the optimizer the privatizer
  built or was handed, in the arm taken on every k-th batch;
* Opacus ``BatchMemoryManager``: it splits each batch of the loader it wraps into physical
  batches itself, so the logical batch is that loader's batch (factor 1, nothing to read).

Gates read: ``c % k == 0`` / ``!= 0``, ``c % k == k - 1`` / ``!=``, ``not c % k``, ``c % k``,
each optionally joined (``or`` / ``and``) with an end-of-epoch comparison against ``len(...)``
that flushes the last, smaller group. ``c`` must be a batch counter: the target of the loop
directly around the gate, or a name incremented with ``+=`` in that loop.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from dpcheck.model import Evidence, ParamValue, Span
from dpcheck.pipelines.index import ProjectIndex
from dpcheck.pipelines.scope import Ctx
from dpcheck.pipelines.values import Evaluator
from dpcheck.sites.ir import IR
from dpcheck.sites.nodes import BinOp, Call, Compare, Const, Name, Node, Num, Opaque, UnaryOp
from dpcheck.sites.views import Scope, Statement

SKIP_CALLS = {"signal_skip_step": "opacus-skip-step", "virtual_step": "opacus-virtual-step"}
MEMORY_MANAGER = "BatchMemoryManager"
NoiseSites = frozenset[tuple[str, str, int]]
"""(path, scope, line) of the statements that draw the noise of a hand-written update."""


@dataclass(frozen=True)
class Gate:
    """A modulo test on a batch counter: ``factor`` (k), whether the step runs when the test is
    true, whether an end-of-epoch clause also runs it (``flushes``)."""

    counter: Node
    factor: Node
    step_when_true: bool
    flushes: bool = False


@dataclass(frozen=True)
class Accumulation:
    """An accumulation idiom found at ``span``. ``factor`` is k and where to read it; None for
    ``BatchMemoryManager`` (the loader's batch is the logical one) or when k cannot be read
    (``reason`` says why)."""

    idiom: str
    span: Span
    factor: tuple[Ctx, IR] | None = None
    flushes: bool = False
    reason: str = ""

    @property
    def multiplies(self) -> bool:
        """Whether the loader's batch is only a part of the logical batch."""
        return self.idiom != MEMORY_MANAGER

    def evidence(self) -> Evidence:
        """Where the accumulation is, and what it means for the batch size."""
        if not self.multiplies:
            note = ("BatchMemoryManager splits each batch of the loader it wraps into physical "
                    "batches: the logical batch is the loader's")
        elif self.factor is None:
            note = (f"gradient accumulation ({self.reason}): the logical batch size, q and the "
                    "steps are not derived from the loader")
        else:
            where, _ = self.factor
            note = (f"gradient accumulation: one noisy step every k loader batches, k read at "
                    f"line {where.line}"
                    + ("; the last group of an epoch is flushed" if self.flushes else ""))
        return Evidence("accumulation", self.span, note)


@dataclass(frozen=True)
class LogicalBatch:
    """The logical batch: the loader's (physical) batch size times k."""

    physical: ParamValue
    factor: ParamValue
    flushes: bool

    @property
    def size(self) -> float:
        return self.physical.value * self.factor.value  # type: ignore[operator]

    def param(self) -> ParamValue:
        """``batch_size`` = physical × k, with k's provenance."""
        return ParamValue("batch_size", self.size, "derived", self.factor.span,
                          f"loader batch_size {self.physical.value:g} x {self.factor.value:g} "
                          f"accumulated batches per noisy step ({self.factor.source})")

    def rounds(self, size: float, drop_last: bool) -> int:
        """Noisy steps per epoch over N = ``size`` examples: the loader's batches per epoch M,
        then M/k steps, rounded up when the last, smaller group is flushed, else down (those
        batches wait for the next epoch's first step)."""
        ratio = size / self.physical.value  # type: ignore[operator]
        batches = math.floor(ratio) if drop_last else math.ceil(ratio)
        groups = batches / self.factor.value  # type: ignore[operator]
        return math.ceil(groups) if self.flushes else math.floor(groups)


def find_accumulation(index: ProjectIndex, scopes: Iterable[Ctx],
                      noise: NoiseSites = frozenset()) -> Accumulation | None:
    """The accumulation idiom of the training loop in ``scopes`` (see the module docstring);
    ``noise`` locates a hand-written update's noise draws. None when there is none. Idioms
    that disagree give an ``Accumulation`` without a factor."""
    found = list(_idioms(index, list(scopes), noise))
    if not found:
        return None
    readable = [f for f in found if f.factor is not None or not f.multiplies]
    distinct = {(f.idiom, _factor_text(f.factor)) for f in readable}
    first, *_ = found
    if len(readable) == len(found) and len(distinct) == 1:
        return first
    unread = next((f for f in found if f not in readable), None)
    reason = unread.reason if unread is not None else (
        "the loop accumulates batches in more than one way")
    return Accumulation(first.idiom, first.span, reason=reason)


def _factor_text(factor: tuple[Ctx, IR] | None) -> str | None:
    """The expression of k of an accumulation's ``factor``, as text (None without one): two
    idioms agree when they read the same expression, wherever they read it."""
    if factor is None:
        return None
    _, expr = factor
    return repr(expr)


def logical_batch(accumulation: Accumulation, physical: ParamValue | None,
                  values: Evaluator) -> LogicalBatch | None:
    """The logical batch of a loader batch ``physical`` under ``accumulation``; None unless both
    the physical batch and k are known numbers."""
    factor = _factor(accumulation, values)
    if physical is None or physical.value is None or factor is None:
        return None
    return LogicalBatch(physical, factor, accumulation.flushes)


def accumulated_steps(accumulation: Accumulation, draws: ParamValue | None,
                      values: Evaluator) -> ParamValue | None:
    """The noisy steps of a loop that draws a batch ``draws`` times, one step per k draws
    (rounded up when the last group is flushed); None unless both numbers are known."""
    factor = _factor(accumulation, values)
    if draws is None or draws.value is None or factor is None:
        return None
    groups = draws.value / factor.value  # type: ignore[operator]
    steps = math.ceil(groups) if accumulation.flushes else math.floor(groups)
    return ParamValue("steps", steps, "derived", draws.span,
                      f"{draws.value:g} loop iterations / {factor.value:g} accumulated batches")


def _factor(accumulation: Accumulation, values: Evaluator) -> ParamValue | None:
    """k as a number (a positive integer), with its provenance."""
    if accumulation.factor is None:
        return None
    ctx, ir = accumulation.factor
    factor = values.value(ir, ctx)
    if factor is None or factor.value != int(factor.value) or factor.value < 1:
        return None
    return factor.param("k")


# -- idioms ---------------------------------------------------------------------------------
def _idioms(index: ProjectIndex, scopes: list[Ctx], noise: NoiseSites
            ) -> Iterator[Accumulation]:
    noisy_functions: dict[Ctx, bool] = {}
    for where, stmt in index.statements(scopes):
        # the summary keeps the source of statements calling the idioms' calls
        if stmt.source is None and not (noise and stmt.arms):
            continue
        ctx = Ctx(where.path, where.scope)
        scope = index.scope(ctx)
        if scope is None:
            continue
        calls = [n for n in stmt.expr.walk() if isinstance(n, Call)]
        for call in calls:
            tail = call.method
            span = Span(ctx.path, *call.position)
            if tail == MEMORY_MANAGER and stmt.kind == "with":
                yield Accumulation(MEMORY_MANAGER, span)
            elif tail in SKIP_CALLS and "." in (call.name or ""):
                found = _skip(ctx, scope, stmt, call, SKIP_CALLS[tail], span)
                if found is not None:
                    yield found
        if noise and any(_gate(scope.if_test(line)) for line, _ in stmt.arms) \
                and _draws_noise(index, where, calls, noise, noisy_functions):
            found = _gated(ctx, scope, stmt, Span(ctx.path, stmt.line, stmt.column))
            if found is not None:
                yield found


def _skip(ctx: Ctx, scope: Scope, stmt: Statement, call: Call, idiom: str,
          span: Span) -> Accumulation | None:
    """A skip signal: k from the test of the arm it sits in (or of its ``do_skip=`` test)."""
    do_skip = call.argument(0, "do_skip")
    if isinstance(do_skip, Const) and do_skip.value is False:
        return None
    if do_skip is not None and not (isinstance(do_skip, Const) and do_skip.value is True):
        gate = _gate(do_skip)
        if gate is None or gate.step_when_true:
            return Accumulation(idiom, span, reason="do_skip= is not a modulo test dpcheck reads")
        return _decided(idiom, span, ctx, gate, scope, stmt, stmt.line)
    return _in_arm(idiom, span, ctx, scope, stmt, step_arm=1)


def _gated(ctx: Ctx, scope: Scope, stmt: Statement, span: Span
           ) -> Accumulation | None:
    """A noise draw in the arm of a modulo gate taken on every k-th batch; None when the draw
    sits in no such arm (no accumulation)."""
    found = _in_arm("gated-noise", span, ctx, scope, stmt, step_arm=0)
    return found if found is not None and found.factor is not None else None


def _in_arm(idiom: str, span: Span, ctx: Ctx, scope: Scope, stmt: Statement,
            step_arm: int) -> Accumulation | None:
    """k from the innermost enclosing ``if`` that is a modulo gate; ``step_arm`` is the arm the
    step runs in relative to the statement (0: the statement's arm, 1: the other arm)."""
    for line, arm in reversed(stmt.arms):
        gate = _gate(scope.if_test(line))
        if gate is None:
            continue
        if gate.step_when_true != ((arm == 0) == (step_arm == 0)):
            return Accumulation(idiom, span, reason=f"the if at line {line} steps on the "
                                "batches that are not the k-th")
        return _decided(idiom, span, ctx, gate, scope, stmt, line)
    if idiom == "gated-noise":
        return None
    return Accumulation(idiom, span, reason="the skip call is not gated by a modulo test on a "
                        "batch counter")


def _decided(idiom: str, span: Span, ctx: Ctx, gate: Gate, scope: Scope,
             stmt: Statement, line: int) -> Accumulation:
    if not _is_batch_counter(gate.counter, scope, stmt, line):
        return Accumulation(idiom, span, reason=f"the test at line {line} does not count the "
                            "batches of the loop around it")
    return Accumulation(idiom, span, (Ctx(ctx.path, ctx.scope, line), gate.factor),
                        gate.flushes)


def _draws_noise(index: ProjectIndex, where: Ctx, calls: list[Call], noise: NoiseSites,
                 memo: dict[Ctx, bool]) -> bool:
    """Whether the statement at ``where`` draws the update's noise: it is a noise site, or one
    of its ``calls`` runs a project function holding one."""
    if (where.path, where.scope, where.line) in noise:
        return True
    if any(_steps_privatized(index, where, call, noise) for call in calls):
        return True
    for call in calls:
        target = index.function(call.name or "", where) if isinstance(call.callee, Name) \
            else None
        if target is not None and target not in memo:
            memo[target] = any((path, scope) == (target.path, target.scope)
                               for path, scope, _ in noise)
        if target is not None and memo[target]:
            return True
    return False


def _steps_privatized(index: ProjectIndex, where: Ctx, call: Call, noise: NoiseSites) -> bool:
    """Whether ``call`` steps an optimizer whose noise a library privatizer draws at each of its
    steps: the optimizer is the object the privatizer call built (Opacus' ``DPOptimizer``), or
    the object handed to a method of that object (``engine.attach(optimizer)`` patches its
    ``step``). The optimizer is found by what its name is bound to, never by its name."""
    receiver = call.callee.base if isinstance(call.callee, Name) else None
    if call.method != "step" or not receiver:
        return False
    bound = index.bind(receiver, where)
    if bound is None or bound.kind != "assign":
        return False
    if (bound.ctx.path, bound.ctx.scope, bound.line) in noise:
        return True
    scope = index.scope(Ctx(bound.ctx.path, bound.ctx.scope))
    for stmt in scope.statements if scope is not None else ():
        for handing in (n for n in stmt.expr.walk() if isinstance(n, Call)):
            owner = handing.callee.base if isinstance(handing.callee, Name) else None
            passed = [a for a in handing.args if isinstance(a, Name) and a.dotted == receiver]
            if not owner or not passed:
                continue
            at = Ctx(bound.ctx.path, bound.ctx.scope, stmt.line)
            engine = index.bind(owner, at)
            if engine is not None and engine.kind == "assign" \
                    and (engine.ctx.path, engine.ctx.scope, engine.line) in noise \
                    and index.bind(receiver, at) == bound:
                return True
    return False


# -- gates ----------------------------------------------------------------------------------
def _gate(test: Node | None) -> Gate | None:
    """The modulo gate a test expresses (see the module docstring), else None."""
    if test is None:
        return None
    if isinstance(test, Opaque) and test.kind in ("or", "and") and len(test.parts) > 1:
        return _joined(test.kind, test.parts)
    if isinstance(test, UnaryOp) and isinstance(test.operand, BinOp) and test.op == "not" \
            and _modulo(test.operand):
        return Gate(test.operand.left, test.operand.right, True)
    if isinstance(test, BinOp) and _modulo(test):
        return Gate(test.left, test.right, False)
    if not isinstance(test, Compare) or test.op not in ("==", "!="):
        return None
    for remainder, constant in ((test.left, test.right), (test.right, test.left)):
        if isinstance(remainder, BinOp) and _modulo(remainder) \
                and _residue(constant, remainder.right):
            return Gate(remainder.left, remainder.right, test.op == "==")
    return None


def _joined(operator: str, parts: list[Node]) -> Gate | None:
    """``gate or end-of-epoch`` (the step also runs on the last batch), or its negation
    ``skip-gate and not end-of-epoch``."""
    gates = [g for g in map(_gate, parts) if g is not None]
    others = [p for p in parts if _gate(p) is None]
    wanted = "==" if operator == "or" else "!="
    if len(gates) != 1 or not others:
        return None
    gate, = gates
    if gate.step_when_true != (operator == "or") \
            or not all(_end_of_epoch(p, wanted) for p in others):
        return None
    return Gate(gate.counter, gate.factor, gate.step_when_true, flushes=True)


def _modulo(expr: Node) -> bool:
    return isinstance(expr, BinOp) and not isinstance(expr, Compare) and expr.op == "%"


def _residue(constant: Node, factor: Node) -> bool:
    """A fixed residue: an integer literal, or ``k - n`` for the gate's own k."""
    if isinstance(constant, Num) and isinstance(constant.value, int):
        return True
    return isinstance(constant, BinOp) and constant.op == "-" and constant.left == factor \
        and isinstance(constant.right, Num)


def _end_of_epoch(expr: Node, operator: str) -> bool:
    """``c == len(loader)`` (or ``!=`` for the negated form): the last batch of the epoch."""
    return isinstance(expr, Compare) and expr.op == operator and any(
        isinstance(n, Call) and n.name == "len" for n in expr.walk())


def _is_batch_counter(counter: Node, scope: Scope, stmt: Statement, line: int) -> bool:
    """Whether ``counter`` reads the target of the loop directly around the ``if`` at ``line``,
    or a name incremented with ``+=`` in that loop."""
    stmts = scope.statements
    loop = stmt.loop
    while loop >= 0 and stmts[loop].line >= line:
        loop = stmts[loop].loop
    if loop < 0:
        return False
    names = {n.dotted for n in counter.walk() if isinstance(n, Name)}
    header = stmts[loop].target
    targets = set(_flatten(header))
    counters = {s.target for s in stmts if s.kind == "aug" and s.op == "+" and s.loop == loop}
    return bool(names & (targets | counters))


def _flatten(target: Any) -> Iterator[str]:
    if isinstance(target, str):
        yield target
    elif isinstance(target, list):
        for item in target:
            yield from _flatten(item)
