"""Typed views of the summary's expression encoding (the IR of ``dpcheck.sites.ir``).

The summary is cached as JSON, so an expression is stored as a list whose first item is a tag
(``["call", callee, args, kwargs, position, keyword_lines]``). Analysis code never reads those
positions: each tag has a class here that *is* that list (so it serialises unchanged and compares
equal to it) and names its parts (``call.callee``, ``call.args``, ``binop.left``). The encoder
builds these classes directly; ``node`` turns a list read back from the cache into them.

| class | tag | parts |
|---|---|---|
| ``Num``, ``Str``, ``Const`` | ``n``, ``s``, ``c`` | ``value`` |
| ``Name`` | ``r`` | ``dotted`` (``a.b.c``) |
| ``Attr`` | ``a`` | ``base`` (a non-name expression), ``attr`` |
| ``Call`` | ``call`` | ``callee``, ``args``, ``kwargs`` (``"**"``: a mapping argument), ``position``, ``keyword_lines`` |
| ``BinOp``, ``Compare`` | ``b``, ``cmp`` | ``op``, ``left``, ``right`` |
| ``UnaryOp`` | ``u`` | ``op``, ``operand`` |
| ``Subscript`` | ``i`` | ``value``, ``index`` (an expression or a ``Slice``) |
| ``Slice`` | ``slice`` | ``lower``, ``upper``, ``step`` (absent for a multi-dimensional key) |
| ``Seq`` | ``t`` | ``items`` (tuple, list or set display) |
| ``DictDisplay`` | ``d`` | ``items`` (key, value pairs) |
| ``Comp`` | ``comp`` | ``element``, ``names``, ``iterables``, ``filtered``, ``conditions`` |
| ``Opaque`` | ``?`` | ``kind``, ``parts`` |
| ``ReadAt`` | ``@`` | ``path``, ``scope``, ``line``, ``expr``: an expression read at another place |
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, ClassVar



class Node(list):  # type: ignore[type-arg]
    """One IR expression: the stored list, with its parts named by the subclass."""

    __slots__ = ()
    TAG: ClassVar[str] = ""

    @property
    def tag(self) -> str:
        return str(self[0])


    def walk(self) -> Iterator[Node]:
        """Every expression inside this one (pre-order, ``dpcheck.sites.ir.walk``), this one
        included."""
        return walk(self)  # type: ignore[return-value]


class Num(Node):
    """A numeric literal."""

    __slots__ = ()
    TAG = "n"

    @property
    def value(self) -> int | float:
        return self[1]  # type: ignore[no-any-return]


class Str(Node):
    """A string literal."""

    __slots__ = ()
    TAG = "s"

    @property
    def value(self) -> str:
        return str(self[1])


class Const(Node):
    """``True``, ``False`` or ``None``."""

    __slots__ = ()
    TAG = "c"

    @property
    def value(self) -> bool | None:
        return self[1]  # type: ignore[no-any-return]


class Name(Node):
    """A dotted name: a name or an attribute chain of names (``torch.nn.functional``)."""

    __slots__ = ()
    TAG = "r"

    @property
    def dotted(self) -> str:
        return str(self[1])

    @property
    def base(self) -> str:
        """``a.b`` of ``a.b.c``; "" for a plain name."""
        return self.dotted.rpartition(".")[0]

    @property
    def last(self) -> str:
        """``c`` of ``a.b.c``."""
        return self.dotted.rpartition(".")[2]

    @property
    def head(self) -> str:
        """``a`` of ``a.b.c`` (the object an attribute chain starts from); the name itself for
        a plain name."""
        return self.dotted.partition(".")[0]


class Attr(Node):
    """An attribute of an expression that is not a dotted name (``f(x).shape``)."""

    __slots__ = ()
    TAG = "a"

    @property
    def base(self) -> Node:
        return self[1]  # type: ignore[no-any-return]

    @property
    def attr(self) -> str:
        return str(self[2])



class Call(Node):
    """A call; ``position`` is ``(line, column, end_line, end_column)`` (1-based, characters)."""

    __slots__ = ()
    TAG = "call"

    @property
    def callee(self) -> Node:
        return self[1]  # type: ignore[no-any-return]

    @property
    def args(self) -> list[Node]:
        return self[2]  # type: ignore[no-any-return]

    @property
    def kwargs(self) -> dict[str, Node]:
        return self[3]  # type: ignore[no-any-return]

    @property
    def position(self) -> tuple[int, int, int, int]:
        line, column, end_line, end_column = self[4]
        return line, column, end_line, end_column

    @property
    def keyword_lines(self) -> dict[str, int]:
        """The line of each keyword argument (``noise_multiplier=`` on its own line)."""
        return self[5] if len(self) > 5 else {}  # type: ignore[no-any-return]

    @property
    def name(self) -> str | None:
        """The dotted callee (``torch.normal``), ``?.method`` for a method of an expression
        that is not a name (``f(x).normal_``), None for anything else."""
        callee = self.callee
        if isinstance(callee, Name):
            return callee.dotted
        if isinstance(callee, Attr):
            return f"?.{callee.attr}"
        return None

    @property
    def method(self) -> str:
        """The last part of the callee's name ("" when it has none)."""
        name = self.name
        return name.rpartition(".")[2] if name else ""

    @property
    def receiver(self) -> Node | None:
        """The object a method is called on: ``x`` of ``x.size(0)``, ``f(x)`` of
        ``f(x).sum()``; None for a plain function name."""
        callee = self.callee
        if isinstance(callee, Attr):
            return callee.base
        if isinstance(callee, Name) and callee.base:
            return Name(["r", callee.base])
        return None

    def argument(self, position: int, *keywords: str) -> Node | None:
        """The argument given by one of ``keywords``, else at ``position`` (negative: never
        positional)."""
        for key in keywords:
            if key in self.kwargs:
                return self.kwargs[key]
        return self.args[position] if 0 <= position < len(self.args) else None



