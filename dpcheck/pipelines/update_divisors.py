"""The divisions applied to the noisy (or clipped) sum of a hand-written update, found statement
by statement: a ``/`` or ``//`` whose dividend carries the noise, a product with a quotient
(``lr / n * noisy``), ``div``/``true_divide`` calls, a multiplication by a reciprocal
(``g.mul_(1.0 / lot)``), an augmented division, and a mean over the clipped per-example axis.
Each divisor is classified by ``DivisorClassifier`` where the division happens."""

from __future__ import annotations

from typing import Any

from dpcheck.model import Span
from dpcheck.pipelines.divisor import Dep, DivisorClassifier
from dpcheck.pipelines.handwritten_update import Divisor, HandwrittenUpdate, evidence_span
from dpcheck.pipelines.scope import Ctx
from dpcheck.pipelines.taint import arith_flow, noise_marker, touches
from dpcheck.sites.ir import IR, callee_name, tail_name, walk

MEAN_CALLS = frozenset({"mean", "reduce_mean"})
DIVIDE_CALLS = frozenset({"div", "div_", "true_divide"})
#: Multiplications by a reciprocal (``g.mul_(1.0 / lot)``) divide by the reciprocal's divisor.
RECIPROCAL_CALLS = frozenset({"mul", "mul_", "multiply"})


class UpdateDivisors:
    """Records the divisors of the noisy sum a statement applies (``statement``) and the means
    over clipped per-example values (``mean``) into a ``HandwrittenUpdate``."""

    def __init__(self, divisors: DivisorClassifier) -> None:
        self.divisors = divisors

    def statement(self, ctx: Ctx, stmt: dict[str, Any], noisy: set[str], clipped: set[str],
                  result: HandwrittenUpdate) -> None:
        """The divisions of a statement that applies the noisy sum."""
        tainted = noisy | clipped
        span = evidence_span(ctx, stmt)
        text = stmt.get("src", "")
        if stmt["k"] == "aug" and stmt.get("op") in ("/", "//"):
            self.add(ctx, stmt["e"], span, text, result, floor=stmt["op"] == "//")
        for node in walk(stmt["e"]):
            if node[0] == "b" and node[1] in ("/", "//"):
                dividend = set(arith_flow(node[2])) | noise_marker(node[2])
                if touches(dividend, tainted) or "<noise>" in dividend:
                    self.add(ctx, node[3], span, text, result, floor=node[1] == "//")
            elif node[0] == "b" and node[1] == "*":
                for factor, other in ((node[2], node[3]), (node[3], node[2])):
                    if factor[0] == "b" and factor[1] == "/" and (
                        touches(arith_flow(other), tainted) or noise_marker(other)
                    ) and not touches(arith_flow(factor[2]), tainted):
                        self.add(ctx, factor[3], span, text, result)
            elif node[0] == "call" and tail_name(callee_name(node)) in DIVIDE_CALLS:
                if node[2]:
                    self.add(ctx, node[2][-1], span, text, result)
            elif node[0] == "call" and tail_name(callee_name(node)) in RECIPROCAL_CALLS:
                for factor in node[2]:
                    if factor[0] == "b" and factor[1] == "/" and not touches(
                            arith_flow(factor[2]), tainted):
                        self.add(ctx, factor[3], span, text, result)
        self.mean(ctx, stmt, clipped, result)

    def mean(self, ctx: Ctx, stmt: dict[str, Any], clipped: set[str],
             result: HandwrittenUpdate) -> None:
        """A mean over clipped per-example values divides by the realized batch size."""
        for node in walk(stmt["e"]):
            if node[0] == "call" and tail_name(callee_name(node)) in MEAN_CALLS:
                base = set(arith_flow(node[1][1])) if node[1][0] == "a" else {
                    (callee_name(node) or "").rsplit(".", 1)[0]}
                inputs = base | set().union(*(arith_flow(a) for a in node[2]))
                if touches(inputs, clipped):
                    result.divisors.append(Divisor(
                        Dep(b=True), evidence_span(ctx, stmt, node),
                        "mean over the per-sample axis divides by the realized batch size"))

    def add(self, ctx: Ctx, divisor: IR, span: Span, text: str, result: HandwrittenUpdate,
            floor: bool = False) -> None:
        """Record ``divisor`` (read at ``ctx``) classified; ``floor`` for ``//``."""
        dep = self.divisors.classify(divisor, ctx)
        if floor and dep.n:
            dep = Dep(n=True, floor=True)
        result.divisors.append(Divisor(dep, span, text))
