"""Steps of a DP-SGD update that are not written as a known call: what the hand-written update
analysis (``handwritten``) asks beyond the names of the calls it sees.

* **Library privatizers** (``dp_libraries``): a call of a DP-library API that clips, computes
  per-example gradients or adds noise for the caller, matched by import-qualified name.
* **Noise from a project helper**: a call of a project function whose return value carries a
  Gaussian draw (``return t + torch.normal(...)``, directly or through the helpers it calls) is a
  noise draw where it is called: where the noise flows decides whether it is on gradients.
* **Clips written without a clip call**: a bound taken of a value computed from a norm
  (``factor = C / norm`` then ``torch.min(factor, 1)``: the norm is found by following the
  scope's assignments, not by the factor's name), a scaling under a test that compares a norm
  (``if norm > C: g = g / (norm / C)``), and a masked store bounding such a factor in place
  (``factor[factor > 1] = 1``).
* **Per-example gradient loops**: a loop that differentiates one element of a vector per
  iteration (``for i in range(n): loss[i].backward()``, ``for l in losses: l.backward()``), or
  indexes an element of a batch with its counter (``model(xb[i])`` where ``xb`` is a batch).
* **Backward hooks**: a function registered with ``register_backward_hook``,
  ``register_full_backward_hook`` or a tensor's ``register_hook`` receives gradients: its
  parameters are gradient values.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from dpcheck.pipelines.divisor import DivisorClassifier
from dpcheck.pipelines.dp_libraries import Privatizer, dp_libraries
from dpcheck.pipelines.index import ProjectIndex
from dpcheck.pipelines.questions import frozen
from dpcheck.pipelines.scope import Ctx
from dpcheck.pipelines.vocabulary import calls_in
from dpcheck.sites.nodes import (
    BinOp,
    Call,
    Compare,
    Name,
    Node,
    Num,
    Slice,
    Subscript,
    names_in,
    node,
)
from dpcheck.sites.views import Scope, Statement

#: Methods and functions that take a gradient of their receiver or first argument.
DIFFERENTIATE = frozenset({"backward", "grad", "gradient"})
#: Registrations of a function called with gradients during the backward pass.
HOOK_REGISTRATIONS = frozenset({"register_backward_hook", "register_full_backward_hook",
                                "register_hook"})
#: Square roots: of a sum of squares, a norm written out.
ROOTS = frozenset({"sqrt", "rsqrt"})
#: How many helpers deep a noise draw is followed through returns.
MAX_HELPER_DEPTH = 3


def is_noise_draw(call: Call, ctx: Ctx, index: ProjectIndex) -> bool:
    """A Gaussian draw (``torch.normal``, ``rng.normal``, ``g.normal_()``, ...): a call of the
    vocabulary group ``gaussian_draws`` read at ``ctx``, by import-qualified name (a project's
    own ``normal`` is project code)."""
    return calls_in("gaussian_draws", call, ctx, index)


def mentions_norm(expr: Node, normed: Iterable[str] = ()) -> bool:
    """Whether ``expr`` computes or reads a gradient norm: a norm call, the square root of a
    sum of squares written out (``sqrt(sum(g.pow(2)))``), a name for a norm (``grad_norm``, not
    a bound such as ``max_norm``), or a name ``normed`` holds (a value the scope computed from
    a norm)."""
    held = set(normed)
    return any(_norm_part(part, held) for part in expr.walk())


def _norm_part(part: Node, normed: set[str]) -> bool:
    if isinstance(part, Call):
        return "norm" in part.method.lower() or (
            part.method in ROOTS and any(_square(inner) for inner in part.walk()))
    return isinstance(part, Name) and (part.dotted in normed or _norm_name(part.dotted))


def derives_norm(expr: Node, normed: Iterable[str]) -> bool:
    """Whether a value computed by ``expr`` is a norm or its square, or is computed from one:
    its assignment target joins the names a scope computed from a norm (a sum of squares
    accumulated over parameters, then its square root, is a norm written out)."""
    held = set(normed)
    return any(_square(part) or _norm_part(part, held) for part in expr.walk())


def _square(expr: Node) -> bool:
    """``x ** 2``, ``x.pow(2)``, ``square(x)`` or ``x * x``."""
    if isinstance(expr, BinOp):
        return (expr.op == "**" and isinstance(expr.right, Num) and expr.right.value == 2) \
            or (expr.op == "*" and expr.left == expr.right)
    if isinstance(expr, Call):
        return expr.method == "square" or (
            expr.method == "pow" and any(isinstance(a, Num) and a.value == 2 for a in expr.args))
    return False


def _norm_name(name: str) -> bool:
    lowered = name.lower()
    return "norm" in lowered and not any(w in lowered for w in ("clip", "max_", "bound"))


def is_clip_call(call: Node, ctx: Ctx, index: ProjectIndex, normed: Iterable[str] = ()) -> bool:
    """Clipping, read at ``ctx``: a clip-by-norm API (vocabulary group ``norm_clips``), or a
    bound (group ``bounds``: ``min(1, C/norm)``, ``clamp``) over a norm or over a value computed
    from one (``normed``: names the scope assigned from a norm); both by import-qualified name,
    so ``clip_grad_norm_`` imported under another name clips and a project's ``clip`` does not."""
    return isinstance(call, Call) and (calls_in("norm_clips", call, ctx, index) or (
        calls_in("bounds", call, ctx, index) and mentions_norm(call, normed)))