class BinOp(Node):
    """A binary operation (``op`` is ``+ - * / // ** % @``)."""

    __slots__ = ()
    TAG = "b"

    @property
    def op(self) -> str:
        return str(self[1])

    @property
    def left(self) -> Node:
        return self[2]  # type: ignore[no-any-return]

    @property
    def right(self) -> Node:
        return self[3]  # type: ignore[no-any-return]



class Compare(BinOp):
    """A comparison (its first operator only)."""

    __slots__ = ()
    TAG = "cmp"


class UnaryOp(Node):
    """``-x``, ``+x`` or ``not x``."""

    __slots__ = ()
    TAG = "u"

    @property
    def op(self) -> str:
        return str(self[1])

    @property
    def operand(self) -> Node:
        return self[2]  # type: ignore[no-any-return]



class Slice(Node):
    """A one-dimensional slice ``lower:upper:step`` (an omitted bound is ``Const(None)``), or
    with no bounds at all a multi-dimensional key dpcheck does not read."""

    __slots__ = ()
    TAG = "slice"

    @property
    def bounded(self) -> bool:
        return len(self) == 4

    @property
    def lower(self) -> Node | None:
        return self[1] if self.bounded else None

    @property
    def upper(self) -> Node | None:
        return self[2] if self.bounded else None

    @property
    def step(self) -> Node | None:
        return self[3] if self.bounded else None


class Subscript(Node):
    """``value[index]``."""

    __slots__ = ()
    TAG = "i"

    @property
    def value(self) -> Node:
        return self[1]  # type: ignore[no-any-return]

    @property
    def index(self) -> Node:
        return self[2]  # type: ignore[no-any-return]



class Seq(Node):
    """A tuple, list or set display (starred items are kept as their value)."""

    __slots__ = ()
    TAG = "t"

    @property
    def items(self) -> list[Node]:
        return self[1]  # type: ignore[no-any-return]



class DictDisplay(Node):
    """A dict display (``**`` entries are left out)."""

    __slots__ = ()
    TAG = "d"

    @property
    def items(self) -> list[tuple[Node, Node]]:
        return [(key, value) for key, value in self[1]]



class Comp(Node):
    """A list/set/dict comprehension or a generator expression; ``filtered`` says whether an
    ``if`` clause drops items, ``conditions`` holds those clauses."""

    __slots__ = ()
    TAG = "comp"

    @property
    def element(self) -> Node:
        return self[1]  # type: ignore[no-any-return]

    @property
    def names(self) -> list[str]:
        return self[2]  # type: ignore[no-any-return]

    @property
    def iterables(self) -> list[Node]:
        return self[3]  # type: ignore[no-any-return]

    @property
    def filtered(self) -> bool:
        return bool(self[4])

    @property
    def conditions(self) -> list[Node]:
        return self[5]  # type: ignore[no-any-return]



