"""setuptools dependency files: ``setup.py`` (parsed with CPython's ``ast``, never run) and
``setup.cfg``.

In setup.py the ``install_requires`` and ``extras_require`` keywords of a ``setup(...)`` call are
read when they are literal: lists, tuples, dicts of lists, string concatenations with ``+``, and
module-level constants referenced by name. Anything computed (a file read, a comprehension) is
valid setuptools input that dpcheck does not run: it is no problem, but an ``Unread`` entry, told
to the user where a DP library's version is then undecided (pins hidden there cannot be known
statically).
"""

from __future__ import annotations

import ast
import configparser
import warnings

from dpcheck.discover.requirement import PinsResult, Source, Unread, combine, requirement_pins

_SETUP_KEYWORDS = ("install_requires", "extras_require")


class _NotLiteral(Exception):
    """An expression that cannot be read statically as requirement strings."""

    def __init__(self, node: ast.expr) -> None:
        super().__init__()
        self.node = node


def _is_setup_call(node: ast.AST) -> bool:
    """``setup(...)`` or ``<anything>.setup(...)``."""
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    return (isinstance(func, ast.Name) and func.id == "setup") or (
        isinstance(func, ast.Attribute) and func.attr == "setup"
    )


def read_setup_py(source: Source) -> PinsResult:
    """Pins of the literal requirement lists of every ``setup(...)`` call in a setup.py."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escapes in a project's file are its own business
            module = ast.parse(source.text, filename=f"<{source.display}>")
    except (SyntaxError, ValueError) as exc:
        line = getattr(exc, "lineno", None)
        return source.problem(f"not valid Python: {getattr(exc, 'msg', exc)}", line)
    constants = _module_constants(module)
    calls = sorted((n for n in ast.walk(module) if _is_setup_call(n)),
                   key=lambda n: (n.lineno, n.col_offset))
    results: list[PinsResult] = []
    for call in calls:
        assert isinstance(call, ast.Call)
        for keyword in call.keywords:
            if keyword.arg not in _SETUP_KEYWORDS:
                continue
            try:
                strings = _requirement_strings(keyword.value, constants, frozenset())
            except _NotLiteral as exc:
                what = f"{keyword.arg} is computed (dpcheck reads setup.py, never runs it)"
                results.append(PinsResult(unread=(Unread(source.span(exc.node.lineno), what),)))
                continue
            results.extend(requirement_pins(str(node.value), source, node.lineno) for node in strings)
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


def _module_constants(module: ast.Module) -> dict[str, ast.expr]:
    """Module-level ``NAME = value`` (and annotated) assignments; the last one wins."""
    constants: dict[str, ast.expr] = {}
    for statement in module.body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            target, value = statement.targets[0], statement.value
        elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
            target, value = statement.target, statement.value
        else:
            continue
        if isinstance(target, ast.Name):
            constants[target.id] = value
    return constants


def _requirement_strings(
    node: ast.expr, constants: dict[str, ast.expr], seen: frozenset[str]
) -> list[ast.Constant]:
    """The string literals an expression is made of; raises ``_NotLiteral`` at the first part
    that is not literal. ``seen`` guards against constants referring to each other in a cycle."""
    if isinstance(node, ast.Constant):
        if isinstance(node.value, str):
            return [node]
    elif isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return [s for e in node.elts for s in _requirement_strings(e, constants, seen)]
    elif isinstance(node, ast.Dict):
        return [s for v in node.values for s in _requirement_strings(v, constants, seen)]
    elif isinstance(node, ast.Starred):
        return _requirement_strings(node.value, constants, seen)
    elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _requirement_strings(node.left, constants, seen) + _requirement_strings(
            node.right, constants, seen
        )
    elif isinstance(node, ast.Name) and node.id in constants and node.id not in seen:
        return _requirement_strings(constants[node.id], constants, seen | {node.id})
    raise _NotLiteral(node)
