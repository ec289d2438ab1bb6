"""Configuration files the project's code loads by a known path, read as values.

A configuration file is a hyper-parameter source like an argparse default. ``cfg =
yaml.safe_load(open(args.config))`` with ``--config`` defaulting to ``configs/mnist.yaml`` loads
that file under the default configuration, so ``cfg["train"]["epochs"]`` is the number written
there. The loaders are vocabularies (``json_loaders``, ``yaml_loaders``, ``toml_loaders`` of
``dpcheck/data/vocabulary.toml``, by import-qualified name); the loaded text comes from a file
opened or read by a ``file_reads`` call (``open(path)``, ``f.read()`` of a name bound by ``with
open(path) as f``, ``Path(path).read_text()``), and the path is a constant under the default
configuration (a literal, a constant, an option default; ``os.path.join`` / ``Path`` joins and
``/`` of such parts), relative to the project root or to the folder of the script that reads it.

The file is read as data, never imported or executed, and only when it is a project file
(``Project.data_file``: inside the root, a regular file). Its data becomes a dict (list) display
whose items are read at the line of the file they were written at (YAML and JSON: each key's
line; TOML: the file's first line), so a parameter's span points into the configuration file.
A missing, unreadable or unparsable file, a path outside the project, or two readings of the
path (root- and script-relative) that hold different data leave the value unknown.
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import yaml

from dpcheck.pipelines.questions import frozen
from dpcheck.pipelines.scope import Ctx
from dpcheck.pipelines.vocabulary import calls_in
from dpcheck.sites.nodes import (
    Attr,
    BinOp,
    Call,
    Const,
    DictDisplay,
    Name,
    Node,
    Num,
    ReadAt,
    Seq,
    Str,
    node,
)
from dpcheck.toml import tomllib

if TYPE_CHECKING:
    from dpcheck.pipelines.values import Evaluator

#: The scope a configuration file's data is read in (its path is the file's, relative to the
#: project root): no Python scope has this name. A file's data lists every key it has, where a
#: dict display in code may hide ``**`` entries, so only there does a missing key decide
#: ``.get(key, default)``.
CONFIG_SCOPE = "<config>"
#: A configuration file is small: a larger JSON/YAML file is data, not settings, and is not read.
MAX_CONFIG_BYTES = 1 << 20
#: At most this many values are made of one file's data, nested at most this deep.
MAX_NODES = 20_000
MAX_DEPTH = 32
#: The safe YAML loader (plain data only), libyaml's when it is built.
_SAFE = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
Lines = dict[tuple[Any, ...], int]


class _TooLarge(Exception):
    """The data has more than ``MAX_NODES`` values or nests deeper than ``MAX_DEPTH``."""


@dataclass
class _Budget:
    """How many more values may be made of one file's data."""

    left: int


def loaded_config(evaluator: Evaluator, call: Call, ctx: Ctx) -> tuple[Node, Ctx] | None:
    """The data the loader call ``call`` (read at ``ctx``) returns under the default
    configuration, as a display node and where to read it; None when ``call`` is no loader of a
    configuration file or the file is not decided (module docstring)."""
    index = evaluator.index
    group = next((group for group in _PARSERS if calls_in(group, call, ctx, index)), None)
    given = call.argument(0)
    path = _opened_path(evaluator, given, ctx) if group is not None and given is not None \
        else None
    if group is None or path is None:
        return None
    readings: dict[str, tuple[Any, Lines]] = {}
    for rel in _candidates(path, ctx.path):
        raw = index.project.data_file(rel)
        parsed = _parsed(group, raw) if raw is not None and len(raw) <= MAX_CONFIG_BYTES \
            else None
        if parsed is not None:
            readings[rel] = parsed
    if not readings:
        return None
    rel, (data, lines) = next(iter(readings.items()))
    if any(other != data for other, _ in readings.values()):  # root- and script-relative
        return None
    try:
        return _display(data, (), lines, rel, _Budget(MAX_NODES)), Ctx(rel, CONFIG_SCOPE, 1)
    except _TooLarge:
        return None


def _opened_path(evaluator: Evaluator, expr: Node, ctx: Ctx) -> str | None:
    """The path of the file ``expr`` opens or reads the text of: ``open(p)``, ``Path(p)``, a
    read method called on one, a name bound to one (``with open(p) as f``); a name followed is a
    question of the memo and cycle guard (``dpcheck.pipelines.questions``)."""
    if isinstance(expr, Name) and (binding := evaluator.index.attribute(expr.dotted, ctx)):
        assigned = binding.assigned()
        if assigned is None:
            return None
        bound, where = assigned
        key = ("opened-path", frozen(expr), ctx, evaluator.index.reach)
        return evaluator.index.questions.ask(
            key, lambda: _opened_path(evaluator, node(bound), where), None)
    if not isinstance(expr, Call) or not calls_in("file_reads", expr, ctx, evaluator.index):
        return None
    callee = expr.callee
    bound = evaluator.index.bind(callee.base, ctx) \
        if isinstance(callee, Name) and callee.base else None
    receiver = callee.base if isinstance(callee, Attr) else Name(["r", callee.base]) \
        if bound is not None and bound.kind != "module" else None
    if receiver is not None:  # ``f.read()``, ``Path(p).read_text()``: the file it is called on
        return _opened_path(evaluator, receiver, ctx)
    opened = expr.argument(0)
    return _path(evaluator, opened, ctx) if opened is not None else None