class Opaque(Node):
    """An expression dpcheck does not model in detail (a lambda, an f-string, a conditional
    expression of kind ``ifexp``, a boolean operation of kind ``and``/``or``, ``yield``,
    ``await``, a starred argument of kind ``star``); its sub-expressions are kept. A
    conditional's ``parts`` are its two values (body, else), its ``test`` is kept apart."""

    __slots__ = ()
    TAG = "?"

    @property
    def kind(self) -> str:
        return str(self[1])

    @property
    def parts(self) -> list[Node]:
        kept = self[2:4] if self.kind == "ifexp" else self[2:]
        return [part for part in kept if isinstance(part, Node)]

    @property
    def test(self) -> Node | None:
        """The test of a conditional expression (``c`` of ``a if c else b``); None otherwise."""
        found = self[4] if self.kind == "ifexp" and len(self) > 4 else None
        return found if isinstance(found, Node) else None



class ReadAt(Node):
    """An expression to be read at another place (a helper's argument read in its caller);
    made by the value evaluator, never stored in a summary."""

    __slots__ = ()
    TAG = "@"

    @property
    def path(self) -> str:
        return str(self[1])

    @property
    def scope(self) -> str:
        return str(self[2])

    @property
    def line(self) -> int:
        return int(self[3])

    @property
    def expr(self) -> Node:
        return self[4]  # type: ignore[no-any-return]



def walk(ir: Any) -> Iterator[Node]:
    """Every IR node inside ``ir`` (pre-order), including ``ir`` itself; slice bounds are not
    entered (a slice's bounds are not values of the subscripted expression)."""
    stack = [ir]
    while stack:
        node = stack.pop()
        if not isinstance(node, list) or not node or not isinstance(node[0], str):
            continue
        yield node
        tag = node[0]
        if tag == "call":
            stack.extend(reversed(node[2]))
            stack.extend(node[3].values())
            stack.append(node[1])
        elif tag in ("b", "cmp"):
            stack.extend((node[3], node[2]))
        elif tag == "u":
            stack.append(node[2])
        elif tag == "a":
            stack.append(node[1])
        elif tag == "i":
            stack.extend((node[2], node[1]))
        elif tag == "t":
            stack.extend(reversed(node[1]))
        elif tag == "d":
            for key, value in node[1]:
                stack.extend((value, key))
        elif tag == "comp":
            stack.extend(reversed(node[5]))
            stack.extend(reversed(node[3]))
            stack.append(node[1])
        elif tag == "?" and len(node) > 2:
            stack.extend(node[2:])


_CLASSES: dict[str, type[Node]] = {
    cls.TAG: cls for cls in (Num, Str, Const, Name, Attr, Call, BinOp, Compare, UnaryOp, Slice,
                             Subscript, Seq, DictDisplay, Comp, Opaque, ReadAt)
}


def node(stored: Any) -> Node:
    """The typed view of an expression read back from the cache (a node already typed is
    returned as it is)."""
    if isinstance(stored, Node):
        return stored
    tag = stored[0]
    cls = _CLASSES.get(tag, Opaque)
    if tag in ("n", "s", "c", "r"):
        return cls(stored)
    if tag == "a":
        return cls([tag, node(stored[1]), stored[2]])
    if tag == "call":
        return cls([tag, node(stored[1]), [node(a) for a in stored[2]],
                    {k: node(v) for k, v in stored[3].items()}, stored[4],
                    *stored[5:]])
    if tag in ("b", "cmp"):
        return cls([tag, stored[1], node(stored[2]), node(stored[3])])
    if tag == "u":
        return cls([tag, stored[1], node(stored[2])])
    if tag == "i":
        return cls([tag, node(stored[1]), node(stored[2])])
    if tag == "slice":
        return cls([tag, *(node(bound) for bound in stored[1:])])
    if tag == "t":
        return cls([tag, [node(item) for item in stored[1]]])
    if tag == "d":
        return cls([tag, [[node(key), node(value)] for key, value in stored[1]]])
    if tag == "comp":
        return cls([tag, node(stored[1]), list(stored[2]), [node(i) for i in stored[3]],
                    stored[4], [node(c) for c in stored[5]]])
    if tag == "@":
        return cls([tag, *stored[1:4], node(stored[4])])
    return Opaque(["?", stored[1] if len(stored) > 1 else tag,
                   *(node(c) if isinstance(c, list) else c for c in stored[2:])])


def optional(stored: Any) -> Node | None:
    """``node`` of a stored expression that may be absent (a parameter without a default)."""
    return None if stored is None else node(stored)


def names_in(expr: Node) -> Iterator[str]:
    """The dotted names an expression reads."""
    for part in expr.walk():
        if isinstance(part, Name):
            yield part.dotted
