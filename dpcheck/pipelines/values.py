"""Static values of training parameters, with provenance (where the number was written).

Evaluates IR expressions to numbers through ``ProjectIndex`` bindings: literals, module
constants (across imports), argparse/click/absl defaults, dict and namespace configs (nested,
keyed by constants; ``get`` with a default too), the data of a configuration file the code
loads by a constant path (``dpcheck.pipelines.config_files``), function defaults (or what every
call site passes; a ``*``/``**`` argument passes something unknown), simple arithmetic, calls
of one-``return`` project helpers, and the training-set sizes of well-known datasets (through
unpacked returns of project functions, and of a ``TensorDataset`` of tensors one of which has a
known length). A dataset name that several ``if`` arms assign, the arm not decided, is sized
only when the arms agree. Anything else is None: the caller reports the parameter as
unresolved.

One module over 500 lines on purpose: every kind of value it reads is a case of the same
recursive question, answered under one budget of questions and one memo.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from functools import lru_cache
from importlib import resources
from typing import Any, TypeVar

from dpcheck.model import ParamValue, Span
from dpcheck.pipelines.binding import Binding
from dpcheck.pipelines.calls import argument
from dpcheck.pipelines.config_files import CONFIG_SCOPE, loaded_config
from dpcheck.pipelines.index import ProjectIndex
from dpcheck.pipelines.questions import frozen
from dpcheck.pipelines.scope import Ctx
from dpcheck.pipelines.subsets import selection_size, split_size
from dpcheck.pipelines.vocabulary import calls_in, vocabulary
from dpcheck.sites.ir import IR, dict_item
from dpcheck.sites.nodes import (
    Attr,
    BinOp,
    Call,
    Compare,
    Const,
    DictDisplay,
    Name,
    Node,
    Num,
    Opaque,
    ReadAt,
    Seq,
    Str,
    Subscript,
    UnaryOp,
    node,
)
from dpcheck.sites.views import Statement

Number = int | float
T = TypeVar("T")
#: The tag of ``ReadAt``: an expression read at another place (a helper's argument in its
#: caller). Made only inside the evaluator, never stored in a summary.
READ_AT = ReadAt.TAG
_FUNCS = {
    "int": int, "float": float, "round": round, "abs": abs, "math.floor": math.floor,
    "math.ceil": math.ceil, "math.sqrt": math.sqrt, "np.sqrt": math.sqrt, "math.log": math.log,
    "np.log": math.log, "math.exp": math.exp, "np.floor": math.floor, "np.ceil": math.ceil,
    "min": min, "max": max,
}
_OPS = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
    "/": lambda a, b: a / b, "//": lambda a, b: a // b, "**": lambda a, b: a**b,
    "%": lambda a, b: a % b,
}


_COMPARISONS = {
    "==": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b,
}
Scalar = str | int | float | bool | None


@dataclass(frozen=True)
class Literal:
    """A constant an expression holds (a string, number, bool or None) and where it was written;
    a wrapper, so that a resolved ``None`` differs from an unresolved expression."""

    value: Scalar
    path: str
    line: int


@dataclass(frozen=True)
class Value:
    """A resolved number; ``source`` as in ``ParamValue``, the place it was written, and a
    ``note`` on how it was computed when that is not plain from the place (a helper call)."""

    value: Number
    source: str
    path: str
    line: int
    note: str | None = None

    def param(self, name: str, expression: str | None = None) -> ParamValue:
        return ParamValue(name, self.value, self.source, Span(self.path, self.line),
                          expression or self.note)


@lru_cache(maxsize=1)
def dataset_sizes() -> dict[str, dict[str, int]]:
    """The shipped table of well-known dataset split sizes (``dpcheck/data/datasets.json``)."""
    text = resources.files("dpcheck.data").joinpath("datasets.json").read_text("utf-8")
    data: dict[str, Any] = json.loads(text)
    return {"train": data["train_sizes"], "test": data["test_sizes"]}


def known_dataset(call: IR, index: tuple[int, ...] | None) -> tuple[str, str] | None:
    """(name, split) of a well-known dataset constructor/loader call, if it is one."""
    call = node(call)
    if not isinstance(call, Call):
        return None
    parts = (call.name or "").split(".")
    sizes = dataset_sizes()
    if parts[-1] == "load_data" and len(parts) >= 2 and parts[-2] in sizes["train"]:
        first = next(iter(index or ()), None)
        if first in (0, 1):
            return parts[-2], ("train", "test")[first]
        return None
    named = call.argument(0)
    if parts[-1] == "load" and isinstance(named, Str):
        split = call.kwargs.get("split")
        if isinstance(split, Str) and split.value in ("train", "test"):
            return named.value, split.value
        return None
    if parts[-1] in sizes["train"] and index is None:
        train = call.kwargs.get("train")
        if train is None or isinstance(train, Const) and train.value is True:
            return parts[-1], "train"
        if isinstance(train, Const) and train.value is False:
            return parts[-1], "test"
    return None


class Evaluator:
    """Evaluates IR to ``Value`` in the context of a project index. ``assumed`` holds names
    whose truth is given rather than read (``(path, scope, name) -> bool``): the conditions a
    pipeline's DP code runs under (``dpcheck.pipelines.guards``), so a helper's arm chosen by
    the same flag is the one the DP run takes, whatever the flag's default."""

    def __init__(self, index: ProjectIndex, assumed: Mapping[tuple[str, str, str], bool] | None = None) -> None:
        self.index = index
        self.assumed = dict(assumed or {})
        self._assumed_key = frozenset(self.assumed.items())
        self._inlined: set[Ctx] = set()  # helpers whose bodies are being evaluated

    def value(self, ir: IR | None, ctx: Ctx) -> Value | None:
        """The number ``ir`` evaluates to at ``ctx`` (None: not decided). A name or helper
        followed is a question of the memo and cycle guard (``dpcheck.pipelines.questions``)."""
        if ir is None:
            return None
        expr = node(ir)
        if isinstance(expr, Num) and isinstance(expr.value, (int, float)) \
                and not isinstance(expr.value, bool):
            return Value(expr.value, "literal", ctx.path, ctx.line)
        if isinstance(expr, Const) and isinstance(expr.value, bool):
            return Value(int(expr.value), "literal", ctx.path, ctx.line)
        if isinstance(expr, Name):
            return self._ask("value", expr, ctx, lambda: self._named(expr, ctx))
        if isinstance(expr, UnaryOp) and expr.op == "-":
            inner = self.value(expr.operand, ctx)
            return replace(inner, value=-inner.value) if inner else None
        if isinstance(expr, BinOp) and expr.op in _OPS:
            return self._binop(expr, ctx)
        if isinstance(expr, Subscript):
            return self._subscript(expr, ctx)
        if isinstance(expr, Call):
            return self._call(expr, ctx)
        if isinstance(expr, Attr) and isinstance(expr.base, Call):
            option = self.index.parsed_option(expr.base, ctx, expr.attr)
            return self._ask("value", expr, ctx, lambda: self.binding(option)) if option else None
        if isinstance(expr, ReadAt):
            return self.value(expr.expr, Ctx(expr.path, expr.scope, expr.line))
        return None

    def _ask(self, kind: str, expr: Node, ctx: Ctx, answer: Callable[[], T]) -> T | None:
        """The answer to the question ``kind`` about ``expr`` read at ``ctx`` (None: unknown)."""
        key = (kind, frozen(expr), ctx, self.index.reach, self._assumed_key)
        return self.index.questions.ask(key, answer, None)

    def _named(self, expr: Name, ctx: Ctx) -> Value | None:
        return self.binding(binding) if (binding := self.index.attribute(expr.dotted, ctx)) else None

    def literal(self, ir: IR | None, ctx: Ctx) -> Literal | None:
        """The constant ``ir`` holds under the default configuration: a literal, or a name bound
        to one (an option default, a constant, a local never updated in place, a parameter every
        caller passes the same constant for, else its default, an item of a dict or of a
        configuration file's data under a constant key). None when not decided."""
        if ir is None:
            return None
        expr = node(ir)
        if isinstance(expr, (Str, Num, Const)):
            return Literal(expr.value, ctx.path, ctx.line)
        return self.index.questions.ask(("literal", frozen(expr), ctx, self.index.reach, self._assumed_key),
                                        lambda: self._literal(expr, ctx), None)

    def _literal(self, expr: Node, ctx: Ctx) -> Literal | None:
        if isinstance(expr, Name) and (ctx.path, ctx.scope, expr.dotted) in self.assumed:
            return Literal(self.assumed[ctx.path, ctx.scope, expr.dotted], ctx.path, ctx.line)
        if isinstance(expr, UnaryOp) and expr.op == "-" \
                and (inner := self.literal(expr.operand, ctx)):
            number = inner.value
            return replace(inner, value=-number) if isinstance(number, (int, float)) else None
        if isinstance(expr, (Subscript, Call)):
            return self._agreed_literal(expr, ctx)
        binding = self.index.attribute(expr.dotted, ctx) if isinstance(expr, Name) else \
            self.index.parsed_option(expr.base, ctx, expr.attr) \
            if isinstance(expr, Attr) and isinstance(expr.base, Call) else None
        if binding is None and isinstance(expr, Name) and expr.base:
            return self._passed_attribute(expr, ctx)
        if binding is None or binding.ir is None and binding.kind != "param":
            return None
        if binding.kind == "param":
            passed = [self.literal(arg, where) for where, arg in self.index.arguments(binding)]
            return _same_literal(passed) if passed else self.literal(binding.ir, binding.ctx)
        if binding.kind not in ("assign", "option") or binding.index \
                or (binding.kind == "assign" and self.index.mutated(binding)):
            return None
        return self.literal(binding.ir, replace(binding.ctx, line=binding.line))

    def _passed_attribute(self, expr: Name, ctx: Ctx) -> Literal | None:
        """``p.attr`` of a parameter ``p`` without a default: the constant the attribute holds
        in what every caller passes (``settings.corpus`` where each entry script passes its own
        parsed options), when they agree; the attribute's value comes from the callers even when
        they pass different objects."""
        owner = self.index.bind(expr.base, ctx)
        if owner is None or owner.kind != "param" or owner.ir is not None:
            return None
        passed: list[Literal | None] = []
        for where, arg in self.index.arguments(owner):
            arg = node(arg)
            read = Name(["r", f"{arg.dotted}.{expr.last}"]) if isinstance(arg, Name) else \
                Attr([Attr.TAG, arg, expr.last]) if isinstance(arg, Call) else None
            passed.append(self.literal(read, where) if read is not None else None)
        return _same_literal(passed)

    def _agreed_literal(self, expr: Subscript | Call, ctx: Ctx) -> Literal | None:
        """The constant every item ``base[key]`` (``base.get(key, default)``) can be holds."""
        found = self.items(expr, ctx) if isinstance(expr, Subscript) else self.got(expr, ctx)
        return _same_literal([self.literal(item, where) for item, where in found or ()])

    def truth(self, test: IR, ctx: Ctx) -> bool | None:
        """Whether an ``if`` test holds under the default configuration (comparisons of
        constants, ``not``, ``and``/``or`` and truthiness of a constant); None when not decided."""
        test = node(test)
        if isinstance(test, Compare) and test.op in _COMPARISONS:
            left = self.literal(test.left, ctx)
            right = self.literal(test.right, ctx)
            if left is None or right is None:
                return None
            try:
                return bool(_COMPARISONS[test.op](left.value, right.value))
            except TypeError:
                return None
        if isinstance(test, UnaryOp) and test.op == "not":
            inner = self.truth(test.operand, ctx)
            return None if inner is None else not inner
        if isinstance(test, Opaque) and test.kind in ("and", "or"):
            parts = [self.truth(part, ctx) for part in test.parts]
            decisive = test.kind == "or"
            if decisive in parts:
                return decisive
            return None if None in parts else not decisive
        if isinstance(test, (Str, Num, Const, Name, UnaryOp)):
            found = self.literal(test, ctx)
            return bool(found.value) if found is not None else None
        return None

    def decided(self, expr: Node, ctx: Ctx) -> Node:
        """``a if c else b`` as the arm its test selects when the test is decided (a flag the
        caller binds, ``training=True``, or a configured constant); any other expression, or a
        conditional whose test is not decided, as it is."""
        if not (isinstance(expr, Opaque) and expr.kind == "ifexp" and expr.test is not None
                and len(expr.parts) == 2):
            return expr
        holds = self.truth(expr.test, ctx)
        if holds is None:
            return expr
        body, orelse = expr.parts
        return self.decided(body if holds else orelse, ctx)

    def arms(self, ctx: Ctx, stmt: Statement) -> list[bool | None]:
        """For each ``if`` arm a statement of the scope of ``ctx`` sits in, whether that arm runs
        under the default configuration (None: the test is not decided)."""
        runs: list[bool | None] = []
        for line, arm in stmt.arms:
            test = self.index.if_test(ctx, line)
            holds = self.truth(test, replace(ctx, line=line)) if test is not None else None
            runs.append(None if holds is None else holds == (arm == 0))
        return runs

    def binding(self, binding: Binding) -> Value | None:
        """The value a binding holds (tuple unpacking, option defaults, params)."""
        ir = binding.ir
        if binding.kind == "param":
            return self._param(binding)
        if binding.kind not in ("assign", "option") or ir is None:
            return None
        if binding.kind == "assign" and self.index.mutated(binding):
            return None
        if binding.index:
            for position in binding.index:
                if not isinstance(ir, Seq) or position >= len(ir.items):
                    return None
                ir = ir.items[position]
        result = self.value(ir, replace(binding.ctx, line=binding.line))
        if result is None:
            return None
        if binding.kind == "option":
            return replace(result, source="argparse-default")
        if binding.ctx.scope == "<module>" and result.source == "literal":
            return replace(result, source="constant")
        return result

    def _param(self, binding: Binding) -> Value | None:
        key = ("param-value", binding.ctx.path, binding.ctx.scope, binding.name, self.index.reach)
        return self.index.questions.ask(key, lambda: self._passed(binding), None)

    def _passed(self, binding: Binding) -> Value | None:
        """What every caller passes for a parameter, if they agree; else its default."""
        passed = [self.value(arg, where)
                  for where, arg in self.index.arguments(binding)]
        if passed:
            known = {p.value for p in passed if p is not None}
            if len(known) == 1 and all(p is not None for p in passed):
                return next(iter(passed))
            return None
        default = self.value(binding.ir, binding.ctx)
        return replace(default, source="function-default") if default else None

    def _binop(self, expr: BinOp, ctx: Ctx) -> Value | None:
        left = self.value(expr.left, ctx)
        right = self.value(expr.right, ctx)
        if left is None or right is None:
            return None
        try:
            number = _OPS[expr.op](left.value, right.value)
        except (ZeroDivisionError, OverflowError, ValueError):
            return None
        return Value(number, "derived", ctx.path, ctx.line)

    def _subscript(self, expr: Subscript, ctx: Ctx) -> Value | None:
        return self._agreed(self.items(expr, ctx))

    def _agreed(self, found: list[tuple[Node, Ctx]] | None) -> Value | None:
        """The value every one of the items ``found`` holds (a config value), if they agree."""
        values = [self.value(item, where) for item, where in found or ()]
        first = next(iter(values), None)
        if first is None or any(v is None or v.value != first.value for v in values):
            return None
        return replace(first, source="config")

    def got(self, call: Call, ctx: Ctx) -> list[tuple[Node, Ctx]] | None:
        """``items`` of ``base.get(key, default)``: the item under ``key`` of each container
        ``base`` can be; the ``default`` (read at the call) for a configuration file's data that
        lacks the key (a file lists every key it has; a display in code may hide ``**``
        entries, so there a missing key leaves the item undecided). None when the call is no
        such ``get`` or the key or a container is not decided."""
        callee = call.callee
        base = callee.base if isinstance(callee, Attr) else \
            Name(["r", callee.base]) if isinstance(callee, Name) and callee.base else None
        if call.method != "get" or base is None or call.kwargs or not 1 <= len(call.args) <= 2:
            return None
        containers = self._containers(base, ctx)
        key = self.literal(call.argument(0), ctx) if containers else None
        if not containers or key is None:
            return None
        found: list[tuple[Node, Ctx]] = []
        for container, where in containers:
            item = dict_item(container, key.value)
            if item is None and where.scope == CONFIG_SCOPE and isinstance(container, DictDisplay):
                item = call.argument(1) or Const(["c", None])
                where = ctx
            if item is None:
                return None
            found.append(_placed(node(item), where))
        return found

    def items(self, expr: Subscript, ctx: Ctx) -> list[tuple[Node, Ctx]] | None:
        """The expressions the item ``base[key]`` of a dict literal or ``dict(...)`` holds and
        where to read each, one per container the base can be: the base followed through names
        and nested subscripts (``CONFIGS[args.dataset]["sigma"]``), and through a parameter to
        the container every caller passes (a config handed to a constructor); the key a
        constant under the default configuration (a literal, a constant, an option default).
        None when the key or any container is not decided."""
        containers = self._containers(expr.value, ctx)
        key = self.literal(expr.index, ctx) if containers else None
        if not containers or key is None:
            return None
        found: list[tuple[Node, Ctx]] = []
        for container, where in containers:
            item = dict_item(container, key.value)
            if item is None:
                return None
            found.append(_placed(node(item), where))
        return found

    def _containers(self, base: Node, ctx: Ctx) -> list[tuple[Node, Ctx]] | None:
        """The containers ``base`` can hold (``items``), each with where to read it: a display, a
        ``dict(...)`` call, the data of a configuration file a loader call reads
        (``dpcheck.pipelines.config_files``); a name followed is a question of the memo and
        cycle guard."""
        if isinstance(base, Subscript):
            return self.items(base, ctx)
        if isinstance(base, Call) and (loaded := self._ask(
                "config", base, ctx, lambda: loaded_config(self, base, ctx))) is not None:
            return [loaded]
        if not isinstance(base, Name):
            return [(base, ctx)]
        return self._ask("containers", base, ctx, lambda: self._named_containers(base, ctx))

    def _named_containers(self, base: Name, ctx: Ctx) -> list[tuple[Node, Ctx]] | None:
        binding = self.index.attribute(base.dotted, ctx)
        if binding is not None and binding.kind == "param":
            found: list[tuple[Node, Ctx]] = []
            for where, arg in self.index.arguments(binding):
                passed = self._containers(node(arg), where)
                if passed is None:
                    return None
                found.extend(passed)
            return found or None
        assigned = binding.assigned() if binding is not None else None
        if assigned is None:
            return None
        container, where = assigned
        return self._containers(node(container), where)

    def _call(self, call: Call, ctx: Ctx) -> Value | None:
        name = call.name or ""
        if name == "len" and len(call.args) == 1:
            return self.dataset_size(call.argument(0), ctx)
        got = self.got(call, ctx)
        if got is not None:
            return self._agreed(got)
        func = _FUNCS.get(name)
        if func is None:
            return self._ask("helper-value", call, ctx, lambda: self._helper(call, ctx))
        if call.kwargs:
            return None
        args = [self.value(a, ctx) for a in call.args]
        if name in ("int", "float") and args == [None]:  # float("1e-5"), a YAML 1.1 string
            args = [_parsed_number(self.literal(call.argument(0), ctx), func)]
        if not args or any(a is None for a in args):
            return None
        try:
            number = func(*(a.value for a in args if a is not None))
        except (ValueError, OverflowError, TypeError):
            return None
        return Value(number, "derived", ctx.path, ctx.line)

    def _helper(self, call: Call, ctx: Ctx) -> Value | None:
        """The number a call of a simple project helper returns: a function (not a method) whose
        body is one ``return`` of an expression of its parameters and constants
        (``return ref_noise / (ref_batch / batch)``), evaluated with the call's arguments, else
        the parameters' defaults, in place of the parameters. Each helper call followed is a
        question of the memo (``value``); one met again inside its own body (recursion, whose
        substituted keys never repeat) is a cycle: undecided. Arguments are evaluated first, so
        ``f(f(2))`` is not one."""
        function = self.index.function(call.name or "", ctx)
        scope = self.index.scope(function) if function is not None else None
        if function is None or scope is None or scope.owner or function in self._inlined:
            return None
        body = [stmt for stmt in scope.statements
                if not (stmt.kind == "expr" and isinstance(stmt.expr, Str))]
        returned = body.pop() if len(body) == 1 else None
        if returned is None or returned.kind != "return":
            return None
        names = [param.name for param in scope.params]
        where = Ctx(function.path, function.scope, returned.line)
        passed: dict[str, Node] = {}
        for param in scope.params:
            given = argument(call, names, param.name)
            passed[param.name] = ReadAt([READ_AT, ctx.path, ctx.scope, ctx.line, given]) \
                if given else \
                ReadAt([READ_AT, function.path, function.scope, scope.line, param.default]) \
                if param.default else Opaque(["?", "param"])
        for given in [*call.args, *call.kwargs.values()]:
            self.value(given, ctx)  # answered (and kept) before the body opens
        self._inlined.add(function)
        try:
            result = self.value(_substituted(returned.expr, passed), where)
        finally:
            self._inlined.discard(function)
        if result is None:
            return None
        return Value(result.value, "derived", ctx.path, ctx.line,
                     f"{call.name}(...) returns it ({function.path}:{returned.line})")

    def _rows(self, tensor: Node, ctx: Ctx) -> Value | None:
        """The first dimension of a tensor built with a literal shape (``torch.randn(N, d)``,
        ``torch.zeros((N, d))``): the size of a ``TensorDataset`` over it."""
        if isinstance(tensor, Name):
            assigned = self.index.assigned(tensor.dotted, ctx)
            return None if assigned is None else self._ask(
                "rows", tensor, ctx, lambda: self._rows(*assigned))
        if not isinstance(tensor, Call) or not tensor.args \
                or not calls_in("tensor_factories", tensor, ctx, self.index):
            return None
        shape, *_ = tensor.args
        first = next(iter(shape.items), shape) if isinstance(shape, Seq) else shape
        rows = self.value(first, ctx)
        return replace(rows, source="dataset-size") if rows is not None else None

    def dataset_size(self, ir: IR | None, ctx: Ctx) -> Value | None:
        """The number of examples of a dataset expression (``len(train_set)``), followed through
        views of it (``train_set.data.flatten(1).float() / 255``), if the dataset is known."""
        if ir is None:
            return None
        expr = node(ir)
        if isinstance(expr, BinOp) and not isinstance(expr, Compare):
            return self.dataset_size(expr.left, ctx)
        views = vocabulary()["keeps_examples"].methods  # x.float(), x.view(n, -1)
        if isinstance(expr, Call) and isinstance(expr.callee, Attr) and expr.callee.attr in views:
            return self.dataset_size(expr.callee.base, ctx)
        if isinstance(expr, Call) and isinstance(expr.callee, Name) and expr.callee.last in views:
            return self.dataset_size(Name(["r", expr.callee.base or expr.callee.dotted]), ctx)
        if isinstance(expr, Call) and expr.args \
                and calls_in("keeps_examples", expr, ctx, self.index):
            return self.dataset_size(expr.argument(0), ctx)
        if isinstance(expr, Call):
            return self._built_size(expr, ctx)
        if isinstance(expr, Attr) and expr.attr in vocabulary()["data_attributes"].attributes:
            return self.dataset_size(expr.base, ctx)
        if not isinstance(expr, Name):
            return None
        return self._ask("dataset-size", expr, ctx, lambda: self._named_size(expr, ctx))

    def _named_size(self, expr: Name, ctx: Ctx) -> Value | None:
        """The number of examples of the dataset a name is bound to (or an attribute of)."""
        base, attr = expr.base, expr.last
        binding = self.index.attribute(expr.dotted, ctx)
        if binding is None and base and attr in vocabulary()["data_attributes"].attributes:
            return self.dataset_size(Name(["r", base]), ctx)
        if binding is None or binding.kind != "assign" or binding.ir is None:
            return None
        alternatives = self.index.reaching(expr.dotted, ctx) if not base else []
        if len(alternatives) > 1:
            return _agreed([self._bound_size(other) for other in alternatives])
        return self._bound_size(binding)

    def _bound_size(self, binding: Binding) -> Value | None:
        """The number of examples of the dataset an assignment binds."""
        if binding.kind != "assign" or binding.ir is None:
            return None
        where = replace(binding.ctx, line=binding.line)
        if binding.index:
            return self._element_size(binding.ir, binding.index, where)
        return self.dataset_size(binding.ir, where)

    def _built_size(self, call: Call, ctx: Ctx) -> Value | None:
        """The number of examples of the dataset ``call`` builds or returns: a selection of a
        dataset (``dpcheck.pipelines.subsets``), a ``TensorDataset``, a well-known dataset, a
        project function's returned dataset."""
        selected = self._selected(call, ctx)
        if selected is not None:
            return selected
        if call.method == "TensorDataset":
            return self._common_length(call.args, ctx)
        return _known_size(call, None, ctx) or self._returned_size(call, (), ctx)

    def _common_length(self, tensors: list[Node], ctx: Ctx) -> Value | None:
        """The number of examples of a dataset built from same-length tensors
        (``TensorDataset(xs, ys)``): the length of any of them whose length is known (the rows
        of a literal shape, a well-known dataset's ``data``/``targets``), when the known ones
        agree; None when none is known or they disagree."""
        lengths = [self._rows(tensor, ctx) or self.dataset_size(tensor, ctx) for tensor in tensors]
        return _agreed([length for length in lengths if length is not None])

    def _element_size(self, ir: Node, index: tuple[int, ...], ctx: Ctx) -> Value | None:
        """The number of examples of item ``index`` of the tuple ``ir`` evaluates to, through
        tuple literals, names unpacked from names (``x, y = train`` after ``train, test =
        load_data()``) and the returns of project functions (``(x, y), _ = load_mnist()``)."""
        if not index:
            return self.dataset_size(ir, ctx)
        position, *rest = index
        if isinstance(ir, Seq):
            return self._element_size(ir.items[position], tuple(rest), ctx) \
                if position < len(ir.items) else None
        if isinstance(ir, Name):
            binding = self.index.attribute(ir.dotted, ctx)
            if binding is None or binding.kind != "assign" or binding.ir is None:
                return None
            bound, where = binding.ir, replace(binding.ctx, line=binding.line)
            unpacked = (*(binding.index or ()), *index)
            return self._ask(f"element-size{index}", ir, ctx,
                             lambda: self._element_size(bound, unpacked, where))
        if not isinstance(ir, Call):
            return None
        part = split_size(self, ir, position, ctx) if not rest else None
        if part is not None:
            return Value(part, "dataset-size", ctx.path, ctx.line,
                         f"part {position + 1} of the split's lengths")
        return _known_size(ir, index, ctx) or self._returned_size(ir, index, ctx)

    def _selected(self, call: Call, ctx: Ctx) -> Value | None:
        """The number of examples a selection call keeps (``dpcheck.pipelines.subsets``)."""
        selected = selection_size(self, call, ctx)
        if selected is None:
            return None
        return Value(selected, "dataset-size", ctx.path, ctx.line,
                     "the examples the selection keeps")

    def _returned_size(self, call: Call, index: tuple[int, ...], ctx: Ctx) -> Value | None:
        """The number of examples of item ``index`` of what the project function ``call``
        calls returns, when every return agrees."""
        function = self.index.function(call.name or "", ctx)
        if function is None:
            return None
        key = ("returned-size", function, index, self.index.reach)
        return self.index.questions.ask(key, lambda: self._agreed_size(function, index), None)

    def _agreed_size(self, function: Ctx, index: tuple[int, ...]) -> Value | None:
        return _agreed([self._element_size(returned, index, where)
                        for returned, where in self.index.returns(function)])


