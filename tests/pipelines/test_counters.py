"""Values that are counters (``steps += 1``) are not static: their start value is not the value."""

from __future__ import annotations

from pathlib import Path

from dpcheck.pipelines.index import ProjectIndex
from dpcheck.pipelines.scope import Ctx
from dpcheck.pipelines.values import Evaluator
from tests.pipelines.builder import make_project

SOURCE = '''
class Engine:
    def __init__(self):
        self.steps = 0
        self.rate = 0.01

    def step(self):
        self.steps += 1


def train(budget):
    t = 1
    fixed = 1
    while t < budget:
        t += 1
    print(t, fixed)
'''


def test_counters_are_unresolved_and_constants_are_not(tmp_path: Path) -> None:
    index = ProjectIndex(make_project(tmp_path, {"m.py": SOURCE}))
    evaluator = Evaluator(index)
    at_print = Ctx("m.py", "train", 16)
    assert evaluator.value(["r", "t"], at_print) is None
    assert evaluator.value(["r", "fixed"], at_print).value == 1
    in_step = Ctx("m.py", "Engine.step", 9)
    assert evaluator.value(["r", "self.steps"], in_step) is None
    assert evaluator.value(["r", "self.rate"], in_step).value == 0.01
