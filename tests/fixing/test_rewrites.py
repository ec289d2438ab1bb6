"""The rewrites fixes make, on real text: a requirement pinned in each dependency file's own
syntax with nothing else changed, an argument dropped from a call with the call's layout kept,
and the smallest edit between two texts."""

from __future__ import annotations

import libcst as cst
import pytest

from dpcheck.discover.pins import pins_of
from dpcheck.discover.requirement import Source
from dpcheck.rules.fixes.fix import apply_edits, edit_between
from dpcheck.rules.fixes.requirements import (
    pinned_line,
    pinned_requirement,
    pinned_setup_py,
    pinned_toml,
)
from dpcheck.rules.fixes.syntax import without_argument


@pytest.mark.parametrize(("line", "pinned"), [
    ("opacus", "opacus==1.4.0"),
    ("opacus>=1.0,<2  # dp\n", "opacus==1.4.0  # dp\n"),
    ("Opacus[extra] >= 1.0 ; python_version > '3.8'\n",
     "Opacus[extra]==1.4.0 ; python_version > '3.8'\n"),
    ("    opacus~=1.4 --hash=sha256:00ff\n", "    opacus==1.4.0 --hash=sha256:00ff\n"),
    ("  - conda-forge::opacus=1.4\n", "  - conda-forge::opacus==1.4.0\n"),
    ("install_requires = opacus\n", "install_requires = opacus==1.4.0\n"),
    ("\topacus\r\n", "\topacus==1.4.0\r\n"),
])
def test_a_requirement_is_pinned_in_place(line: str, pinned: str) -> None:
    assert pinned_requirement(line, "opacus", "1.4.0") == pinned


@pytest.mark.parametrize("line", [
    "opacus @ git+https://github.com/pytorch/opacus.git@abc123\n",  # a commit, not a release
    "torch-opacus>=1\n",  # another project whose name ends like it
    "opacus-lite==0.1\n",
])
def test_no_pin_where_there_is_no_release_requirement_of_the_library(line: str) -> None:
    assert pinned_requirement(line, "opacus", "1.4.0") is None


def test_a_pin_is_the_pin_the_dependency_reader_then_reads(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """What the fix writes reads back, with dpcheck's own reader, as exactly that release."""
    text = "torch==2.2.0\nopacus>=1.0  # engine\n"
    new = pinned_line(text, 2, "opacus", "1.4.0")
    assert new == "torch==2.2.0\nopacus==1.4.0  # engine\n"
    [pin] = pins_of(Source(tmp_path, tmp_path / "requirements.txt", new)).pins
    assert (pin.library, pin.version) == ("opacus", "1.4.0")


def test_a_continued_requirements_line_is_left_alone() -> None:
    assert pinned_line("opacus \\\n  >=1.0\n", 1, "opacus", "1.4.0") is None


PYPROJECT = """\
[project]
name = "demo"   # the name
dependencies = [
    "torch>=2.0",  # the model
    'opacus',
]

[tool.poetry.dependencies]
python = "^3.10"
opacus = { version = "^1.0", optional = true }
"""


def test_pyproject_pins_only_the_entry_on_the_finding_line() -> None:
    pep621 = pinned_toml(PYPROJECT, 5, "opacus", "1.4.0", pipfile=False)
    assert pep621 == PYPROJECT.replace("'opacus',", "'opacus==1.4.0',")
    poetry = pinned_toml(PYPROJECT, 10, "opacus", "1.4.0", pipfile=False)
    assert poetry == PYPROJECT.replace('version = "^1.0"', 'version = "1.4.0"')
    assert pinned_toml(PYPROJECT, 4, "opacus", "1.4.0", pipfile=False) is None


def test_pipfile_pins_with_its_own_operator() -> None:
    text = "[packages]\nopacus = \"*\"\ntorch = \"*\"\n\n[dev-packages]\npytest = \"*\"\n"
    assert pinned_toml(text, 2, "opacus", "1.4.0", pipfile=True) == text.replace(
        'opacus = "*"', 'opacus = "==1.4.0"')


def test_setup_py_pins_the_literal_in_its_own_quotes() -> None:
    text = ("from setuptools import setup\n\nsetup(\n    name='x',\n"
            "    install_requires=['torch', r'opacus>=1.0',  # dp\n    ],\n)\n")
    assert pinned_setup_py(text, 5, "opacus", "1.4.0") == text.replace(
        "r'opacus>=1.0'", "r'opacus==1.4.0'")
    assert pinned_setup_py(text, 4, "opacus", "1.4.0") is None


@pytest.mark.parametrize(("call", "left"), [
    ("f(a, b=False)", "f(a)"),
    ("f(a, b=False,)", "f(a,)"),
    ("f(b=False)", "f()"),
    ("f(b=False, c=2)", "f(c=2)"),
    ("f(\n    a,\n    b=False\n)", "f(\n    a\n)"),
    ("f(\n    a,  # keep\n    b=False,  # drop\n)", "f(\n    a,  # keep\n)"),
    ("f(\n    b=False,\n    c=2,\n)", "f(\n    c=2,\n)"),
])
def test_dropping_an_argument_keeps_the_call_layout(call: str, left: str) -> None:
    module = cst.parse_module(call + "\n")
    expression = module.body[0].body[0]  # type: ignore[attr-defined]
    node = expression.value
    argument = next(a for a in node.args if a.keyword and a.keyword.value == "b")
    new = module.deep_replace(node, without_argument(node, argument))
    assert new.code == left + "\n"  # type: ignore[union-attr]


def test_the_edit_between_two_texts_is_the_smallest_and_applies_back() -> None:
    old = "a = 1\r\n\tb = len(x)  # c\r\n"
    new = "a = 1\r\n\tb = BATCH  # c\r\n"
    [edit] = edit_between("f.py", old, new)
    assert (edit.span.line, edit.span.column, edit.span.end_line, edit.span.end_column) == (
        2, 6, 2, 12)
    assert (old[edit.start:edit.end], edit.content) == ("len(x)", "BATCH")
    assert apply_edits(old, [edit]) == new
    assert edit_between("f.py", old, old) == ()
