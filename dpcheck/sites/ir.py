"""A compact, JSON-serialisable encoding of Python expressions (the summary's "IR").

Summaries are cached on disk as JSON, so the later stages (pipelines, rules) never see syntax
trees: they read expressions in this encoding. Every node is a list whose first item is a tag:

* ``["n", number]`` numeric literal; ``["s", str]`` string; ``["c", True|False|None]`` constant
* ``["r", "a.b.c"]`` a dotted name (Name or Attribute chain of names)
* ``["a", base, attr]`` attribute of a non-name base (``f(x).shape``)
* ``["call", callee, [args], {kwargs}, [line, col, end_line, end_col], {keyword: line}]``
  (a ``**mapping`` argument is kept under the key ``"**"``)
* ``["b", op, left, right]`` binary operation; ``["u", op, operand]`` unary operation
* ``["cmp", op, left, right]`` comparison (first operator only)
* ``["i", value, index]`` subscript; a one-dimensional slice is the index ``["slice", lower,
  upper, step]`` (``["c", None]`` for an omitted bound; ``x[i:i + B]`` is a fixed-size slice),
  a multi-dimensional key the opaque ``["slice"]``; ``walk`` does not enter slice bounds
* ``["t", [items]]`` tuple/list/set; ``["d", [[key, value], ...]]`` dict
* ``["comp", element, [bound names], [iterables], filtered, [conditions]]`` list/set/dict
  comprehension, generator; ``filtered`` says whether an ``if`` clause drops items and
  ``conditions`` holds the ``if`` clauses' tests (``[i for i in range(n) if mask[i]]`` lists
  the indices a sampling mask keeps)
* ``["?", kind, ...]`` anything else, opaque on purpose; lambdas, f-strings, conditional
  expressions (kind ``ifexp``), boolean operations (kind ``and`` or ``or``), ``yield``,
  ``yield from`` and ``await`` keep their sub-expressions as children

Positions are 1-based lines and 1-based *character* columns. The encoder reads Python's ``ast``
(the C parser: an order of magnitude cheaper than a concrete syntax tree with positions) and
truncates expressions below ``MAX_DEPTH`` to keep summaries small.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from dpcheck.sites.nodes import (
    Attr,
    BinOp,
    Call,
    Compare,
    Comp,
    Const,
    DictDisplay,
    Name,
    Node,
    Num,
    Opaque,
    Seq,
    Slice,
    Str,
    Subscript,
    UnaryOp,
    walk,
)

IR = list[Any]
Position = list[int]
MAX_DEPTH = 12

BINOPS: dict[type[ast.operator], str] = {
    ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%",
    ast.Pow: "**", ast.MatMult: "@",
}
_UNARY: dict[type[ast.unaryop], str] = {ast.USub: "-", ast.UAdd: "+", ast.Not: "not"}
_COMPARE: dict[type[ast.cmpop], str] = {
    ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!=",
}


def dotted(node: ast.AST | None) -> str | None:
    """``a.b.c`` for a Name/Attribute chain of plain names, else None."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


class Source:
    """Source lines of one module, to turn ``ast`` byte offsets into character columns and to
    cut the text of a node."""

    def __init__(self, text: str) -> None:
        self._lines = text.splitlines()

    def _line(self, number: int) -> str:
        return self._lines[number - 1] if 0 < number <= len(self._lines) else ""

    def column(self, line: int, offset: int) -> int:
        """The 1-based character column of a UTF-8 byte offset on a 1-based line."""
        text = self._line(line)
        if text.isascii():
            return offset + 1
        return len(text.encode("utf-8")[:offset].decode("utf-8", errors="replace")) + 1

    def position(self, node: ast.AST) -> Position:
        line, end_line = node.lineno, node.end_lineno or node.lineno  # type: ignore[attr-defined]
        return [line, self.column(line, node.col_offset),  # type: ignore[attr-defined]
                end_line, self.column(end_line, node.end_col_offset or 0)]  # type: ignore

    def text(self, node: ast.AST, limit: int = 400) -> str:
        """The source text of ``node`` (whitespace-normalised ends, at most ``limit`` chars)."""
        line, col, end_line, end_col = self.position(node)
        if line == end_line:
            return self._line(line)[col - 1 : end_col - 1].strip()[:limit]
        parts = [self._line(line)[col - 1 :]]
        parts.extend(self._line(n) for n in range(line + 1, end_line))
        parts.append(self._line(end_line)[: end_col - 1])
        return "\n".join(parts).strip()[:limit]


