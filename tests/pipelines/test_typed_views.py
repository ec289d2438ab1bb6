"""The pipeline analysis reads summaries and their IR through the typed views.

``dpcheck.sites.nodes`` gives every IR expression a class with named parts (``call.args``,
``binop.left``) and ``dpcheck.sites.views`` names the parts of statements, scopes and options
(``stmt.expr``, ``scope.statements``); the cache keeps its short keys and positions, analysis
code does not read them. This test parses each module of ``dpcheck/pipelines/`` (packages
included) with ``ast`` and fails on any of these reads:

* a subscript by a non-negative integer literal, ``x[0]``, ``x[3]`` (negative indices such as
  ``parts[-1]`` and slices are allowed). Whether ``x`` is an IR node or some other sequence
  cannot be told statically, so a pipelines module reads no position at all: IR parts by name,
  pairs and tuples by unpacking (``where, call = found``), a first item with ``next(iter(...))``
  or ``Call.argument(0)``;
* a string subscript ``x["k"]``, a ``x.get("k")`` or a ``"k" in x`` whose key is one of the
  summary's cache keys in ``SUMMARY_KEYS``: those only the summary uses (its abbreviations and
  its module-level tables). Keys that are ordinary words other data also uses (``line``,
  ``path``, ``params``, ``default``, ``decorators``) are left out to keep the check free of
  false alarms; their views are used all the same.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

import dpcheck.pipelines

PIPELINES = Path(dpcheck.pipelines.__file__).parent
#: Summary cache keys that no other data read in ``dpcheck/pipelines/`` uses.
SUMMARY_KEYS = frozenset({
    "k", "e", "t", "ld", "br", "src", "col", "stmts", "ifs", "argparse", "has_main", "scopes",
    "imports", "classes", "bases", "globals", "stars",
})

def positional_reads(source: str) -> Iterator[tuple[int, str]]:
    """(line, what) of each read by position or summary short key in ``source`` (the criterion
    of the module docstring)."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
            key = node.slice.value
            if isinstance(key, int) and not isinstance(key, bool) and key >= 0:
                yield node.lineno, f"[{key}]"
            elif isinstance(key, str) and key in SUMMARY_KEYS:
                yield node.lineno, f"[{key!r}]"
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr == "get" and node.args \
                and isinstance(node.args[0], ast.Constant) and node.args[0].value in SUMMARY_KEYS:
            yield node.lineno, f".get({node.args[0].value!r})"
        elif isinstance(node, ast.Compare) and isinstance(node.left, ast.Constant) \
                and node.left.value in SUMMARY_KEYS \
                and any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops):
            yield node.lineno, f"{node.left.value!r} in"


def _modules() -> list[Path]:
    return sorted(PIPELINES.rglob("*.py"))


@pytest.mark.parametrize("module", _modules(), ids=lambda p: p.relative_to(PIPELINES).as_posix())
def test_pipelines_modules_read_through_the_views(module: Path) -> None:
    found = sorted(set(positional_reads(module.read_text("utf-8"))))
    assert not found, (f"{module.name} reads the IR or the summary by position or short key "
                       f"(use dpcheck.sites.nodes / dpcheck.sites.views): {found}")


@pytest.mark.parametrize(("source", "expected"), [
    ("x = call[3]", [(1, "[3]")]),
    ("x = stmt['e']", [(1, "['e']")]),
    ("x = stmt.get('br', ())", [(1, ".get('br')")]),
    ("y = 'src' not in stmt", [(1, "'src' in")]),
    ("a = parts[-1]\nb = items[1:]\nc = row['version']\nd = flags[True]", []),
])
def test_the_criterion(source: str, expected: list[tuple[int, str]]) -> None:
    assert list(positional_reads(source)) == expected
