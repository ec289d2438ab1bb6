"""Which loops make one pass over the training data, and which loops repeat such a pass.

An epoch is one pass over the data, decided by the structure of the loops, never by their
names: a loop makes a pass when it iterates a loader (the provenance analysis' ``LOADER``
origin: a data loader, Opacus' private loader, a project function returning one) or counts
``range(M)`` steps where M is the length of a loader or a quotient (``N // B``, ``int(1 / q)``,
``len(data) / batch``, a name bound to one: the batches of one pass), or slices the data
``range(0, n, B)``; a training call told to run the batches of one pass (``steps=N // B``)
makes one too. A loop repeats passes
when its body holds a pass, directly or through the project functions of the pipeline's reach
that it calls; its trip count is the number of epochs. A loop named ``epoch`` around single
steps repeats no pass, and a loop over ``range(E)`` around a pass is an epoch loop whatever its
names. A loop over the batch source the sampling analysis found for the pipeline (a tf.data
``.batch()`` chain, reached through names or a project function's return) makes a pass too.
A loader that serves a sample of the data makes none: one batch made from an index set, or
the batches of a lot drawn afresh inside a loop (a pass over the lot, not over the data).
A step count written E / q, or E * N / B where the sampling rate q is written B / N,
holds E passes: 1/q steps at rate q draw N examples in expectation.
"""

from __future__ import annotations

from collections.abc import Callable

from dpcheck.pipelines.index import ProjectIndex
from dpcheck.pipelines.provenance import Origin, Provenance
from dpcheck.pipelines.questions import frozen
from dpcheck.pipelines.sampling.decision import loader_dataset
from dpcheck.pipelines.sampling.loops import LOOP_WRAPPERS, body
from dpcheck.pipelines.scope import Ctx
from dpcheck.pipelines.single_batch import whole_batch
from dpcheck.sites.nodes import BinOp, Call, Comp, Const, Name, Node, Num, Str, node
from dpcheck.sites.views import Statement

#: Conversions of a step count that keep it the same count (``int(N / B)``, ``math.ceil``).
COUNT_CASTS = frozenset({"int", "round", "ceil", "floor"})