class Encoder:
    """Encodes ``ast`` expressions to IR; ``on_call`` is told about every call encoded (callee
    dotted name or None, the IR node), so the summary can index calls without a second walk."""

    def __init__(self, source: Source, on_call: Callable[[str | None, IR], None]) -> None:
        self._source = source
        self._on_call = on_call

    def encode(self, node: ast.AST | None, depth: int = 0) -> IR:
        """The IR of ``node`` (``["c", None]`` for a missing expression)."""
        if node is None:
            return Const(["c", None])
        if depth > MAX_DEPTH:
            return Opaque(["?", "deep"])
        name = dotted(node)
        if name is not None:
            return Name(["r", name])
        handler = _HANDLERS.get(type(node))
        if handler is None:
            return Opaque(["?", type(node).__name__])
        return handler(self, node, depth + 1)

    def _constant(self, node: ast.Constant, depth: int) -> IR:
        value = node.value
        if value is None or isinstance(value, bool):
            return Const(["c", value])
        if isinstance(value, (int, float)):
            return Num(["n", value])
        if isinstance(value, str):
            return Str(["s", value])
        return Opaque(["?", type(value).__name__])

    def _call(self, node: ast.Call, depth: int) -> IR:
        args = [Opaque(["?", "star"]) if isinstance(a, ast.Starred) else self.encode(a, depth)
                for a in node.args]
        kwargs: dict[str, IR] = {}
        lines: dict[str, int] = {}
        for keyword in node.keywords:
            key = keyword.arg if keyword.arg is not None else "**"
            kwargs[key] = self.encode(keyword.value, depth)
            lines[key] = keyword.lineno
        callee = self.encode(node.func, depth)
        ir = Call(["call", callee, args, kwargs, self._source.position(node), lines])
        self._on_call(callee[1] if callee[0] == "r" else None, ir)
        return ir

    def _attribute(self, node: ast.Attribute, depth: int) -> IR:
        return Attr(["a", self.encode(node.value, depth), node.attr])

    def _binop(self, node: ast.BinOp, depth: int) -> IR:
        op = BINOPS.get(type(node.op), "?")
        return BinOp(["b", op, self.encode(node.left, depth), self.encode(node.right, depth)])

    def _unary(self, node: ast.UnaryOp, depth: int) -> IR:
        return UnaryOp(["u", _UNARY.get(type(node.op), "?"), self.encode(node.operand, depth)])

    def _compare(self, node: ast.Compare, depth: int) -> IR:
        op = _COMPARE.get(type(node.ops[0]), "?")
        return Compare(["cmp", op, self.encode(node.left, depth),
                        self.encode(node.comparators[0], depth)])

    def _subscript(self, node: ast.Subscript, depth: int) -> IR:
        key = node.slice
        if isinstance(key, ast.Slice):
            index: Node = Slice(["slice", self.encode(key.lower, depth),
                                 self.encode(key.upper, depth), self.encode(key.step, depth)])
        else:
            index = Slice(["slice"]) if isinstance(key, ast.Tuple) else self.encode(key, depth)
        return Subscript(["i", self.encode(node.value, depth), index])

    def _sequence(self, node: ast.Tuple | ast.List | ast.Set, depth: int) -> IR:
        return Seq(["t", [self.encode(e.value if isinstance(e, ast.Starred) else e, depth)
                          for e in node.elts]])

    def _dict(self, node: ast.Dict, depth: int) -> IR:
        return DictDisplay(["d", [[self.encode(k, depth), self.encode(v, depth)]
                                  for k, v in zip(node.keys, node.values) if k is not None]])

    def _ifexp(self, node: ast.IfExp, depth: int) -> IR:
        return Opaque(["?", "ifexp", self.encode(node.body, depth),
                       self.encode(node.orelse, depth), self.encode(node.test, depth)])

    def _boolop(self, node: ast.BoolOp, depth: int) -> IR:
        kind = "and" if isinstance(node.op, ast.And) else "or"
        return Opaque(["?", kind, *(self.encode(v, depth) for v in node.values)])

    def _fstring(self, node: ast.JoinedStr, depth: int) -> IR:
        return Opaque(["?", "fstring", *(self.encode(v.value, depth) for v in node.values
                                         if isinstance(v, ast.FormattedValue))])

    def _wrapped(self, node: ast.Yield | ast.YieldFrom | ast.Await, depth: int) -> IR:
        return Opaque(["?", type(node).__name__.lower(), self.encode(node.value, depth)])

    def _lambda(self, node: ast.Lambda, depth: int) -> IR:
        return Opaque(["?", "lambda", self.encode(node.body, depth)])

    def _comprehension(
        self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp, depth: int
    ) -> IR:
        element = node.value if isinstance(node, ast.DictComp) else node.elt
        targets = [name for g in node.generators for name in target_names(g.target)]
        iters = [self.encode(g.iter, depth) for g in node.generators]
        conditions = [self.encode(test, depth) for g in node.generators for test in g.ifs]
        return Comp(["comp", self.encode(element, depth), targets, iters, bool(conditions),
                     conditions])


