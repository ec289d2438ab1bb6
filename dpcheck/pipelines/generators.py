"""What a project generator function yields as batches (``for x, y in batches(data, B)`` where
``batches`` ``yield``s).

A generator that yields fixed-size slices ``x[i:i + B]`` of the loop variable of a
``for i in range(start, n, B)`` (directly, or through an index slice ``idx = perm[i:i + B]``
then ``x[idx]``) makes fixed-size batches: sequential, or shuffled when it permutes first (the
sampling module reads the permutation). One that yields items indexed by a non-slice key
(``x[mask]``) makes batches whose size depends on that key: Poisson when the key is a Bernoulli
mask it draws. Anything else is undecided, with the reason. The batch size B is read through
the generator call's own arguments, so each caller gets the width it passes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dpcheck.model import Span
from dpcheck.pipelines.calls import argument
from dpcheck.pipelines.index import ProjectIndex
from dpcheck.pipelines.scope import Ctx
from dpcheck.sites.ir import IR, callee_name

#: The IR kinds of a ``yield`` expression statement (``yield from`` delegates: undecided).
YIELD = "yield"
YIELD_FROM = "yieldfrom"
_NONE: IR = ["c", None]


@dataclass(frozen=True)
class Yielded:
    """The batches a generator yields: ``slices`` (fixed width ``width``, read at its ``Ctx``),
    ``indexed`` (items selected by a non-slice key) or ``unknown`` (``note`` says why); ``span``
    is the first ``yield`` statement."""

    kind: str
    span: Span
    note: str
    width: tuple[Ctx, IR] | None = None


def yield_statements(index: ProjectIndex, function: Ctx) -> list[tuple[Ctx, dict[str, Any]]]:
    """The ``yield`` expression statements of ``function`` that may run; empty when it is not a
    generator."""
    return [(where, stmt) for where, stmt in index.statements([function])
            if stmt["k"] == "expr" and stmt["e"][0] == "?" and stmt["e"][1] in (YIELD, YIELD_FROM)]


def yielded_batches(index: ProjectIndex, function: Ctx, call: IR, call_ctx: Ctx) -> Yielded | None:
    """What the generator ``function``, called by ``call`` at ``call_ctx``, yields; None when
    ``function`` does not ``yield``. Every ``yield`` must agree."""
    found = yield_statements(index, function)
    if not found:
        return None
    name = callee_name(call) or "the generator"
    kinds = [_one_yield(index, function, where, stmt, call, call_ctx) for where, stmt in found]
    first = kinds[0]
    if any(k.kind != first.kind or _width(k) != _width(first) for k in kinds):
        return Yielded("unknown", first.span, f"{name}() yields batches of different kinds")
    return first


def _width(yielded: Yielded) -> IR | None:
    return yielded.width[1] if yielded.width is not None else None


def _one_yield(index: ProjectIndex, function: Ctx, where: Ctx, stmt: dict[str, Any],
               call: IR, call_ctx: Ctx) -> Yielded:
    span = Span(where.path, stmt["line"], stmt["col"])
    name = callee_name(call) or "the generator"
    value = stmt["e"][2] if stmt["e"][1] == YIELD else None
    if value is None or value == _NONE:
        return Yielded("unknown", span, f"{name}() delegates with yield from or yields nothing")
    items = value[1] if value[0] == "t" else [value]
    if not items or any(item[0] != "i" for item in items):
        return Yielded("unknown", span, f"{name}() yields something other than indexed data")
    header = _enclosing_range(index, where, stmt)
    widths = [_fixed_width(index, item[2], where, header) for item in items]
    width = widths[0]
    if width is not None and all(w == width for w in widths):
        return Yielded("slices", span, f"{name}() yields fixed-size slices "
                       f"[i:i + B] of its range(start, n, B) loop", _at_call(
                           index, function, width, call, call_ctx))
    if all(item[2][0] != "slice" for item in items):
        return Yielded("indexed", span, f"{name}() yields items selected by an index or mask")
    return Yielded("unknown", span, f"{name}() yields slices that are not of one fixed width")


def _enclosing_range(index: ProjectIndex, where: Ctx, stmt: dict[str, Any]
                     ) -> tuple[str, IR] | None:
    """(loop variable, step B) of the ``for i in range(start, n, B)`` directly enclosing
    ``stmt``, else None."""
    scope = index.scope(where)
    if scope is None or stmt["loop"] < 0:
        return None
    header = scope["stmts"][stmt["loop"]]
    iterable = header["e"]
    if header["k"] == "for" and isinstance(header["t"], str) and iterable[0] == "call" \
            and callee_name(iterable) == "range" and len(iterable[2]) == 3:
        return header["t"], iterable[2][2]
    return None


def _fixed_width(index: ProjectIndex, key: IR, where: Ctx, header: tuple[str, IR] | None,
                 depth: int = 0) -> IR | None:
    """The width B when ``key`` is the slice ``[i:i + B]`` (or ``[i:B + i]``) of the enclosing
    ``range(start, n, B)`` loop variable ``i``, or a name bound in the generator to such a
    slice of an index array (``idx = perm[i:i + B]``); else None."""
    if header is None or depth > 4:
        return None
    variable, step = header
    if key[0] == "r":
        binding = index.attribute(key[1], where)
        assigned = binding.assigned() if binding is not None else None
        if assigned is None or assigned[0][0] != "i" or assigned[1].scope != where.scope:
            return None
        return _fixed_width(index, assigned[0][2], where, header, depth + 1)
    if key[0] != "slice" or len(key) != 4 or key[3] != _NONE or key[1] != ["r", variable]:
        return None
    upper = key[2]
    ends = ([upper[2], upper[3]], [upper[3], upper[2]]) if upper[0] == "b" and upper[1] == "+" \
        else ()
    return step if [["r", variable], step] in ends else None


def _at_call(index: ProjectIndex, function: Ctx, width: IR, call: IR, call_ctx: Ctx
             ) -> tuple[Ctx, IR]:
    """Where to read the width: a generator parameter is read as the argument ``call`` passes
    for it (or the parameter's default); anything else in the generator itself."""
    scope = index.scope(function)
    params = scope["params"] if scope else []
    if width[0] == "r" and width[1] in (names := [p for p, _ in params]):
        passed = argument(call, names, width[1])
        if passed is not None:
            return call_ctx, passed
        default = params[names.index(width[1])][1]
        if default is not None:
            return Ctx(function.path, function.scope, scope["line"] if scope else 1), default
    return Ctx(function.path, function.scope), width