class DataPasses:
    """Decides which loops of a pipeline's reach make or repeat a pass over the data."""

    def __init__(self, index: ProjectIndex, reach: frozenset[tuple[str, str]],
                 loader: tuple[Ctx, Node] | None = None) -> None:
        self.index = index
        self.reach = reach
        #: The batch source the sampling analysis found for the pipeline (a tf.data
        #: ``.batch()`` chain, a loader call), where it is made.
        self.loader = loader
        self.provenance = Provenance(index)
        if loader is not None:
            made_at, made_by = loader
            self._key: tuple[object, ...] = (reach, made_at, frozen(made_by), index.reach)
        else:
            self._key = (reach, None, index.reach)

    def _ask(self, kind: str, expr: Node, ctx: Ctx, answer: Callable[[], bool]) -> bool:
        """The answer to the question ``kind`` about the name or call ``expr`` read at ``ctx``,
        asked of the memo and cycle guard (``dpcheck.pipelines.questions``): False when the
        question is met again while it is being answered."""
        return self.index.questions.ask((kind, frozen(expr), ctx, self._key), answer, False)

    def repeats_pass(self, ctx: Ctx, stmts: list[Statement], loop: int) -> bool:
        """Whether the body of the loop ``stmts[loop]`` (of the scope ``ctx``) makes a pass over
        the data, in its own statements or in a project function it calls."""
        return any(self._holds(ctx, stmt) for stmt in body(stmts, loop))

    def _holds(self, ctx: Ctx, stmt: Statement) -> bool:
        where = Ctx(ctx.path, ctx.scope, stmt.line)
        if stmt.kind == "for" and self.is_pass(where, stmt):
            return True
        for call in stmt.expr.walk():
            if not isinstance(call, Call) or not call.name:
                continue
            steps = call.kwargs.get("steps")
            if steps is not None and self._batches_of_a_pass(steps, where):
                return True  # a training call told to run the batches of one pass
            target = self.index.function(call.name, where)
            if target is not None and (target.path, target.scope) in self.reach \
                    and self._function_holds(target):
                return True
        return False

    def _function_holds(self, target: Ctx) -> bool:
        """Whether a project function makes a pass over the data: a question of the memo and
        cycle guard (``dpcheck.pipelines.questions``), so a cycle of calls adds nothing."""
        def holds() -> bool:
            scope = self.index.scope(target)
            return scope is not None and any(
                self._holds(target, stmt) for stmt in scope.statements
                if self.index.runs(target, stmt))

        return self.index.questions.ask(("holds-pass", target, self._key), holds, False)

    def is_pass(self, where: Ctx, loop: Statement) -> bool:
        """Whether the ``for`` loop ``loop`` (read at ``where``) makes one pass over the data."""
        return self._passes(node(loop.expr), where)

    def _passes(self, iterable: Node, ctx: Ctx) -> bool:
        """Whether iterating ``iterable`` visits the data once: a loader, or the pipeline's
        batch source, that does not serve a sample of the data (``_serves_a_sample``), slices ``range(0, n, B)``, ``range(M)`` batches of a
        pass, the M index sets a comprehension over ``range(M)`` draws at once (a random
        allocation of the examples to batches), seen through the calls that wrap an iterable
        (``enumerate``, ``tqdm``) and the names it is kept in."""
        while isinstance(iterable, Call) and iterable.name in LOOP_WRAPPERS and iterable.args:
            [iterable, *_] = iterable.args
        if self.provenance.origin(iterable, ctx) == Origin.LOADER \
                or self._made_from_loader(iterable, ctx):
            return not self._serves_a_sample(iterable, ctx)
        if isinstance(iterable, Call) and iterable.name == "range" and iterable.args:
            return len(iterable.args) == 3 or self._batches_of_a_pass(iterable.args[-1], ctx)
        if isinstance(iterable, Comp) and len(iterable.iterables) == 1 \
                and self.provenance.is_sample_index(iterable.element, ctx):
            [source] = iterable.iterables
            return isinstance(source, Call) and source.name == "range"
        if isinstance(iterable, Name):
            assigned = self.index.assigned(iterable.dotted, ctx)
            if assigned is not None:
                value, where = assigned
                return self._ask("passes", iterable, ctx, lambda: self._passes(node(value), where))
        return False

    def _made_from_loader(self, expr: Node, ctx: Ctx) -> bool:
        """Whether ``expr`` holds the pipeline's batch source: it is, or contains, the loader
        expression, followed through plain assignments, the receivers of library methods and
        the returns of project functions (``batches = make_batches(x, y)`` returning
        ``...shuffle(n).batch(B)``)."""
        if self.loader is None:
            return False
        made_at, made = self.loader
        if ctx.path == made_at.path and any(part == made for part in node(expr).walk()):
            return True
        if isinstance(expr, Name):
            assigned = self.index.assigned(expr.dotted, ctx)
            if assigned is None:
                return False
            value, where = assigned
            return self._ask("made-from-loader", expr, ctx,
                             lambda: self._made_from_loader(node(value), where))
        if not isinstance(expr, Call):
            return False
        target = self.index.function(expr.name or "", ctx)
        if target is None:
            # a method of the batch source keeps its batches (``dataset.take(-1)``)
            return expr.receiver is not None \
                and self._made_from_loader(expr.receiver, ctx)
        return self._ask("returns-loader", expr, ctx, lambda: any(
            self._made_from_loader(node(value), where) for value, where in self.index.returns(target)))

    def _serves_a_sample(self, loader: Node, ctx: Ctx) -> bool:
        """Whether a loader serves a sample of the data, so that iterating it is no pass over
        the data: one batch made from an index set (``single_batch``), or the batches of a
        dataset built, inside a loop, from a part of the data a fresh random selection keeps
        (``DataLoader(TensorDataset(x[idx], y[idx]))`` with ``idx`` drawn each iteration: a pass
        over that lot)."""
        made, ctx = self._value(loader, ctx)
        if not isinstance(made, Call):
            return False
        served = whole_batch(self.index, made, ctx)
        if served is not None and served.indices is not None:
            return True
        dataset = loader_dataset(made)
        if dataset is None or not self._in_a_loop(ctx):
            return False
        data, at = self._value(dataset, ctx)
        parts = [data, *data.args] if isinstance(data, Call) else [data]
        return any(self.provenance.origin(part, at) == Origin.BATCH for part in parts)

    def _value(self, expr: Node, ctx: Ctx) -> tuple[Node, Ctx]:
        """The value a name holds by a plain assignment and where it is made, else ``expr``."""
        expr = node(expr)
        binding = self.index.attribute(expr.dotted, ctx) if isinstance(expr, Name) else None
        assigned = binding.assigned() if binding is not None else None
        if assigned is None:
            return expr, ctx
        value, where = assigned
        return node(value), where

    def _in_a_loop(self, ctx: Ctx) -> bool:
        """Whether the statement at ``ctx`` runs inside a loop of its scope."""
        scope = self.index.scope(ctx)
        return scope is not None and any(stmt.line == ctx.line and stmt.loop >= 0
                                         for stmt in scope.statements)

    def _batches_of_a_pass(self, count: Node, ctx: Ctx) -> bool:
        """Whether a step count is the number of batches of one pass: a quotient, the length of
        a loader, followed through casts and plain assignments."""
        count, ctx = self._written(count, ctx)
        if _quotient(count):
            return True
        if isinstance(count, Call) and count.name == "len" and len(count.args) == 1:
            [argument] = count.args
            return self.provenance.origin(argument, ctx) == Origin.LOADER
        return False

    def passes_in_steps(self, steps: tuple[Ctx, Node],
                        rate: tuple[Ctx, Node]) -> tuple[Ctx, Node] | None:
        """E and where to read it, when a step count ``steps`` is written E / q
        (``int(EPOCHS / RATE)``), or E * N / B and q is written B / N, where q is the rate
        ``rate`` the sampling keeps each example with: 1/q steps of rate q draw N examples in
        expectation, one pass, so E counts the passes (epochs). None for any other count."""
        steps_ctx, steps_expr = steps
        count, where = self._written(steps_expr, steps_ctx)
        if not _quotient(count):
            return None
        numerator, denominator = count.left, count.right
        rate_ctx, rate_expr = rate
        if self._same(denominator, where, rate_expr, rate_ctx):
            return where, numerator
        fraction, at = self._written(rate_expr, rate_ctx)
        product, product_at = self._written(numerator, where)
        if not (_quotient(fraction) and fraction.op == "/" and isinstance(product, BinOp)
                and product.tag == "b" and product.op == "*"
                and self._same(denominator, where, fraction.left, at)):
            return None
        for factor, other in ((product.left, product.right), (product.right, product.left)):
            if self._same(factor, product_at, fraction.right, at):
                return product_at, other
        return None

    def _same(self, first: Node, first_ctx: Ctx, second: Node, second_ctx: Ctx) -> bool:
        """Whether two expressions are written the same once followed through plain
        assignments and casts, each name they read bound at the same place. A name bound to a
        literal is not replaced by it: two constants of equal value (a rate and a learning
        rate) are not the same quantity."""
        one, one_ctx = self._written(first, first_ctx, into_literals=False)
        two, two_ctx = self._written(second, second_ctx, into_literals=False)
        if one != two:
            return False
        return all(self._place(a.dotted, one_ctx) == self._place(b.dotted, two_ctx)
                   for a, b in zip(one.walk(), two.walk())
                   if isinstance(a, Name) and isinstance(b, Name))

    def _place(self, name: str, ctx: Ctx) -> tuple[str, str, int, str] | None:
        """Where ``name`` read at ``ctx`` is bound (None: not bound in the project)."""
        binding = self.index.attribute(name, ctx)
        return None if binding is None else (binding.ctx.path, binding.ctx.scope, binding.line,
                                             binding.kind)

    def _written(self, expr: Node, ctx: Ctx, into_literals: bool = True) -> tuple[Node, Ctx]:
        """What ``expr`` is written as, and where: followed through casts that keep a count
        (``int(...)``, ``math.ceil(...)``) and plain assignments (with ``into_literals``
        False, not into one that assigns a literal)."""
        expr = node(expr)
        if isinstance(expr, Call) and len(expr.args) == 1 and expr.method in COUNT_CASTS:
            [argument] = expr.args
            return self._written(argument, ctx, into_literals)
        if isinstance(expr, Name):
            assigned = self.index.assigned(expr.dotted, ctx)
            if assigned is not None:
                value, where = assigned
                if into_literals or not isinstance(node(value), (Num, Str, Const)):
                    key = ("written", frozen(expr), ctx, into_literals, self.index.reach)
                    found = self.index.questions.ask(
                        key, lambda: self._written(value, where, into_literals), None)
                    return found if found is not None else (expr, ctx)
        return expr, ctx


def _quotient(expr: Node) -> bool:
    """Whether ``expr`` is a division (``/`` or ``//``)."""
    return isinstance(expr, BinOp) and expr.tag == "b" and expr.op in ("/", "//")
