"""The conditions DP code runs under (``dpcheck.pipelines.guards``): the ``if`` tests around it,
carried up to the callers' names for a guarded parameter, and used when a helper's arm is chosen
by the same flag."""

from __future__ import annotations

from pathlib import Path

from dpcheck.pipelines.guards import guards
from dpcheck.pipelines.index import ProjectIndex
from dpcheck.pipelines.scope import Ctx
from tests.pipelines.builder import make_project

TRAIN = '''
import argparse


def fit(model, private, frozen=False):
    if not frozen:
        if private:
            model.engine_call()
    return model


def outer(model, use):
    return fit(model, use)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dp", type=int, default=0)
    args = parser.parse_args()
    flag = args.dp
    outer(None, flag)
    fit(None, args.dp)
'''


def _guards(tmp_path: Path, text: str) -> dict[tuple[str, str, str], bool]:
    project = make_project(tmp_path, {"train.py": text})
    index = ProjectIndex(project)
    line = next(i for i, row in enumerate(text.lstrip("\n").splitlines(), 1) if "engine_call" in row)
    return guards(index, Ctx("train.py", "fit", line))


def test_guards_and_the_callers_names_that_carry_them(tmp_path: Path) -> None:
    found = _guards(tmp_path, TRAIN)
    assert found == {
        ("train.py", "fit", "private"): True,
        ("train.py", "fit", "frozen"): False,
        ("train.py", "outer", "use"): True,
        ("train.py", "main", "flag"): True,
        ("train.py", "main", "args.dp"): True,
    }


def test_a_name_reassigned_in_place_is_not_assumed(tmp_path: Path) -> None:
    text = TRAIN.replace("    flag = args.dp\n", "    flag = args.dp\n    flag += 1\n")
    found = _guards(tmp_path, text)
    assert ("train.py", "main", "flag") not in found
    assert found[("train.py", "main", "args.dp")] is True


def test_code_outside_any_if_has_no_guards(tmp_path: Path) -> None:
    text = TRAIN.replace("    if not frozen:\n        if private:\n            model.engine_call()",
                         "    model.engine_call()")
    assert _guards(tmp_path, text) == {}
