"""The shape of a training loop in a scope's statements: the statements of its body, whether
it takes optimizer steps (the loop that trains, not a statistics pass over another loader),
the iterator a ``for _ in range(n)`` loop draws its batches from with ``next(it)``, and how many
steps a loop over a loader makes once the ``range`` loops around it are counted."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TypeGuard

from dpcheck.pipelines.scope import Ctx
from dpcheck.sites.nodes import BinOp, Call, Node, ReadAt, walk
from dpcheck.sites.views import Statement

#: Calls whose first argument is the loader the loop iterates (with an index, a progress bar,
#: other sequences alongside).
LOOP_WRAPPERS = ("enumerate", "tqdm", "zip")
#: Calls that make a loop over a loader a training loop (``step*`` too: ``step_dp``).
TRAINING_CALLS = frozenset({"backward", "virtual_step", "apply_gradients", "minimize"})


def body(stmts: list[Statement], loop: int) -> Iterator[Statement]:
    """The statements inside the loop at ``stmts[loop]`` (nested ones included), in order."""
    for stmt in stmts[loop + 1:]:
        enclosing = stmt.loop
        while enclosing > loop:
            enclosing = stmts[enclosing].loop
        if enclosing == loop:
            yield stmt
        elif stmt.loop_depth <= stmts[loop].loop_depth:
            return


def takes_steps(stmts: list[Statement], loop: int) -> bool:
    """Whether the body of the loop at ``stmts[loop]`` takes training steps (``backward``, an
    optimizer ``step``): the loop that trains, not a statistics or pre-computation pass over
    another loader."""
    return any(isinstance(item, Call) and _is_step(item.method)
               for stmt in body(stmts, loop) for item in walk(stmt.expr))


def drawn(stmts: list[Statement], loop: int, ctx: Ctx) -> tuple[Node, Ctx] | None:
    """The iterator a ``for ... in range(n)`` loop draws its batches from with ``next(it)``
    (``it = iter(loader)`` before the loop), and where the draw reads it; None for any other
    loop."""
    if not _is_range(stmts[loop].expr):
        return None
    for stmt in body(stmts, loop):
        for item in walk(stmt.expr):
            if isinstance(item, Call) and item.name == "next" and item.args:
                return next(iter(item.args)), Ctx(ctx.path, ctx.scope, stmt.line)
    return None


def loader_passes(ctx: Ctx, stmts: list[Statement], loop: int,
                  per_pass: tuple[Ctx, Node]) -> tuple[Ctx, Node] | None:
    """The steps of the loop ``stmts[loop]`` (of the scope ``ctx``, run once) over a loader of
    ``per_pass`` batches: ``per_pass`` times the count of each ``range(n)`` loop around it; None
    when another loop repeats it (a ``while epsilon < budget`` that rebuilds the loader)."""
    where, count = per_pass
    steps: Node = ReadAt([ReadAt.TAG, where.path, where.scope, where.line, count])
    outer = stmts[loop].loop
    while outer >= 0:
        header = stmts[outer]
        iterable = header.expr
        if header.kind != "for" or not _is_range(iterable) or len(iterable.args) != 1:
            return None
        [repeats] = iterable.args
        steps = BinOp(["b", "*", steps, repeats])
        outer = header.loop
    return Ctx(ctx.path, ctx.scope, stmts[loop].line), steps


def _is_range(expr: Node) -> TypeGuard[Call]:
    return isinstance(expr, Call) and expr.name == "range"


def _is_step(tail: str) -> bool:
    return tail in TRAINING_CALLS or tail.startswith("step")
