"""What a project generator function yields as batches (``for x, y in batches(data, B)`` where
``batches`` ``yield``s).

A generator that yields fixed-size slices ``x[i:i + B]`` of the loop variable of a
``for i in range(start, n, B)`` (directly, or through an index slice ``idx = perm[i:i + B]``
then ``x[idx]``) makes fixed-size batches: sequential, or shuffled when it permutes first (the
sampling module reads the permutation). One that yields items indexed by a non-slice key
(``x[mask]``) makes batches whose size depends on that key: Poisson when the key is a Bernoulli
mask it draws. A generator that delegates (``yield from tfds.as_numpy(ds)``) yields the items of
the iterable it delegates to: that iterable is the loader. Anything else is undecided, with the
reason. The batch size B is read through
the generator call's own arguments, so each caller gets the width it passes.
"""

from __future__ import annotations

from dataclasses import dataclass
from dpcheck.model import Span
from dpcheck.pipelines.calls import argument
from dpcheck.pipelines.index import ProjectIndex
from dpcheck.pipelines.scope import Ctx
from dpcheck.sites.nodes import BinOp, Call, Const, Name, Node, Opaque, Seq, Slice, Subscript
from dpcheck.sites.views import Statement

#: The IR kinds of a ``yield`` expression statement (``yield from`` delegates to its iterable).
YIELD = "yield"
YIELD_FROM = "yieldfrom"


@dataclass(frozen=True)
class Yielded:
    """The batches a generator yields: ``slices`` (fixed width ``width``, read at its ``Ctx``),
    ``indexed`` (items selected by a non-slice key), ``delegated`` (the items of the iterable
    ``source``, read at its ``Ctx``) or ``unknown`` (``note`` says why); ``span`` is the first
    ``yield`` statement."""

    kind: str
    span: Span
    note: str
    width: tuple[Ctx, Node] | None = None
    source: tuple[Ctx, Node] | None = None


def yield_statements(index: ProjectIndex, function: Ctx) -> list[tuple[Ctx, Statement]]:
    """The ``yield`` expression statements of ``function`` that may run; empty when it is not a
    generator."""
    return [(where, stmt) for where, stmt in index.statements([function])
            if stmt.kind == "expr" and isinstance(stmt.expr, Opaque)
            and stmt.expr.kind in (YIELD, YIELD_FROM)]


def yielded_batches(index: ProjectIndex, function: Ctx, call: Call, call_ctx: Ctx) -> Yielded | None:
    """What the generator ``function``, called by ``call`` at ``call_ctx``, yields; None when
    ``function`` does not ``yield``. Every ``yield`` must agree."""
    found = yield_statements(index, function)
    if not found:
        return None
    name = call.name or "the generator"
    kinds = [_one_yield(index, function, where, stmt, call, call_ctx) for where, stmt in found]
    first, *_ = kinds
    if any(k.kind != first.kind or _width(k) != _width(first) for k in kinds):
        return Yielded("unknown", first.span, f"{name}() yields batches of different kinds")
    return first


def _width(yielded: Yielded) -> Node | None:
    if yielded.width is None:
        return None
    _, width = yielded.width
    return width


def _one_yield(index: ProjectIndex, function: Ctx, where: Ctx, stmt: Statement,
               call: Call, call_ctx: Ctx) -> Yielded:
    span = Span(where.path, stmt.line, stmt.column)
    name = call.name or "the generator"
    expr = stmt.expr
    parts = expr.parts if isinstance(expr, Opaque) else []
    value = next(iter(parts), None)
    if value is not None and isinstance(expr, Opaque) and expr.kind == YIELD_FROM:
        return Yielded("delegated", span, f"{name}() yields the items of the iterable it "
                       "delegates to with yield from", source=(where, value))
    if value is None or isinstance(value, Const) and value.value is None:
        return Yielded("unknown", span, f"{name}() yields nothing")
    items = value.items if isinstance(value, Seq) else [value]
    if not items or any(not isinstance(item, Subscript) for item in items):
        return Yielded("unknown", span, f"{name}() yields something other than indexed data")
    header = _enclosing_range(index, where, stmt)
    widths = [_fixed_width(index, item.index, where, header) for item in items]
    width, *_ = widths
    if width is not None and all(w == width for w in widths):
        return Yielded("slices", span, f"{name}() yields fixed-size slices "
                       f"[i:i + B] of its range(start, n, B) loop", _at_call(
                           index, function, width, call, call_ctx))
    if all(not isinstance(item.index, Slice) for item in items):
        return Yielded("indexed", span, f"{name}() yields items selected by an index or mask")
    return Yielded("unknown", span, f"{name}() yields slices that are not of one fixed width")


def _enclosing_range(index: ProjectIndex, where: Ctx, stmt: Statement
                     ) -> tuple[str, Node] | None:
    """(loop variable, step B) of the ``for i in range(start, n, B)`` directly enclosing
    ``stmt``, else None."""
    scope = index.scope(where)
    if scope is None or stmt.loop < 0:
        return None
    header = scope.statements[stmt.loop]
    iterable = header.expr
    if header.kind == "for" and isinstance(header.target, str) and isinstance(iterable, Call) \
            and iterable.name == "range" and len(iterable.args) == 3:
        _, _, step = iterable.args
        return header.target, step
    return None


def _fixed_width(index: ProjectIndex, key: Node, where: Ctx, header: tuple[str, Node] | None,
                 depth: int = 0) -> Node | None:
    """The width B when ``key`` is the slice ``[i:i + B]`` (or ``[i:B + i]``) of the enclosing
    ``range(start, n, B)`` loop variable ``i``, or a name bound in the generator to such a
    slice of an index array (``idx = perm[i:i + B]``); else None."""
    if header is None or depth > 4:
        return None
    variable, step = header
    if isinstance(key, Name):
        assigned = index.assigned(key.dotted, where)
        if assigned is None:
            return None
        value, read_at = assigned
        if not isinstance(value, Subscript) or read_at.scope != where.scope:
            return None
        return _fixed_width(index, value.index, where, header, depth + 1)
    loop_variable = Name(["r", variable])
    if not isinstance(key, Slice) or not key.bounded or key.step != Const(["c", None]) \
            or key.lower != loop_variable:
        return None
    upper = key.upper
    ends = ([upper.left, upper.right], [upper.right, upper.left]) \
        if isinstance(upper, BinOp) and upper.op == "+" else ()
    return step if [loop_variable, step] in ends else None


def _at_call(index: ProjectIndex, function: Ctx, width: Node, call: Call, call_ctx: Ctx
             ) -> tuple[Ctx, Node]:
    """Where to read the width: a generator parameter is read as the argument ``call`` passes
    for it (or the parameter's default); anything else in the generator itself."""
    scope = index.scope(function)
    params = scope.params if scope else []
    if isinstance(width, Name) and width.dotted in (names := [p.name for p in params]):
        passed = argument(call, names, width.dotted)
        if passed is not None:
            return call_ctx, passed
        default = params[names.index(width.dotted)].default
        if default is not None:
            return Ctx(function.path, function.scope, scope.line if scope else 1), default
    return Ctx(function.path, function.scope), width
