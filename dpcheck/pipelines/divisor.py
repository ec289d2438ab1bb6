"""Does a divisor depend on the private data? The rule that decides the update mechanism.

A divisor is classified by what it is built from, as the provenance analysis
(``dpcheck.pipelines.provenance``) decides the origin of the values it sizes
(docs/theory.md#update-rules):

* the size of a **batch** (``len(xb)``, ``x.shape[0]``, ``y.size(0)``, the count of a sampling
  mask ``mask.sum()``, a mean over the per-sample axis, the length of a list appended to once per
  sampled example) -> ``realized`` (ASGM under Poisson sampling);
* the size of the **dataset** in a numerator (``len(dataset) * q``, ``n * sample_rate``) ->
  ``expected`` (EASGM), and with ``int``/``floor``/``//`` on top -> ``floor-expected`` (FEASGM).
  The dataset size in a *denominator* builds a sample rate, which the privacy game holds fixed;
  the length of a loader (rounds per epoch) is likewise a fixed hyper-parameter;
* the size of **data whose kind is undecided** (a dataset for some callers, a batch for others)
  -> ``data-size``: normalized by a data-dependent size either way (ASGM or EASGM);
* only literals and hyper-parameters with literal defaults -> ``constant`` (SGM post-processing);
* anything not resolvable -> ``unknown`` with the reason; never a guess.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from dpcheck.pipelines.binding import Binding
from dpcheck.pipelines.index import ProjectIndex
from dpcheck.pipelines.provenance import Origin, Provenance
from dpcheck.pipelines.questions import frozen
from dpcheck.pipelines.scope import Ctx
from dpcheck.pipelines.values import Evaluator
from dpcheck.pipelines.vocabulary import calls_in
from dpcheck.sites.ir import IR
from dpcheck.sites.nodes import (
    Attr,
    BinOp,
    Call,
    Name,
    Node,
    Num,
    Seq,
    Subscript,
    UnaryOp,
    node,
)

#: Divisor kinds (``Dep.kind``) that normalize by a data-dependent size.
DATA_DEPENDENT = ("realized", "expected", "floor-expected", "data-size")


@dataclass(frozen=True)
class Dep:
    """What an expression depends on: the dataset size N (numerator), the realized batch B, a
    data size of undecided kind D."""

    n: bool = False
    b: bool = False
    floor: bool = False
    unknown: str | None = None
    d: bool = False

    def __or__(self, other: Dep) -> Dep:
        return Dep(self.n or other.n, self.b or other.b, False, self.unknown or other.unknown,
                   self.d or other.d)

    @property
    def kind(self) -> str:
        """``realized``, ``expected``, ``floor-expected``, ``data-size``, ``constant`` or
        ``unknown``."""
        if self.unknown is not None or (self.n and self.b):
            return "unknown"
        if self.d:
            return "data-size"
        if self.b:
            return "realized"
        if self.n:
            return "floor-expected" if self.floor else "expected"
        return "constant"


def _unknown(reason: str) -> Dep:
    return Dep(unknown=reason)


class DivisorClassifier:
    """Classifies divisor expressions by the origin of the values they size."""

    def __init__(self, index: ProjectIndex) -> None:
        self.index = index
        self.provenance = Provenance(index)

    def origin(self, ir: IR, ctx: Ctx) -> Origin:
        """The origin of a value (``Provenance.origin``)."""
        return self.provenance.origin(node(ir), ctx)

    def classify(self, ir: IR, ctx: Ctx) -> Dep:
        """The data dependence of a divisor expression. A name or subscript (bindings followed)
        is a question of the memo and cycle guard (``dpcheck.pipelines.questions``)."""
        expr = node(ir)
        if isinstance(expr, Num):
            return Dep()
        if isinstance(expr, (Name, Subscript)):
            return self.index.questions.ask(("dependence", frozen(expr), ctx, self.index.reach),
                                            lambda: self._name(expr, ctx), _unknown(
                f"{expr.dotted if isinstance(expr, Name) else 'a subscript'} depends on itself "
                "through a cycle of bindings"))
        if isinstance(expr, UnaryOp):
            return self.classify(expr.operand, ctx)
        if isinstance(expr, BinOp) and expr.tag == "b":
            left = self.classify(expr.left, ctx)
            right = self.classify(expr.right, ctx)
            if expr.op in ("/", "//"):
                right = replace(right, n=False)
            combined = left | right
            return replace(combined, floor=combined.n) if expr.op == "//" else combined
        if isinstance(expr, Call):
            return self._call(expr, ctx)
        if isinstance(expr, Attr) and expr.attr == "shape":
            return _unknown("shape without index")
        if isinstance(expr, Attr) and isinstance(expr.base, Call):
            option = self.index.parsed_option(expr.base, ctx, expr.attr)
            if option is not None and option.ir is not None:
                return self.classify(option.ir, replace(option.ctx, line=option.line))
        return _unknown(f"cannot follow expression of kind {expr.tag!r}")

    def _size_of(self, expr: Node, ctx: Ctx, what: str) -> Dep:
        origin = self.origin(expr, ctx)
        if origin == Origin.BATCH:
            return Dep(b=True)
        if origin == Origin.DATASET:
            return Dep(n=True)
        if origin == Origin.DATA:
            return Dep(d=True)
        if origin == Origin.LOADER:
            return Dep()
        return _unknown(f"{what} of a value whose origin (batch or dataset) is unknown")

    def _call(self, call: Call, ctx: Ctx) -> Dep:
        name = call.name or ""
        method = call.method
        args = call.args
        receiver = call.receiver
        if name == "len" and len(args) == 1:
            [sized] = args
            return self._size_of(sized, ctx, "len()")
        if method == "size" and args == [["n", 0]] and receiver is not None:
            return self._size_of(receiver, ctx, ".size(0)")
        if method == "numel" and not args and receiver is not None:
            return self._size_of(receiver, ctx, ".numel()")
        counted = self._counted(call, ctx)
        if counted is not None:
            if self.provenance.is_mask(counted, ctx) \
                    or self.provenance.is_sample_index(counted, ctx):
                return Dep(b=True)
            return _unknown(f"{name}() of a value that is not a sampling mask")
        if method == "item" and not args and receiver is not None:
            return self.classify(receiver, ctx)
        got = Evaluator(self.index).got(call, ctx) if method == "get" else None
        if got is not None:
            return _joined([self.classify(item, where) for item, where in got],
                           f"item {call.argument(0)} of a container")
        if args and self._casts(call, ctx):
            inner = self.classify(call.argument(0), ctx)
            return replace(inner, floor=inner.n) if _integer_cast(call) else inner
        if len(args) == 1 and calls_in("floors", call, ctx, self.index):
            inner = self.classify(call.argument(0), ctx)
            return replace(inner, floor=inner.n)
        if name in ("max", "min", "float") and args:
            result = Dep()
            for arg in args:
                result = result | self.classify(arg, ctx)
            return result
        if name in ("round", "math.ceil", "np.ceil"):
            inner = self.classify(call.argument(0), ctx) if args else Dep()
            if inner.n:
                return _unknown(f"{name}() of an expected batch size is neither N*q nor floor(N*q)")
            return inner
        return _unknown(f"call to {name or 'an expression'}() is not followed")

    def _counted(self, call: Call, ctx: Ctx) -> Node | None:
        """The mask whose kept entries a counting call counts (``mask.sum()``,
        ``torch.sum(mask)``, ``np.count_nonzero(mask, axis=0)``: over the whole mask or its
        first axis, the one a per-example mask has), else None. A library function or builtin
        takes the mask as its first argument, a method is called on it."""
        if not calls_in("counts", call, ctx, self.index):
            return None
        name = call.name or ""
        function = "." not in name or self.index.library_name(name, ctx) is not None
        operands = list(call.args) if function else [call.receiver, *call.args]
        axes = [value for key, value in call.kwargs.items() if key in ("dim", "axis")]
        if len(call.kwargs) != len(axes) or len(operands) + len(axes) > 2:
            return None
        if any(axis != ["n", 0] for axis in [*operands[1:], *axes]):
            return None
        return next(iter(operands), None)

    def _casts(self, call: Call, ctx: Ctx) -> bool:
        """A library conversion of a number (``tf.cast(n, tf.float32)``, ``torch.tensor(n)``)."""
        qualified = self.index.library_name(call.name or "", ctx)
        return qualified is not None and calls_in("keeps_examples", call, ctx, self.index)

    def _name(self, expr: Name | Subscript, ctx: Ctx) -> Dep:
        if isinstance(expr, Subscript):
            base = expr.value
            if expr.index == ["n", 0]:
                if isinstance(base, Attr) and base.attr == "shape":
                    return self._size_of(base.base, ctx, ".shape[0]")
                if isinstance(base, Name) and base.last == "shape" and base.base:
                    return self._size_of(Name(["r", base.base]), ctx, ".shape[0]")
                shaped = _shape_operand(base)
                if shaped is not None:
                    return self._size_of(shaped, ctx, ".shape[0]")
            items = Evaluator(self.index).items(expr, ctx)
            if items is None:
                return _unknown("subscript not resolved")
            return _joined([self.classify(item, where) for item, where in items],
                           f"item {expr.index} of a container")
        if expr.base and expr.last == "size":
            sized = self._size_of(Name(["r", expr.base]), ctx, ".size")
            if sized.unknown is None:
                return sized
        if self.provenance.sizes_a_draw(expr.dotted, ctx, itself=True):
            return Dep(n=True)
        binding = self.index.attribute(expr.dotted, ctx)
        if binding is None:
            return _unknown(f"{expr.dotted} is not bound to anything dpcheck can follow")
        where = replace(binding.ctx, line=binding.line)
        if binding.kind == "option":
            return self.classify(binding.ir, where) if binding.ir else _unknown(
                f"option {binding.name} has no default")
        if binding.kind == "param":
            return self._param(binding)
        if binding.kind == "assign" and binding.ir is not None:
            if binding.index:
                value = node(binding.ir)
                for position in binding.index:
                    if not isinstance(value, Seq) or position >= len(value.items):
                        return _unknown(
                            f"{expr.dotted} is unpacked from an expression not followed")
                    value = value.items[position]
                return self.classify(value, where)
            start = self.classify(binding.ir, where)
            added = self._added(binding)
            return start if added is None else start | added
        return _unknown(f"{expr.dotted} is a {binding.kind}, not a number")

    def _added(self, binding: Binding) -> Dep | None:
        """What a running total adds up in the scope that starts it (``seen += len(x)`` over
        accumulated micro-batches): a total of realized batch sizes is realized. None when
        nothing is added to it."""
        scope = self.index.scope(binding.ctx)
        terms = [(Ctx(binding.ctx.path, binding.ctx.scope, stmt.line), stmt.expr)
                 for stmt in (scope.statements if scope else [])
                 if stmt.kind == "aug" and stmt.target == binding.name and stmt.op == "+"]
        if not terms:
            return None
        result = Dep()
        for where, term in terms:
            result = result | self.classify(term, where)
        return result

    def _param(self, binding: Binding) -> Dep:
        key = ("param-dependence", binding.ctx.path, binding.ctx.scope, binding.name,
               self.index.reach)
        return self.index.questions.ask(key, lambda: self._passed(binding),
                                        _unknown(f"parameter {binding.name} is passed itself "
                                                 "through a cycle of calls"))

    def _passed(self, binding: Binding) -> Dep:
        """The data dependence of what the callers pass for a parameter (and its default)."""
        results = [self.classify(arg, where) for where, arg in self.index.arguments(binding)]
        if binding.ir is not None:
            results.append(self.classify(binding.ir, binding.ctx))
        if not results:
            return _unknown(f"parameter {binding.name} has no default and no call passes it")
        return _joined(results, f"parameter {binding.name}")


def _joined(results: list[Dep], what: str) -> Dep:
    """The dependence of a value that holds one of ``results`` (what a parameter's callers
    pass, the items a subscript reads in several containers): theirs when they agree, a data
    size of undecided kind when all are sizes of data, else unknown."""
    kinds = {r.kind for r in results}
    if len(kinds) == 1:
        return next(iter(results))
    if kinds <= set(DATA_DEPENDENT) - {"floor-expected"}:
        return Dep(d=True)
    return _unknown(f"{what} receives values of kinds {sorted(kinds)}")


def _integer_cast(call: Call) -> bool:
    """Whether a tensor conversion casts to an integer dtype (``tf.cast(x, tf.int32)``), which
    truncates a non-negative value: a floor."""
    dtype = call.argument(1, "dtype")
    return isinstance(dtype, Name) and "int" in dtype.last


def _shape_operand(expr: Node) -> Node | None:
    """``x`` of a ``tf.shape(x)`` / ``np.shape(x)`` call (``tf.shape(input=x)`` too), else None."""
    if not isinstance(expr, Call) or expr.method != "shape":
        return None
    operands = [*expr.args, *expr.kwargs.values()]
    return next(iter(operands)) if len(operands) == 1 else None
