"""An entry that dispatches on a configuration option (``if args.algo == "a": ... elif ...``)
is the pipeline of the branch its defaults select (DPSUR, bench/REAL_REPOS.md): the other methods'
loops and divisors are left out, with a ``dispatch`` evidence saying so. ``Evaluator.truth``
decides the tests; anything it cannot decide keeps every arm."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpcheck.pipelines.index import ProjectIndex
from dpcheck.pipelines.scope import Ctx
from dpcheck.pipelines.values import Evaluator
from tests.pipelines.builder import make_project, pipelines_of

METHODS = '''
import numpy as np
import torch

CLIP, SIGMA = 1.0, 1.2


def clipped_sum(model, x, y):
    params = list(model.parameters())
    sums = [torch.zeros_like(p) for p in params]
    for xi, yi in zip(x, y):
        model.zero_grad()
        torch.nn.functional.cross_entropy(model(xi[None]), yi[None]).backward()
        norm = sum(p.grad.norm() ** 2 for p in params) ** 0.5
        factor = min(CLIP / (norm + 1e-6), 1.0)
        for p, s in zip(params, sums):
            s.add_(p.grad * factor)
    return params, sums


def masked(model, data, labels, batch):
    for _ in range(1000):
        mask = torch.rand(len(data)) < batch / len(data)
        x, y = data[mask], labels[mask]
        params, sums = clipped_sum(model, x, y)
        with torch.no_grad():
            for p, s in zip(params, sums):
                noisy = s + CLIP * SIGMA * torch.randn_like(s)
                p -= 0.1 * noisy / len(x)


def slices(model, data, labels, batch):
    for _ in range(10):
        order = np.random.permutation(len(data))
        for start in range(0, len(data), batch):
            idx = order[start:start + batch]
            params, sums = clipped_sum(model, data[idx], labels[idx])
            with torch.no_grad():
                for p, s in zip(params, sums):
                    noisy = s + CLIP * SIGMA * torch.randn_like(s)
                    p -= 0.1 * noisy / batch
'''

MAIN = '''
import argparse

import torch

from methods import masked, slices


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--algo", {default}choices=["masked", "slices"])
    parser.add_argument("--batch", type=int, default=200)
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()
    data, labels = torch.randn(60000, 4), torch.randint(0, 2, (60000,))
    model = torch.nn.Linear(4, 2)
    if args.algo == "masked" and not args.verbose:
        masked(model, data, labels, args.batch)
    elif args.algo == "slices":
        slices(model, data, labels, args.batch)
    else:
        raise ValueError(args.algo)


if __name__ == "__main__":
    main()
'''


@pytest.mark.parametrize(
    ("default", "mechanism", "sampling", "dispatch_lines"),
    [
        ('default="masked", ', "ASGM", "poisson", [16, 18]),
        ('default="slices", ', "fixed-mean", "shuffle", [16]),
        # no default: the branch is not decided, both methods are in the pipeline
        ("", "unknown", "unknown", []),
    ],
)
def test_the_default_branch_of_a_dispatch_is_the_pipeline(
    tmp_path: Path, default: str, mechanism: str, sampling: str, dispatch_lines: list[int]
) -> None:
    files = {"methods.py": METHODS, "main.py": MAIN.format(default=default)}
    [pipeline] = pipelines_of(tmp_path, files)
    assert (pipeline.path, pipeline.mechanism, pipeline.sampling) == ("main.py", mechanism,
                                                                       sampling)
    dispatch = [(e.span.path, e.span.line) for e in pipeline.evidence if e.role == "dispatch"]
    assert dispatch == [("main.py", line) for line in dispatch_lines]


TESTS = '''
import argparse

LIMIT = 3
MODE = "fast"


def run(mode, scale=2, name=None):
    return mode, scale, name


parser = argparse.ArgumentParser()
parser.add_argument("--algo", default="dpsgd")
parser.add_argument("--dataset")
parser.add_argument("--plain", action="store_true")
parser.add_argument("--keep", action="store_false")
args = parser.parse_args()
run("fast")
run("fast", scale=2)
'''


@pytest.mark.parametrize(
    ("test", "where", "expected"),
    [
        ('["cmp", "==", ["r", "args.algo"], ["s", "dpsgd"]]', ("<module>", 20), True),
        ('["cmp", "!=", ["r", "args.algo"], ["s", "dpsgd"]]', ("<module>", 20), False),
        ('["r", "args.plain"]', ("<module>", 20), False),
        ('["r", "args.keep"]', ("<module>", 20), True),
        ('["u", "not", ["r", "args.plain"]]', ("<module>", 20), True),
        ('["?", "and", ["r", "args.plain"], ["r", "args.dataset"]]', ("<module>", 20), False),
        ('["?", "or", ["r", "args.keep"], ["r", "args.dataset"]]', ("<module>", 20), True),
        # an option without a default, and an `or` that it decides, stay undecided
        ('["cmp", "==", ["r", "args.dataset"], ["s", "mnist"]]', ("<module>", 20), None),
        ('["?", "or", ["r", "args.plain"], ["r", "args.dataset"]]', ("<module>", 20), None),
        ('["cmp", "<", ["r", "LIMIT"], ["n", 5]]', ("<module>", 20), True),
        # parameters: every call passes the same constant, or the default holds
        ('["cmp", "==", ["r", "mode"], ["r", "MODE"]]', ("run", 9), True),
        ('["cmp", "==", ["r", "scale"], ["n", 2]]', ("run", 9), True),
        ('["u", "not", ["r", "name"]]', ("run", 9), True),
        ('["cmp", "==", ["call", ["r", "len"], [["r", "LIMIT"]], {}, [1, 1, 1, 1], {}], '
         '["n", 1]]', ("<module>", 20), None),
    ],
)
def test_truth_of_if_tests_under_the_defaults(tmp_path: Path, test: str, where: tuple[str, int],
                                              expected: bool | None) -> None:
    import json

    index = ProjectIndex(make_project(tmp_path, {"cli.py": TESTS}))
    ctx = Ctx("cli.py", where[0], where[1])
    assert Evaluator(index).truth(json.loads(test), ctx) is expected