def scope_clips(scope: Scope, ctx: Ctx, index: ProjectIndex) -> bool:
    """Whether the scope ``ctx`` clips: a clip call, or a clip written as a scaling under a norm
    test or a masked bound (norm-derived names followed through the scope's assignments)."""
    normed: set[str] = set()
    for stmt in scope.statements:
        where = Ctx(ctx.path, ctx.scope, stmt.line)
        if any(is_clip_call(part, where, index, normed) for part in stmt.expr.walk()) \
                or conditional_clip(stmt, scope, normed) or masked_bound(stmt, normed):
            return True
        if derives_norm(stmt.expr, normed):
            normed.update(_bound(stmt.target))
    return False


def conditional_clip(stmt: Statement, scope: Scope, normed: Iterable[str]) -> bool:
    """A scaling applied only when a norm exceeds a bound: the statement divides or multiplies
    by an expression built from a norm, inside an ``if`` whose test compares a norm."""
    held = set(normed)
    if not stmt.arms or not _scales_by_norm(stmt, held):
        return False
    for line, arm in stmt.arms:
        test = scope.if_test(line)
        if arm == 0 and isinstance(test, Compare) and mentions_norm(test, held):
            return True
    return False


def _scales_by_norm(stmt: Statement, normed: set[str]) -> bool:
    if stmt.kind == "aug" and stmt.op in ("/", "*"):
        return mentions_norm(stmt.expr, normed)
    for part in stmt.expr.walk():
        if isinstance(part, Call) and part.method in ("div", "div_", "mul", "mul_") \
                and any(mentions_norm(arg, normed) for arg in part.args):
            return True
        if isinstance(part, BinOp) and part.op in ("/", "*") \
                and mentions_norm(part.right if part.op == "/" else part, normed):
            return True
    return False


def masked_bound(stmt: Statement, normed: Iterable[str]) -> bool:
    """``factor[mask] = 1``: one stored into part of a value computed from a norm, the masked
    form of ``factor.clamp(max=1)`` (a scale factor bounded at one; another constant bounds a
    statistic, such as ``excess[excess < 0] = 0``, not a factor)."""
    target = stmt.target
    return stmt.kind == "assign" and isinstance(target, str) and target.endswith("[]") \
        and target[:-2] in set(normed) and isinstance(stmt.expr, Num) and stmt.expr.value == 1


