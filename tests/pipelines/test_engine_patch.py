"""Methods an engine installs on the optimizer at run time (``types.MethodType``), on real
parsed projects: what the installed function reaches through its first parameter."""

from __future__ import annotations

from pathlib import Path

from dpcheck.pipelines.engine_patch import patched_callees
from dpcheck.pipelines.index import ProjectIndex
from dpcheck.pipelines.scope import Ctx
from tests.pipelines.builder import make_project

ENGINE = '''
import types


class Accountant:
    def spent(self):
        return 0.0


class Engine:
    def __init__(self):
        self.steps = 0
        self.rounds = 0
        self.accountant = Accountant()

    def attach(self, optimizer):
        def dp_step(_self, **kwargs):
            _self.engine.noisy_step(**kwargs)
            _self.engine.steps += 1
            _self.unrelated.count += 1

        def spent(_self):
            return _self.books.spent()

        def not_bound(_self):
            _self.engine.noisy_step()

        optimizer.engine = self
        optimizer.books = self.accountant
        optimizer.step = types.MethodType(dp_step, optimizer)
        optimizer.spent = types.MethodType(spent, optimizer)

    def noisy_step(self, loss=None):
        self.rounds = self.rounds


def helper(_self):
    _self.engine.noisy_step()
'''


def _index(tmp_path: Path) -> ProjectIndex:
    return ProjectIndex(make_project(tmp_path, {"engine.py": ENGINE}))


def test_a_bound_function_reaches_the_method_of_what_its_object_holds(tmp_path: Path) -> None:
    index = _index(tmp_path)
    step = list(patched_callees(index, Ctx("engine.py", "Engine.attach.dp_step")))
    assert step == [Ctx("engine.py", "Engine.noisy_step")]
    spent = list(patched_callees(index, Ctx("engine.py", "Engine.attach.spent")))
    assert spent == [Ctx("engine.py", "Accountant.spent")]


def test_functions_never_bound_to_an_object_reach_nothing(tmp_path: Path) -> None:
    index = _index(tmp_path)
    assert list(patched_callees(index, Ctx("engine.py", "Engine.attach.not_bound"))) == []
    assert list(patched_callees(index, Ctx("engine.py", "helper"))) == []
    assert list(patched_callees(index, Ctx("engine.py", "Engine.noisy_step"))) == []

