"""The values a parameter takes over the runs a project makes: a sweep.

A function called from several places, or in a loop over a list of literals, runs once per
value it is handed (``run(4.0, sigma)`` for each ``sigma`` of ``[0.02, 0.05, 0.1]``, beside
``run(1.0, 0.1)``). ``Evaluator.value`` holds a parameter only when every caller passes the
same number; ``run_values`` lists every number it may hold, one per run: what each caller in
the pipeline's reach passes (followed through the callers' own parameters), every element of a
literal list a loop walks or a subscript reads with an index that is not a constant, and
arithmetic in which a single operand varies (the others hold one value in every run, so each
result is a real run's). Two varying operands give no list: pairing their values would invent
runs the callers never make. Anything not known gives no list either.

What several values mean depends on the question a rule asks, so the choice is the caller's
(``dpcheck.pipelines.params``): the noise multiplier is judged at its lowest, the run that
leaks most (DP104 asks whether any run is in the low-noise regime; a bound at the lowest σ
holds for every run); a batch size, a dataset size or a step count with several values stays
unresolved, since no one of them is the worst case for every rule.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from dpcheck.pipelines.scope import Ctx
from dpcheck.pipelines.questions import frozen
from dpcheck.pipelines.values import Evaluator, Value
from dpcheck.sites.ir import IR
from dpcheck.sites.nodes import BinOp, Call, Name, Node, Num, ReadAt, Seq, Subscript, UnaryOp, node, walk

#: The most runs listed; a longer sweep is left unresolved.
MAX_RUNS = 64


def run_values(evaluator: Evaluator, ir: IR | None, ctx: Ctx) -> list[Value] | None:
    """Every value ``ir`` (read at ``ctx``) may hold, one per run the callers make; None when
    any of them is not known (see the module docstring). A name followed is a question of the
    memo and cycle guard (``dpcheck.pipelines.questions``), as for ``Evaluator.value``."""
    single = evaluator.value(ir, ctx)
    if single is not None:
        return [single]
    if ir is None:
        return None
    expr = node(ir)
    found: list[Value] | None = None
    if isinstance(expr, ReadAt):
        found = run_values(evaluator, expr.expr, Ctx(expr.path, expr.scope, expr.line))
    elif isinstance(expr, Name):
        found = _followed(evaluator, "runs", expr, ctx, lambda: _named(evaluator, expr, ctx))
    elif isinstance(expr, Subscript):
        found = _elements(evaluator, expr, ctx)
    elif isinstance(expr, UnaryOp) and expr.op == "-":
        inner = run_values(evaluator, expr.operand, ctx)
        found = [replace(v, value=-v.value) for v in inner] if inner is not None else None
    elif isinstance(expr, BinOp):
        found = _arithmetic(evaluator, expr, ctx)
    return found if found is not None and len(found) <= MAX_RUNS else None


def _followed(evaluator: Evaluator, kind: str, expr: Node, ctx: Ctx,
              answer: Callable[[], list[Value] | None]) -> list[Value] | None:
    """The answer to the question ``kind`` about the name ``expr`` read at ``ctx`` (None when
    unknown, or when the name is met again while it is being answered)."""
    key = (kind, frozen(expr), ctx, evaluator.index.reach, frozenset(evaluator.assumed.items()))
    return evaluator.index.questions.ask(key, answer, None)


def _named(evaluator: Evaluator, name: Name, ctx: Ctx) -> list[Value] | None:
    """A parameter: what each caller passes; a loop variable over a literal list: its
    elements; a plain assignment: its value's runs."""
    index = evaluator.index
    binding = index.attribute(name.dotted, ctx)
    if binding is None:
        return None
    if binding.kind == "param":
        passed = index.arguments(binding)
        runs = [run_values(evaluator, arg, where) for where, arg in passed]
        return [v for run in runs for v in run] if passed and None not in runs else None  # type: ignore[union-attr]
    where = replace(binding.ctx, line=binding.line)
    if binding.kind == "loop" and binding.index is None:
        return _items(evaluator, binding.ir, where)
    if binding.kind == "assign" and not binding.index and not index.mutated(binding):
        return run_values(evaluator, binding.ir, where)
    return None


def _elements(evaluator: Evaluator, item: Subscript, ctx: Ctx) -> list[Value] | None:
    """``values[i]``: the element at a constant index, else every element of the list."""
    key = evaluator.literal(item.index, ctx)
    runs = _items(evaluator, item.value, ctx)
    if runs is None or key is None:
        return runs
    if isinstance(key.value, int) and not isinstance(key.value, bool) and -len(runs) <= key.value < len(runs):
        return [runs[key.value]]
    return None


def _items(evaluator: Evaluator, ir: IR | None, ctx: Ctx) -> list[Value] | None:
    """The values of the elements of a list or tuple literal, through a name assigned it once
    and never changed (no augmented assignment, no method called on it)."""
    expr = node(ir) if ir is not None else None
    if isinstance(expr, Name):
        return _followed(evaluator, "run-items", expr, ctx, lambda: _named_items(evaluator, expr, ctx))
    if not isinstance(expr, Seq) or not expr.items:
        return None
    runs = [run_values(evaluator, element, ctx) for element in expr.items]
    return [v for run in runs for v in run] if None not in runs else None  # type: ignore[union-attr]


def _named_items(evaluator: Evaluator, name: Name, ctx: Ctx) -> list[Value] | None:
    """``_items`` of the list a name was assigned once and never changed."""
    binding = evaluator.index.attribute(name.dotted, ctx)
    if binding is None or binding.kind != "assign" or binding.index \
            or evaluator.index.mutated(binding) or _called_on(evaluator, binding.name, binding.ctx):
        return None
    return _items(evaluator, binding.ir, replace(binding.ctx, line=binding.line))


def _called_on(evaluator: Evaluator, name: str, ctx: Ctx) -> bool:
    """Whether a method is called on ``name`` in the scope of ``ctx`` (``xs.append(...)``)."""
    scope = evaluator.index.scope(ctx)
    return scope is None or any(
        isinstance(item, Call) and isinstance(item.callee, Name) and item.callee.base == name
        for stmt in scope.statements if stmt.expr is not None for item in walk(node(stmt.expr)))


def _arithmetic(evaluator: Evaluator, expr: BinOp, ctx: Ctx) -> list[Value] | None:
    """Arithmetic in which at most one operand varies over the runs."""
    left = run_values(evaluator, expr.left, ctx)
    right = run_values(evaluator, expr.right, ctx)
    if left is None or right is None or (len(left) > 1 and len(right) > 1):
        return None
    results: list[Value] = []
    for a in left:
        for b in right:
            combined = evaluator.value(BinOp(["b", expr.op, _number(a), _number(b)]), ctx)
            if combined is None:
                return None
            results.append(combined)
    return results


def _number(value: Value) -> Node:
    return Num(["n", value.value])