def _same_literal(passed: list[Literal | None]) -> Literal | None:
    """The constant every one of ``passed`` holds (of one type too); None when there is none,
    one is not decided or two differ."""
    values = {(type(p.value), p.value) if p else None for p in passed}
    return next(iter(passed)) if len(values) == 1 and None not in values else None


def _agreed(sizes: list[Value | None]) -> Value | None:
    """The size every one of ``sizes`` gives (the first's provenance); None when there is none,
    one is unknown or two differ: which one holds is not decided, and unknown beats wrong."""
    numbers = {size.value if size is not None else None for size in sizes}
    first = next(iter(sizes), None)
    return first if len(numbers) == 1 and None not in numbers else None


def _known_size(call: Call, index: tuple[int, ...] | None, ctx: Ctx) -> Value | None:
    """The split size of a well-known dataset call (``datasets.MNIST(...)``, item ``index`` of
    ``mnist.load_data()``), written where ``ctx`` reads the call."""
    known = known_dataset(call, index)
    if known is None:
        return None
    name, split = known
    size = dataset_sizes()[split].get(name)
    return Value(size, "dataset-size", ctx.path, ctx.line) if size is not None else None


def _parsed_number(text: Literal | None, cast: Callable[[Any], Any]) -> Value | None:
    """The number ``int(text)`` / ``float(text)`` gives of a constant string, where it was
    written; None for anything else."""
    if text is None or not isinstance(text.value, str):
        return None
    try:
        number = cast(text.value)
    except ValueError:
        return None
    return Value(number, "literal", text.path, text.line) if math.isfinite(number) else None


