"""The scale of a hand-written Gaussian draw: the factors of its standard deviation, the clip
bound it is a multiple of, and where a pipeline hands the noise scale to the code that draws the
noise (the evidence that anchors a low-noise finding on the script's ``noise_multiplier=``
argument when the draw itself sits in a library class of the project:
``DPSequential(noise_multiplier=...)``).

Draws and clip APIs are matched by import-qualified name (vocabulary groups ``normal_draws`` and
``norm_clips``); the noise scale is decided by flow — the parameters the draw's standard
deviation is computed from, less those the clip bound is computed from — never by its name.
"""

from __future__ import annotations

from collections.abc import Iterable

from dpcheck.model import Evidence, Span
from dpcheck.pipelines.binding import Binding
from dpcheck.pipelines.handwritten_update import HandwrittenUpdate
from dpcheck.pipelines.index import ProjectIndex
from dpcheck.pipelines.questions import frozen
from dpcheck.pipelines.scope import Ctx
from dpcheck.pipelines.steps import mentions_norm
from dpcheck.pipelines.taint import read_names
from dpcheck.pipelines.vocabulary import calls_in
from dpcheck.sites.ir import IR
from dpcheck.sites.nodes import BinOp, Call, Node, Num, node


def std_factors(index: ProjectIndex, call: Call, statement: IR, ctx: Ctx) -> list[Node]:
    """The factors of the standard deviation of the Gaussian draw ``call`` in ``statement``
    (read at ``ctx``): its ``std=``/``scale=``/``stddev=`` keyword, the second argument of a draw
    of the ``normal_draws`` group, else the factors the draw is multiplied by in the statement
    (``sigma * C * randn(...)``); empty when none is found."""
    given = call.kwargs
    std = given.get("std", given.get("scale", given.get("stddev")))
    if std is None and calls_in("normal_draws", call, ctx, index):
        std = call.argument(1)
    if std is not None:
        return factors(std)
    for part in node(statement).walk():
        if isinstance(part, BinOp) and part.op == "*":
            found = factors(part)
            if call in found:
                return [f for f in found if f != call]
    return []


def factors(ir: Node) -> list[Node]:
    """The factors of a product ``a * b * c`` (a single factor for anything else)."""
    if isinstance(ir, BinOp) and ir.op == "*":
        return factors(ir.left) + factors(ir.right)
    return [ir]


def clip_threshold(index: ProjectIndex, call: IR, ctx: Ctx) -> Node | None:
    """C of ``clip_grad_norm_(ps, C)`` (a clip-by-norm API of the vocabulary group
    ``norm_clips``, by import-qualified name, read at ``ctx``), of ``min(1, C/norm)``,
    ``max(1, norm/C)`` and ``clamp(max=C)`` (a bound taken of a norm, whatever its name)."""
    call = node(call)
    if not isinstance(call, Call):
        return None
    if calls_in("norm_clips", call, ctx, index):
        return call.kwargs.get("max_norm", call.kwargs.get("clip_norm", call.argument(1)))
    for part in call.walk():
        if isinstance(part, BinOp) and part.op == "/":
            left_norm = mentions_norm(part.left)
            right_norm = mentions_norm(part.right)
            if left_norm and not right_norm:
                return part.right
            if right_norm and not left_norm:
                return part.left
    bound = call.kwargs.get("max")
    return None if bound is None or isinstance(bound, Num) and bound.value == 1 else bound


def hand_over(index: ProjectIndex, update: HandwrittenUpdate) -> list[Evidence]:
    """Where the pipeline's own calls hand the noise scale to the code that draws the noise
    (``DPSequential(noise_multiplier=...)`` in the script when the draw sits in a model
    class of a library): the keyword a caller in the reach (``index.reach``) passes for a
    parameter the draw's standard deviation is computed from that the clip bound is not,
    followed through local and ``self.`` assignments. Only for a draw outside the caller's
    file; none when nothing is found."""
    found: list[Evidence] = []
    bounds = {(b.ctx, b.name) for where, call in update.clip_calls
              if (threshold := clip_threshold(index, call, where)) is not None
              for b in _params(index, [threshold], where)}
    for ctx, draw, statement in update.noise_calls[:1]:
        draw = node(draw)
        std = std_factors(index, draw, statement, ctx) if isinstance(draw, Call) else []
        for param in _params(index, std, ctx):
            if (param.ctx, param.name) in bounds:
                continue
            for where, call in index.call_sites(param.ctx):
                line = call.keyword_lines.get(param.name)
                if line is not None and where.path != ctx.path \
                        and (where.path, where.scope) in index.reach:
                    found.append(Evidence("noise", Span(where.path, line), (
                        f"{param.name} handed to {call.name}(), which draws the "
                        f"noise at {ctx.path}:{ctx.line}")))
    return found


def _params(index: ProjectIndex, exprs: Iterable[IR], ctx: Ctx) -> list[Binding]:
    """The function parameters the expressions ``exprs`` (read at ``ctx``) are computed from,
    followed through plain assignments (each followed name a question of the index's memo and
    cycle guard, ``dpcheck.pipelines.questions``)."""
    found: list[Binding] = []
    for name in sorted({name for expr in exprs for name in read_names(expr)}):
        binding = index.attribute(name, ctx)
        if binding is not None and binding.kind == "param":
            found.append(binding)
        elif binding is not None and (assigned := binding.assigned()) is not None:
            value, where = assigned
            key = ("noise-scale", name, frozen(value), ctx, index.reach)
            found.extend(index.questions.ask(
                key, lambda: _params(index, [value], where), []))
    return found