class StepFinder:
    """Answers the questions of the module docstring for one index (memoised per function)."""

    def __init__(self, index: ProjectIndex, divisors: DivisorClassifier) -> None:
        self.index = index
        self.divisors = divisors
        self.table = dp_libraries()
        self._noisy_returns: dict[Ctx, bool] = {}
        self._hooks: frozenset[Ctx] | None = None
        self._dp_imports: dict[str, bool] = {}
        self._dp_parts: dict[str, frozenset[str]] = {}

    def dp_imports(self, path: str) -> bool:
        """Whether the file ``path`` imports a DP library as a library (an import that names a
        project module does not count, unless that module is a DP library bundled in the
        project: the library's own repository, imported by its examples), or a general library
        with a DP-only part (``import optax``: ``dp_parts``)."""
        return self._library_imports(path) or bool(self.dp_parts(path))

    def _library_imports(self, path: str) -> bool:
        if path not in self._dp_imports:
            summary = self.index.summary(path)
            self._dp_imports[path] = summary is not None and any(
                self.table.library_of(target) is not None
                and self.index.imports_library(path, target)
                for target in summary.imports.values() if not target.startswith("."))
        return self._dp_imports[path]

    def dp_parts(self, path: str) -> frozenset[str]:
        """The DP-only parts of general libraries (``optax.contrib.dpsgd``) below a module the
        file ``path`` imports as a library."""
        if path not in self._dp_parts:
            summary = self.index.summary(path)
            self._dp_parts[path] = frozenset(
                part for target in (summary.imports.values() if summary is not None else ())
                if not target.startswith(".") and self.index.module_path(path, target) is None
                for part in self.table.parts_below(target))
        return self._dp_parts[path]

    def _reached(self, qualified: str | None, path: str) -> bool:
        """Whether a call of ``qualified`` in ``path`` is a call into a DP library the file
        imports: a DP library when the file imports one, a DP-only part of a general library
        when the file imports the library."""
        module = self.table.module_of(qualified)
        return module is not None and (self._library_imports(path)
                                       or module in self.dp_parts(path))

    def privatizer(self, call: Call, ctx: Ctx) -> Privatizer | None:
        """The library privatizer ``call`` calls, by the callee's import-qualified name
        (``C()`` when the callee is what a call of ``C`` returned: an instance, a function),
        also through a combinator's method (``opt.update`` after ``opt = optax.chain(dp,
        adamw)`` runs ``dp.update``)."""
        name = call.name
        if not name or name.startswith("?."):
            return None
        qualified = self.index.library_name(name, ctx)
        found = self.table.privatizer(qualified)
        if found is not None or qualified is None:
            return found if self._reached(qualified, ctx.path) else None
        made, _, method = qualified.rpartition(".")
        if self.table.combinators.get(made) != method or call.receiver is None:
            return None
        return self._combined(call.receiver, method, ctx)

    def _combined(self, combined: Node, method: str, ctx: Ctx) -> Privatizer | None:
        """The privatizer among the objects a combinator call was given (``combined`` names
        it, read at ``ctx``), whose ``method`` the combinator's ``method`` runs. A combinator
        given to a combinator is followed as a question of the index's memo and cycle guard
        (``dpcheck.pipelines.questions``)."""
        made = combined
        where = ctx
        if isinstance(combined, Name):
            assigned = self.index.assigned(combined.dotted, ctx)
            if assigned is None:
                return None
            value, where = assigned
            made = node(value)
        if not isinstance(made, Call):
            return None
        for part in made.args:
            part = node(part)
            named: str | None = None
            if isinstance(part, Name):
                named = self.index.library_name(f"{part.dotted}.{method}", where)
            elif isinstance(part, Call) and part.name and not part.name.startswith("?."):
                callee = self.index.library_name(part.name, where)
                named = f"{callee}.{method}" if callee is not None else None
            found = self.table.privatizer(named) if self._reached(named, where.path) else None
            inner, _, _ = named.rpartition(".") if named is not None else ("", "", "")
            if found is None and self.table.combinators.get(inner) == method:
                key = ("combined", frozen(part), method, where, self.index.reach)
                found = self.index.questions.ask(
                    key, lambda: self._combined(part, method, where), None)
            if found is not None:
                return found
        return None

    def library(self, call: Call, ctx: Ctx) -> str | None:
        """The import-qualified name ``call`` calls when it is in a DP library the file
        imports (``_reached``), else None."""
        name = call.name
        if not name or name.startswith("?."):
            return None
        qualified = self.index.library_name(name, ctx)
        return qualified if self._reached(qualified, ctx.path) else None

    def returns_noise(self, function: Ctx, depth: int = 0) -> bool:
        """Whether a return of the project function ``function`` carries a Gaussian draw
        (through arithmetic, or through another such helper): the returned expression holds
        one, or names a local assigned (before it) from one."""
        if depth > MAX_HELPER_DEPTH:
            return False
        if function not in self._noisy_returns:
            self._noisy_returns[function] = False
            self._noisy_returns[function] = self._noisy_function(function, depth)
        return self._noisy_returns[function]

    def _noisy_function(self, function: Ctx, depth: int) -> bool:
        scope = self.index.scope(function)
        if scope is None:
            return False
        noisy: set[str] = set()
        for stmt in scope.statements:
            where = Ctx(function.path, function.scope, stmt.line)
            draws = any(isinstance(c, Call) and (is_noise_draw(c, where, self.index)
                                                 or self._helper_draws(c, where, depth))
                        for c in stmt.expr.walk())
            flows = draws or bool(set(names_in(stmt.expr)) & noisy)
            if stmt.kind == "return" and flows:
                return True
            if flows and stmt.kind in ("assign", "aug"):
                noisy.update(_bound(stmt.target))
        return False

    def _helper_draws(self, call: Call, where: Ctx, depth: int) -> bool:
        name = call.name
        target = self.index.function(name, where) if name and not name.startswith("?.") \
            else None
        return target is not None and self.returns_noise(target, depth + 1)

    def hook_functions(self) -> frozenset[Ctx]:
        """The project functions registered as backward hooks (found once per index)."""
        if self._hooks is None:
            found: set[Ctx] = set()
            for method in sorted(HOOK_REGISTRATIONS):
                for where, call in self.index.calls_named(method):
                    for arg in call.args[:1]:
                        if isinstance(arg, Name):
                            found.update(self.index.functions(arg.dotted, where))
            self._hooks = frozenset(found)
        return self._hooks

    def hook_gradients(self, ctx: Ctx) -> set[str]:
        """The parameters of ``ctx`` that hold gradients: all of a backward hook's."""
        if Ctx(ctx.path, ctx.scope) not in self.hook_functions():
            return set()
        scope = self.index.scope(ctx)
        return {param.name for param in scope.params} - {"self"} if scope else set()

    def element_loop(self, ctx: Ctx, stmts: list[Statement], header: int) -> bool:
        """Whether the loop at ``header`` takes one gradient per element: the body
        differentiates the loop's element or an item indexed by its counter, or indexes an
        element of a batch with its counter."""
        loop = stmts[header]
        targets = set(_bound(loop.target))
        if not targets:
            return False
        indexed = False
        for stmt in _body(stmts, header):
            where = Ctx(ctx.path, ctx.scope, stmt.line)
            for part in stmt.expr.walk():
                if isinstance(part, Call) and part.method in DIFFERENTIATE \
                        and _selects(_differentiated(part), targets):
                    return True
                if isinstance(part, Subscript) and _selects(part, targets) \
                        and self._batch_item(part, where):
                    indexed = True
            if indexed and any(isinstance(c, Call) and c.method in DIFFERENTIATE
                               for c in stmt.expr.walk()):
                return True
        return False

    @staticmethod
    def selects_by_counter(stmts: list[Statement], header: int) -> bool:
        """Whether the body of the loop at ``header`` indexes something with the loop's
        counter (``xb[i]``, ``losses[i]``, ``x[i:i + 1]``): a loop whose counter selects
        nothing repeats one computation, it does not visit examples."""
        targets = set(_bound(stmts[header].target))
        return bool(targets) and any(
            isinstance(part, Subscript) and _selects(part, targets)
            for stmt in _body(stmts, header) for part in stmt.expr.walk())

    def _batch_item(self, item: Subscript, ctx: Ctx) -> bool:
        return self.divisors.origin(item.value, ctx).is_data