def _path(evaluator: Evaluator, expr: Node, ctx: Ctx) -> str | None:
    """The path ``expr`` holds under the default configuration: a constant string (names read
    by ``Evaluator.literal``, under its guard), or a join of constant parts (``os.path.join``,
    ``Path(a, b)``, ``Path(a) / b``)."""
    if isinstance(expr, BinOp) and expr.op == "/":
        parts = [_path(evaluator, part, ctx) for part in (expr.left, expr.right)]
    elif isinstance(expr, Call) and expr.args and not expr.kwargs \
            and calls_in("path_joins", expr, ctx, evaluator.index):
        parts = [_path(evaluator, part, ctx) for part in expr.args]
    else:
        found = evaluator.literal(expr, ctx)
        return found.value if found is not None and isinstance(found.value, str) else None
    known = [part for part in parts if part]
    return posixpath.join(*known) if known and len(known) == len(parts) else None


def _candidates(path: str, script: str) -> list[str]:
    """The project-relative files a relative ``path`` may name: from the project root (where a
    script is usually run) and from the folder of the ``script`` that reads it; a path that
    leaves the project, or an absolute one, names none."""
    if posixpath.isabs(path) or path.startswith("~"):
        return []
    found: list[str] = []
    for base in ("", posixpath.dirname(script)):
        rel = posixpath.normpath(posixpath.join(base, path))
        if rel != ".." and not rel.startswith("../") and rel not in found:
            found.append(rel)
    return found


@lru_cache(maxsize=32)
def _parsed(group: str, raw: bytes) -> tuple[Any, Lines] | None:
    """The data and key lines of a file's bytes read by a loader of ``group`` (parsed once per
    content); None when it is not text or not parsable."""
    try:
        return _PARSERS[group](raw.decode("utf-8-sig"))
    except (ValueError, yaml.YAMLError, RecursionError, _TooLarge):  # UnicodeError, JSON, TOML
        return None


def _yaml(text: str) -> tuple[Any, Lines]:
    """YAML data (``yaml.safe_load``: plain data only, no tags that build objects) and the line
    each key path is written at (from the same document's node tree)."""
    data = yaml.load(text, Loader=_SAFE)  # noqa: S506 - the safe loader (C or pure Python)
    lines: Lines = {}
    _node_lines(yaml.compose(text, Loader=_SAFE), (), lines)
    return data, lines


def _node_lines(tree: yaml.Node | None, at: tuple[Any, ...], lines: Lines) -> None:
    """Record the 1-based line of every mapping value and sequence item of ``tree`` (at most
    ``MAX_NODES``: aliases can make a small file expand without end)."""
    if len(lines) > MAX_NODES or len(at) > MAX_DEPTH:
        raise _TooLarge
    if isinstance(tree, yaml.MappingNode):
        for key, value in tree.value:
            if isinstance(key, yaml.ScalarNode):
                where = (*at, key.value)
                lines[where] = key.start_mark.line + 1
                _node_lines(value, where, lines)
    elif isinstance(tree, yaml.SequenceNode):
        for position, item in enumerate(tree.value):
            lines[(*at, position)] = item.start_mark.line + 1
            _node_lines(item, (*at, position), lines)


def _json(text: str) -> tuple[Any, Lines]:
    """JSON data and the line of each key path (read through YAML, whose flow syntax JSON is;
    a file YAML cannot read keeps its data, lines falling back to the file's first)."""
    data = json.loads(text)
    lines: Lines = {}
    try:
        _node_lines(yaml.compose(text, Loader=_SAFE), (), lines)
    except yaml.YAMLError:
        lines = {}
    return data, lines


def _toml(text: str) -> tuple[Any, Lines]:
    """TOML data; keys are placed at the file's first line."""
    return tomllib.loads(text), {}


_PARSERS: dict[str, Callable[[str], tuple[Any, Lines]]] = {
    "json_loaders": _json, "yaml_loaders": _yaml, "toml_loaders": _toml,
}


def _display(data: Any, at: tuple[Any, ...], lines: Lines, rel: str, budget: _Budget) -> Node:
    """``data`` as an expression node: dicts and lists as displays whose items are read at
    their line (``ReadAt``), scalars as literals (anything else, a date, as its text). ``budget``
    counts the values left: YAML aliases can make a small file expand without end."""
    budget.left -= 1
    if budget.left < 0 or len(at) > MAX_DEPTH:
        raise _TooLarge
    if isinstance(data, dict):
        return DictDisplay(["d", [[_scalar(key), _placed(value, (*at, key), lines, rel, budget)]
                                  for key, value in data.items()]])
    if isinstance(data, list):
        return Seq(["t", [_placed(item, (*at, position), lines, rel, budget)
                          for position, item in enumerate(data)]])
    return _scalar(data)


def _placed(data: Any, at: tuple[Any, ...], lines: Lines, rel: str, budget: _Budget) -> Node:
    return ReadAt([ReadAt.TAG, rel, CONFIG_SCOPE, lines.get(_text_keys(at), 1),
                   _display(data, at, lines, rel, budget)])


def _text_keys(at: tuple[Any, ...]) -> tuple[Any, ...]:
    """A key path as the node tree spells it (mapping keys are their source text)."""
    return tuple(key if isinstance(key, (int, str)) and not isinstance(key, bool) else str(key)
                 for key in at)


def _scalar(value: Any) -> Node:
    if isinstance(value, bool) or value is None:
        return Const(["c", value])
    if isinstance(value, (int, float)):
        return Num(["n", value])
    if isinstance(value, str):
        return Str(["s", value])
    return Str(["s", str(value)])
