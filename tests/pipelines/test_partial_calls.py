"""``functools.partial(f, a, ...)`` is a call of ``f`` with those arguments (for the callers of
``f`` and the values of its parameters); what the partial object is called with later is not
known, so the parameters it leaves open are unresolved, not their defaults."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpcheck.pipelines.index import ProjectIndex
from dpcheck.pipelines.scope import Ctx
from dpcheck.pipelines.values import Evaluator
from tests.pipelines.builder import make_project

SOURCE = '''
import functools
from functools import partial

import other


def scaled(factor, value, offset=2.0):
    print(factor, value, offset)


def fixed():
    return 1


def run(items):
    first = functools.partial(scaled, 0.5)
    second = partial(scaled, 0.5, offset=3.0)
    third = other.partial(fixed)
    return [first(i) for i in items] + [second(i) for i in items] + [third()]
'''


@pytest.fixture
def index(tmp_path: Path) -> ProjectIndex:
    files = {"m.py": SOURCE, "other.py": "def partial(f):\n    return f\n"}
    return ProjectIndex(make_project(tmp_path, files))


def test_partial_is_a_call_site_of_its_function(index: ProjectIndex) -> None:
    sites = [where.line for where, _ in index.call_sites(Ctx("m.py", "scaled"))]
    assert sites == [16, 17]
    assert list(index.call_sites(Ctx("m.py", "fixed"))) == []


def test_bound_arguments_resolve_and_open_ones_do_not_take_defaults(index: ProjectIndex) -> None:
    evaluator = Evaluator(index)
    inside = Ctx("m.py", "scaled", 8)
    factor = evaluator.value(["r", "factor"], inside)
    assert factor is not None and (factor.value, factor.line) == (0.5, 16)
    assert evaluator.value(["r", "value"], inside) is None
    assert evaluator.value(["r", "offset"], inside) is None