def target_names(node: ast.AST) -> list[str]:
    """The dotted names bound by an assignment or loop target (``x`` or ``(a, b)``)."""
    if isinstance(node, (ast.Tuple, ast.List)):
        return [n for e in node.elts for n in target_names(e)]
    if isinstance(node, ast.Starred):
        return target_names(node.value)
    name = dotted(node)
    return [name] if name else []


_HANDLERS: dict[type[ast.AST], Callable[[Encoder, Any, int], IR]] = {
    ast.Constant: Encoder._constant,
    ast.Call: Encoder._call,
    ast.Attribute: Encoder._attribute,
    ast.BinOp: Encoder._binop,
    ast.UnaryOp: Encoder._unary,
    ast.Compare: Encoder._compare,
    ast.Subscript: Encoder._subscript,
    ast.Tuple: Encoder._sequence,
    ast.List: Encoder._sequence,
    ast.Set: Encoder._sequence,
    ast.Dict: Encoder._dict,
    ast.IfExp: Encoder._ifexp,
    ast.BoolOp: Encoder._boolop,
    ast.JoinedStr: Encoder._fstring,
    ast.Lambda: Encoder._lambda,
    ast.Yield: Encoder._wrapped,
    ast.YieldFrom: Encoder._wrapped,
    ast.Await: Encoder._wrapped,
    ast.ListComp: Encoder._comprehension,
    ast.SetComp: Encoder._comprehension,
    ast.GeneratorExp: Encoder._comprehension,
    ast.DictComp: Encoder._comprehension,
}


def dict_item(container: IR, key: object) -> IR | None:
    """The value under a constant ``key`` of a dict display or a ``dict(..., name=...)`` call
    (a keyword wins over a positional mapping), or at a constant index of a tuple or list
    display, else None."""
    if container[0] == "t" and type(key) is int and -len(container[1]) <= key < len(container[1]):
        return container[1][key]  # type: ignore[no-any-return]
    if container[0] == "d":
        return next((value for item, value in container[1]
                     if item[0] in ("s", "n") and item[1] == key), None)
    if container[0] == "call" and callee_name(container) == "dict" and isinstance(key, str):
        return container[3].get(key)
    return None


def callee_name(ir: IR) -> str | None:
    """Dotted callee of a call node (``torch.normal``), or ``?.method`` for a method on a
    non-name base (``f(x).normal_``) so tail matching still works."""
    callee = ir[1]
    if callee[0] == "r":
        return str(callee[1])
    if callee[0] == "a":
        return "?." + str(callee[2])
    return None


def tail_name(name: object) -> str:
    """The last component of a dotted name (``normal`` of ``torch.normal``, ``?.normal_``);
    "" for anything that is not a name (no callee, an unpacking target list), so callers can
    compare the result with tails directly."""
    return name.rsplit(".", 1)[-1] if isinstance(name, str) else ""
