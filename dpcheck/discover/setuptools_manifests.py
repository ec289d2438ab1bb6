"""setuptools dependency files: ``setup.py`` (read with libcst, never run) and ``setup.cfg``.

In setup.py the ``install_requires`` and ``extras_require`` keywords of a ``setup(...)`` call are
read when they are literal: lists, tuples, dicts of lists, string concatenations with ``+``, and
module-level constants referenced by name. Anything computed (a file read, a comprehension) is
valid setuptools input that dpcheck does not run: it is no problem, but an ``Unread`` entry, told
to the user where a DP library's version is then undecided (pins hidden there cannot be known
statically).
"""

from __future__ import annotations

import configparser

import libcst as cst
import libcst.matchers as m
from libcst.metadata import PositionProvider

from dpcheck.discover.requirement import PinsResult, Source, Unread, combine, requirement_pins

_SETUP_KEYWORDS = ("install_requires", "extras_require")
_SETUP_CALL = m.Call(func=m.Name("setup") | m.Attribute(attr=m.Name("setup")))


class _NotLiteral(Exception):
    """An expression that cannot be read statically as requirement strings."""

    def __init__(self, node: cst.CSTNode) -> None:
        super().__init__()
        self.node = node


def read_setup_py(source: Source) -> PinsResult:
    """Pins of the literal requirement lists of every ``setup(...)`` call in a setup.py."""
    try:
        wrapper = cst.MetadataWrapper(cst.parse_module(source.text))
    except cst.ParserSyntaxError as exc:
        return source.problem(f"not valid Python: {exc.message}", exc.raw_line)
    positions = wrapper.resolve(PositionProvider)
    constants = _module_constants(wrapper.module)
    results: list[PinsResult] = []
    for call in m.findall(wrapper.module, _SETUP_CALL):
        assert isinstance(call, cst.Call)
        for arg in call.args:
            if arg.keyword is None or arg.keyword.value not in _SETUP_KEYWORDS:
                continue
            try:
                strings = _requirement_strings(arg.value, constants, frozenset())
            except _NotLiteral as exc:
                line = positions[exc.node].start.line
                what = f"{arg.keyword.value} is computed (dpcheck reads setup.py, never runs it)"
                results.append(PinsResult(unread=(Unread(source.span(line), what),)))
                continue
            results.extend(
                requirement_pins(str(node.evaluated_value), source, positions[node].start.line)
                for node in strings
            )
    return combine(results)


def read_setup_cfg(source: Source) -> PinsResult:
    """Pins of ``[options] install_requires`` and every ``[options.extras_require]`` entry."""
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(source.text, source=source.display)
    except configparser.Error as exc:
        return source.problem(f"invalid setup.cfg: {exc.message}")
    results: list[PinsResult] = []
    if parser.has_option("options", "install_requires"):
        results.append(_cfg_list(parser["options"]["install_requires"], source, "[options]"))
    if parser.has_section("options.extras_require"):
        results.extend(
            _cfg_list(value, source, "[options.extras_require]")
            for value in parser["options.extras_require"].values()
        )
    return combine(results)


def _cfg_list(value: str, source: Source, header: str) -> PinsResult:
    """A setuptools list option: one item per line, or ``;``-separated on a single line."""
    items = value.splitlines() if "\n" in value.strip() else value.split(";")
    return combine(
        requirement_pins(item, source, source.find_line(header, lambda line, i=item: i in line))
        for item in (raw.strip() for raw in items)
        if item
    )


def _module_constants(module: cst.Module) -> dict[str, cst.BaseExpression]:
    """Module-level ``NAME = value`` (and annotated) assignments; the last one wins."""
    constants: dict[str, cst.BaseExpression] = {}
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.Assign) and len(small.targets) == 1:
                target, value = small.targets[0].target, small.value
            elif isinstance(small, cst.AnnAssign) and small.value is not None:
                target, value = small.target, small.value
            else:
                continue
            if isinstance(target, cst.Name):
                constants[target.value] = value
    return constants


def _requirement_strings(
    node: cst.BaseExpression, constants: dict[str, cst.BaseExpression], seen: frozenset[str]
) -> list[cst.SimpleString | cst.ConcatenatedString]:
    """The string literals an expression is made of; raises ``_NotLiteral`` at the first part
    that is not literal. ``seen`` guards against constants referring to each other in a cycle."""
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
        if isinstance(node.evaluated_value, str):
            return [node]
    elif isinstance(node, (cst.List, cst.Tuple, cst.Set, cst.Dict)):
        return [s for e in node.elements for s in _requirement_strings(e.value, constants, seen)]
    elif isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add):
        return _requirement_strings(node.left, constants, seen) + _requirement_strings(
            node.right, constants, seen
        )
    elif isinstance(node, cst.Name) and node.value in constants and node.value not in seen:
        return _requirement_strings(constants[node.value], constants, seen | {node.value})
    raise _NotLiteral(node)