def _bound(target: object) -> Iterator[str]:
    """The names a statement target binds (``x[]`` as ``x``)."""
    if isinstance(target, str):
        yield target.removesuffix("[]")
    elif isinstance(target, list):
        for item in target:
            yield from _bound(item)


def _body(stmts: list[Statement], header: int) -> Iterator[Statement]:
    """The statements inside the loop whose header is at index ``header``."""
    for position in range(header + 1, len(stmts)):
        stmt = stmts[position]
        enclosing = stmt.loop
        while enclosing > header:
            enclosing = stmts[enclosing].loop
        if enclosing != header:
            return
        yield stmt


def _differentiated(call: Call) -> Node | None:
    """What a gradient call differentiates: the receiver of ``.backward()``, the first
    argument of ``grad``/``gradient``."""
    if call.method == "backward":
        return call.receiver
    return call.argument(0)


def _selects(expr: Node | None, targets: set[str]) -> bool:
    """``expr`` is a loop element itself or an item indexed by the loop counter."""
    if isinstance(expr, Name):
        return expr.dotted in targets
    if isinstance(expr, Subscript):
        return any(isinstance(part, Name) and part.dotted in targets
                   for part in _key_parts(expr.index))
    return False


def _key_parts(key: Node) -> Iterator[Node]:
    """The expressions of a subscript key, a slice's bounds included (``x[i:i + 1]`` selects
    item ``i``)."""
    for part in key.walk():
        yield part
        if isinstance(part, Slice) and part.bounded:
            for bound in (part.lower, part.upper):
                if bound is not None:
                    yield from bound.walk()
