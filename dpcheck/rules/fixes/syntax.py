"""The concrete syntax a fix reads and rewrites: one parsed file, its nodes by position, the
names visible at a node, and the edit a rewrite makes.

A fix reads the file the finding is in with libcst (comments, blank lines, tabs, CRLF line ends
and the user's own spelling all kept), finds the nodes the analysis points at by their positions
(1-based lines, 1-based character columns, as ``Span`` has them; libcst's columns are 0-based),
rewrites them with a ``CSTTransformer`` and turns the new text into the smallest ``Edit``: the
bytes outside it are the file's own, untouched.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider, ScopeProvider

from dpcheck.model import Span
from dpcheck.rules.fixes.fix import Edit, edit_between

#: A name the code already has: a plain name or a chain of attributes on one (``args.batch``).
Dotted = cst.Name | cst.Attribute


@dataclass
class ParsedFile:
    """One Python file of the project, parsed with libcst, with node positions and scopes."""

    path: str
    text: str
    wrapper: MetadataWrapper

    @classmethod
    def parse(cls, path: str, text: str) -> ParsedFile | None:
        """The parsed file, or None when libcst cannot parse it (then no fix touches it)."""
        try:
            module = cst.parse_module(text)
        except (cst.ParserSyntaxError, RecursionError):
            return None
        return cls(path, text, MetadataWrapper(module, unsafe_skip_copy=True))

    @property
    def module(self) -> cst.Module:
        return self.wrapper.module

    @cached_property
    def positions(self) -> dict[cst.CSTNode, CodeRange]:
        return dict(self.wrapper.resolve(PositionProvider))

    @cached_property
    def scopes(self) -> dict[cst.CSTNode, object]:
        return dict(self.wrapper.resolve(ScopeProvider))

    def starts_at(self, node: cst.CSTNode, span: Span) -> bool:
        """Whether ``node`` starts where ``span`` does."""
        where = self.positions.get(node)
        return where is not None and (where.start.line, where.start.column + 1) == (
            span.line, span.column)

    def within(self, node: cst.CSTNode, span: Span) -> bool:
        """Whether ``node`` lies inside ``span`` (a span without an end: on its first line)."""
        where = self.positions.get(node)
        if where is None:
            return False
        end = (span.end_line or span.line, span.end_column or 10**9)
        return (span.line, span.column) <= (where.start.line, where.start.column + 1) and (
            where.end.line, where.end.column + 1) <= end

    def nodes(self, kind: type[cst.CSTNode] | tuple[type[cst.CSTNode], ...]) -> Iterator[cst.CSTNode]:
        """Every node of ``kind``, in source order."""
        ordered = sorted(self.positions.items(),
                         key=lambda item: (item[1].start.line, item[1].start.column))
        return (node for node, _ in ordered if isinstance(node, kind))

    def at(self, span: Span, kind: type[cst.CSTNode] | tuple[type[cst.CSTNode], ...]
           ) -> cst.CSTNode | None:
        """The outermost node of ``kind`` that starts where ``span`` does."""
        return next((n for n in self.nodes(kind) if self.starts_at(n, span)), None)

    def statement_on(self, line: int) -> cst.BaseSmallStatement | None:
        """The first small statement (an assignment, an expression ...) starting on ``line``."""
        return next((n for n in self.nodes(cst.BaseSmallStatement)  # type: ignore[misc]
                     if self.positions[n].start.line == line), None)

    def code(self, node: cst.CSTNode) -> str:
        """The source text of ``node`` as written."""
        return self.module.code_for_node(node)

    def edit(self, replacements: dict[cst.CSTNode, cst.CSTNode | cst.RemovalSentinel]
             ) -> tuple[Edit, ...]:
        """The edit that replaces each node of ``replacements`` by its new node (or removes
        it), everything else kept byte for byte."""
        new = self.module.visit(_Replace(replacements))
        return edit_between(self.path, self.text, new.code)

    def visible(self, name: str, at: cst.CSTNode, same_as: cst.CSTNode) -> bool:
        """Whether ``name`` read at ``at`` is bound by the same assignments as at ``same_as``
        (a name the code already has, meaning there what it means where it was found)."""
        here, there = self.scopes.get(at), self.scopes.get(same_as)
        if here is None or there is None or name not in here or name not in there:  # type: ignore
            return False
        bound_here = {a.node for a in here[name]}  # type: ignore[index]
        bound_there = {a.node for a in there[name]}  # type: ignore[index]
        return bool(bound_here) and bound_here == bound_there


class _Replace(cst.CSTTransformer):
    """Replaces nodes by identity (the parsed tree's own nodes)."""

    def __init__(self, replacements: dict[cst.CSTNode, cst.CSTNode | cst.RemovalSentinel]) -> None:
        super().__init__()
        self.replacements = replacements

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode
                 ) -> cst.CSTNode | cst.RemovalSentinel:
        return self.replacements.get(original_node, updated_node)


#: The most characters of code a fix's message quotes.
QUOTED_CHARS = 60


def short(code: str) -> str:
    """``code`` on one line, cut to ``QUOTED_CHARS`` with ``…`` (a message quotes the user's
    code, which may be long)."""
    text = " ".join(code.split())
    return text if len(text) <= QUOTED_CHARS else text[: QUOTED_CHARS - 1] + "…"


