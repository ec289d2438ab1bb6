"""The divisions applied to the noisy (or clipped) sum of a hand-written update, found statement
by statement: a ``/`` or ``//`` whose dividend carries the noise, a product with a quotient
(``lr / n * noisy``), ``div``/``true_divide`` calls, a multiplication by a reciprocal
(``g.mul_(1.0 / lot)``), an augmented division, and a mean over the clipped per-example axis
(the division, product and mean calls: the vocabularies ``divisions``, ``products``, ``means``).
Each divisor is classified by ``DivisorClassifier`` where the division happens."""

from __future__ import annotations

from typing import TypeGuard

from dpcheck.model import Span
from dpcheck.pipelines.divisor import Dep, DivisorClassifier
from dpcheck.pipelines.handwritten_update import Divisor, HandwrittenUpdate, evidence_span
from dpcheck.pipelines.scope import Ctx
from dpcheck.pipelines.taint import arith_flow, noise_marker, touches
from dpcheck.pipelines.vocabulary import vocabulary
from dpcheck.sites.ir import IR
from dpcheck.sites.nodes import Attr, BinOp, Call, Name, Node
from dpcheck.sites.views import Statement


class UpdateDivisors:
    """Records the divisors of the noisy sum a statement applies (``statement``) and the means
    over clipped per-example values (``mean``) into a ``HandwrittenUpdate``."""

    def __init__(self, divisors: DivisorClassifier) -> None:
        self.divisors = divisors

    def statement(self, ctx: Ctx, stmt: Statement, noisy: set[str], clipped: set[str],
                  result: HandwrittenUpdate) -> None:
        """The divisions of a statement that applies the noisy sum."""
        tainted = noisy | clipped
        span = evidence_span(ctx, stmt)
        text = stmt.source or ""
        index = self.divisors.index
        if stmt.kind == "aug" and stmt.op in ("/", "//"):
            self.add(ctx, stmt.expr, span, text, result, floor=stmt.op == "//")
        for part in stmt.expr.walk():
            if isinstance(part, BinOp) and part.op in ("/", "//"):
                dividend = set(arith_flow(part.left)) | noise_marker(part.left, ctx, index)
                if touches(dividend, tainted) or "<noise>" in dividend:
                    self.add(ctx, part.right, span, text, result, floor=part.op == "//")
            elif isinstance(part, BinOp) and part.op == "*":
                for factor, other in ((part.left, part.right), (part.right, part.left)):
                    if _quotient(factor) and (
                        touches(arith_flow(other), tainted) or noise_marker(other, ctx, index)
                    ) and not touches(arith_flow(factor.left), tainted):
                        self.add(ctx, factor.right, span, text, result)
            elif isinstance(part, Call) and part.method in vocabulary()["divisions"].methods:
                if part.args:
                    self.add(ctx, part.args[-1], span, text, result)
            elif isinstance(part, Call) and part.method in vocabulary()["products"].methods:
                for factor in part.args:
                    if _quotient(factor) and not touches(arith_flow(factor.left), tainted):
                        self.add(ctx, factor.right, span, text, result)
        self.mean(ctx, stmt, clipped, result)

    def mean(self, ctx: Ctx, stmt: Statement, clipped: set[str],
             result: HandwrittenUpdate) -> None:
        """A mean over clipped per-example values divides by the realized batch size."""
        for part in stmt.expr.walk():
            if isinstance(part, Call) and part.method in vocabulary()["means"].methods:
                callee = part.callee
                # What the method is called on (``x`` of ``x.mean()``); a plain function name
                # (``mean(x)``) stands for itself.
                base = set(arith_flow(callee.base)) if isinstance(callee, Attr) else {
                    callee.base or callee.dotted if isinstance(callee, Name) else ""}
                inputs = base | set().union(*(arith_flow(a) for a in part.args))
                if touches(inputs, clipped):
                    result.divisors.append(Divisor(
                        Dep(b=True), evidence_span(ctx, stmt, part),
                        "mean over the per-sample axis divides by the realized batch size"))

    def add(self, ctx: Ctx, divisor: IR, span: Span, text: str, result: HandwrittenUpdate,
            floor: bool = False) -> None:
        """Record ``divisor`` (read at ``ctx``) classified; ``floor`` for ``//``."""
        dep = self.divisors.classify(divisor, ctx)
        if floor and dep.n:
            dep = Dep(n=True, floor=True)
        result.divisors.append(Divisor(dep, span, text))


def _quotient(expr: Node) -> TypeGuard[BinOp]:
    """Whether ``expr`` is a true division ``a / b``."""
    return isinstance(expr, BinOp) and expr.op == "/"