def _placed(item: Node, where: Ctx) -> tuple[Node, Ctx]:
    """An item and where to read it: an item placed elsewhere (a configuration file's value at
    its own line) is read there."""
    if isinstance(item, ReadAt):
        return item.expr, Ctx(item.path, item.scope, item.line)
    return item, where


def _substituted(part: Any, passed: dict[str, Node]) -> Any:
    """``part`` (an expression, or a list/dict inside one) with each read of a parameter
    replaced by what ``passed`` holds for it; ``p.attr`` of a parameter passed a name ``x``
    becomes ``x.attr`` read where ``x`` was passed, and of anything else an opaque node
    (unresolved). Expressions keep their node class."""
    if isinstance(part, dict):
        return {key: _substituted(item, passed) for key, item in part.items()}
    if isinstance(part, Name):
        head, dot, rest = part.dotted.partition(".")
        given = passed.get(head)
        if given is None or not dot:
            return given or part
        inner = given.expr if isinstance(given, ReadAt) else None
        return ReadAt([READ_AT, given.path, given.scope, given.line,
                       Name(["r", f"{inner.dotted}.{rest}"])]) \
            if isinstance(given, ReadAt) and isinstance(inner, Name) else Opaque(["?", "param"])
    if isinstance(part, Node):
        return type(part)(_substituted(item, passed) for item in part)
    if isinstance(part, list):
        return [_substituted(item, passed) for item in part]
    return part
