"""The value evaluator follows names and project helpers through the one memo and cycle guard of
``dpcheck.pipelines.questions``, not a depth counter of its own: a chain of helpers is followed as
far as it goes, and a helper or attribute that reaches itself again is left undecided (None)
instead of recursing without end."""

from __future__ import annotations

from pathlib import Path

from dpcheck.pipelines.index import ProjectIndex
from dpcheck.pipelines.scope import Ctx
from dpcheck.pipelines.values import Evaluator
from tests.pipelines.builder import make_project

SOURCE = '''
def doubled(x):
    return halved(x) * 2


def halved(x):
    return shifted(x) / 2


def shifted(x):
    return scaled(x) + 1


def scaled(x):
    return tripled(x) - 1


def tripled(x):
    return x * 3


def add_one(x):
    return x + 1


def countdown(n):
    return countdown(n - 1) + 1


class Sizes:
    def __init__(self, accum):
        self.accum = accum
        self.lot = self.micro * self.accum

    def resize(self):
        self.micro = self.lot // self.accum


def main():
    sigma = doubled(0.5)
    depth = countdown(3)
    two = add_one(add_one(0))
    print(sigma, depth, two)
'''


def test_a_chain_of_five_helpers_is_followed_to_its_end(tmp_path: Path) -> None:
    # 0.5 * 3 = 1.5; - 1 = 0.5; + 1 = 1.5; / 2 = 0.75; * 2 = 1.5 (a depth counter of 24 with
    # 6 per helper stopped after four helpers)
    index = ProjectIndex(make_project(tmp_path, {"m.py": SOURCE}))
    found = Evaluator(index).value(["r", "sigma"], Ctx("m.py", "main", 43))
    assert found is not None and found.value == 1.5


def test_a_helper_or_attribute_reaching_itself_again_is_undecided(tmp_path: Path) -> None:
    index = ProjectIndex(make_project(tmp_path, {"m.py": SOURCE}))
    evaluator = Evaluator(index)
    assert evaluator.value(["r", "depth"], Ctx("m.py", "main", 43)) is None
    assert evaluator.value(["r", "self.lot"], Ctx("m.py", "Sizes.resize", 36)) is None
    assert not index.questions.exhausted


def test_a_helper_applied_to_its_own_result_is_not_a_cycle(tmp_path: Path) -> None:
    index = ProjectIndex(make_project(tmp_path, {"m.py": SOURCE}))
    found = Evaluator(index).value(["r", "two"], Ctx("m.py", "main", 43))
    assert found is not None and found.value == 2