def dotted(node: cst.CSTNode) -> str | None:
    """``a.b.c`` for a name or a chain of attributes on a name (no parentheses), else None."""
    if getattr(node, "lpar", None):
        return None
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        base = dotted(node.value)
        return None if base is None else f"{base}.{node.attr.value}"
    return None


def head(node: cst.CSTNode) -> cst.Name | None:
    """The name a dotted chain starts with (``args`` of ``args.batch_size``)."""
    while isinstance(node, cst.Attribute):
        node = node.value
    return node if isinstance(node, cst.Name) else None


def assigned_name(parsed: ParsedFile, line: int, value: float | None = None,
                  literal: bool = False) -> cst.Name | None:
    """The plain name the statement on ``line`` assigns ``value`` to (``BATCH = 256``,
    ``q: float = B / N``; in an unpacking of literals, ``N, DIM = 20_000, 30``, the one name
    assigned ``value``). A number literal assigned must be ``value``; with ``literal`` (the
    value was read as a literal written on that line) only a number literal qualifies: a name
    assigned an expression holds that expression's value, not the literal inside it
    (``LOT_RATE = 250 / 60_000`` does not hold 250). None for anything else."""
    statement = parsed.statement_on(line)
    if isinstance(statement, cst.Assign) and len(statement.targets) == 1:
        target, assigned = statement.targets[0].target, statement.value
    elif isinstance(statement, cst.AnnAssign) and statement.value is not None:
        target, assigned = statement.target, statement.value
    else:
        return None
    pairs = [(target, assigned)]
    if isinstance(target, cst.Tuple) and isinstance(assigned, cst.Tuple) \
            and len(target.elements) == len(assigned.elements):
        pairs = [(t.value, v.value) for t, v in zip(target.elements, assigned.elements)]
    named = [name for name, held in pairs if isinstance(name, cst.Name)
             and _holds(held, value, literal, alone=len(pairs) == 1)]
    return named[0] if len(named) == 1 else None  # type: ignore[return-value]


def _holds(held: cst.BaseExpression, value: float | None, literal: bool, alone: bool) -> bool:
    """Whether a name assigned ``held`` holds ``value``: a number literal must be it; another
    expression may be, when the value was not read as a literal and the name is the
    statement's only target."""
    number = _number(held)
    if number is not None:
        return value is None or number == value
    return alone and not literal


def _number(node: cst.BaseExpression) -> float | None:
    """The value of a number literal (``20_000``, ``1e-5``, ``-3``), else None."""
    sign = 1
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        sign, node = -1, node.expression
    if isinstance(node, (cst.Integer, cst.Float)):
        return sign * float(node.evaluated_value)
    return None


def expression(text: str, like: cst.BaseExpression) -> cst.BaseExpression:
    """``text`` parsed as an expression to stand where ``like`` stands: a name stands bare
    (``x / (len(xb))`` becomes ``x / BATCH``), a compound expression in parentheses, ``like``'s
    own when it had them (``x / (q * N)``)."""
    new = cst.parse_expression(text)
    if isinstance(new, (cst.Name, cst.Attribute, cst.Integer, cst.Float)):
        return new
    if like.lpar:
        return new.with_changes(lpar=like.lpar, rpar=like.rpar)
    return new.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def keyword_argument(call: cst.Call, names: Sequence[str]) -> cst.Arg | None:
    """The argument of ``call`` passed by one of the keywords ``names``."""
    return next((a for a in call.args if a.keyword is not None and a.keyword.value in names),
                None)


def positional_argument(call: cst.Call, position: int) -> cst.Arg | None:
    """The ``position``-th positional argument (0-based) of ``call``, if it is given plainly
    (no ``*args`` before it)."""
    count = 0
    for arg in call.args:
        if arg.keyword is not None:
            continue
        if arg.star or position < 0:
            return None
        if count == position:
            return arg
        count += 1
    return None


def without_argument(call: cst.Call, argument: cst.Arg) -> cst.Call:
    """``call`` without ``argument``. The argument before it ends the way the removed one
    ended: its own comma and comment kept, the layout up to the next token taken over (the
    closing parenthesis stays on its line, the trailing comma stays or stays away); a comment
    on the removed argument's line goes with it."""
    args = list(call.args)
    index = args.index(argument)
    if index > 0:
        before = args[index - 1]
        if not isinstance(argument.comma, cst.Comma):
            before = before.with_changes(comma=argument.comma,
                                         whitespace_after_arg=argument.whitespace_after_arg)
        elif isinstance(before.comma, cst.Comma) and isinstance(
                before.comma.whitespace_after, cst.ParenthesizedWhitespace) and isinstance(
                argument.comma.whitespace_after, cst.ParenthesizedWhitespace):
            layout = argument.comma.whitespace_after
            before = before.with_changes(comma=before.comma.with_changes(
                whitespace_after=before.comma.whitespace_after.with_changes(
                    empty_lines=layout.empty_lines, indent=layout.indent,
                    last_line=layout.last_line)))
        else:
            before = before.with_changes(comma=argument.comma)
        args[index - 1] = before
    del args[index]
    return call.with_changes(args=args)


def callee_last(call: cst.Call) -> str | None:
    """The last name of what ``call`` calls (``compute_rdp`` of ``rdp.compute_rdp(...)``)."""
    func = call.func
    if isinstance(func, cst.Attribute):
        return func.attr.value
    return func.value if isinstance(func, cst.Name) else None
