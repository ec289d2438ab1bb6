"""Classes and functions built by factories (DPSUR, bench/REAL_REPOS.md): ``NoisySGD =
noisy_class(SGD)`` where ``noisy_class`` returns a class defined inside it, methods called on an
object that arrives as a parameter, constructor arguments passed through the factory's alias,
and loader factories returning closures (``make, _ = loaders(...)``; ``make(data)``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpcheck.pipelines.index import ProjectIndex
from dpcheck.pipelines.scope import Ctx
from tests.pipelines.builder import make_project, pipelines_of

OPTIM = '''
import torch


def noisy_class(base):
    class Noisy(base):
        def __init__(self, clip, sigma, lot, unit, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.clip, self.sigma, self.lot, self.unit = clip, sigma, lot, unit
            self.sums = [torch.zeros_like(p) for p in self.param_groups[0]["params"]]

        def add_example(self):
            norm = sum(p.grad.norm() ** 2 for p in self.param_groups[0]["params"]) ** 0.5
            factor = min(self.clip / (norm + 1e-6), 1.0)
            for p, s in zip(self.param_groups[0]["params"], self.sums):
                s.add_(p.grad * factor)

        def release(self):
            for p, s in zip(self.param_groups[0]["params"], self.sums):
                p.grad = s + self.clip * self.sigma * torch.randn_like(s)
                p.grad.mul_(self.unit / self.lot)
            super().step()

    return Noisy


NoisySGD = noisy_class(torch.optim.SGD)


def build(model, lot):
    return NoisySGD(1.0, 1.1, lot, 1, model.parameters(), lr=0.1)
'''

STEP = '''
import torch.nn.functional as F


def noisy_batch(model, x, y, optimizer):
    """Per-example clipping happens in optimizer.add_example()."""
    for xi, yi in zip(x, y):
        optimizer.zero_grad()
        F.cross_entropy(model(xi[None]), yi[None]).backward()
        optimizer.add_example()
    optimizer.release()
'''

TRAIN = '''
import torch

from optim import build
from step import noisy_batch


def main():
    data, labels = torch.randn(60000, 4), torch.randint(0, 2, (60000,))
    model = torch.nn.Linear(4, 2)
    optimizer = build(model, 256)
    for _ in range(1000):
        mask = torch.rand(len(data)) < 256 / len(data)
        x, y = data[mask], labels[mask]
        {assignment}
        noisy_batch(model, x, y, optimizer)


if __name__ == "__main__":
    main()
'''


def _index(tmp_path: Path, assignment: str = "optimizer.lot = len(x)") -> ProjectIndex:
    files = {"optim.py": OPTIM, "step.py": STEP, "train.py": TRAIN.format(assignment=assignment)}
    return ProjectIndex(make_project(tmp_path, files))


def test_a_class_made_by_a_factory_is_the_class_defined_inside_it(tmp_path: Path) -> None:
    index = _index(tmp_path)
    assert index.class_named("NoisySGD", Ctx("optim.py", "build", 43)) == Ctx(
        "optim.py", "noisy_class.Noisy")
    assert index.class_named("noisy_class", Ctx("optim.py", "build", 43)) is None


def test_a_method_called_on_a_parameter_follows_the_callers_object(tmp_path: Path) -> None:
    index = _index(tmp_path)
    at_call = Ctx("step.py", "noisy_batch", 10)
    assert index.instance_class("optimizer", at_call) == Ctx("optim.py", "noisy_class.Noisy")
    assert index.function("optimizer.release", at_call) == Ctx(
        "optim.py", "noisy_class.Noisy.release")
    assert index.function("optimizer.missing", at_call) is None


def test_the_factory_alias_calls_the_nested_constructor(tmp_path: Path) -> None:
    index = _index(tmp_path)
    sites = list(index.call_sites(Ctx("optim.py", "noisy_class.Noisy.__init__")))
    assert [(where.path, where.scope) for where, _ in sites] == [("optim.py", "build")]


@pytest.mark.parametrize(
    ("assignment", "mechanism"),
    [
        # the caller of the caller sets the lot to the realized batch before passing it on
        ("optimizer.lot = len(x)", "ASGM"),
        # nobody overrides the constructor's lot: a constant hyper-parameter (SGM post-processing)
        ("pass", "SGM"),
    ],
)
def test_update_in_a_factory_class_is_classified(tmp_path: Path, assignment: str,
                                                 mechanism: str) -> None:
    files = {"optim.py": OPTIM, "step.py": STEP, "train.py": TRAIN.format(assignment=assignment)}
    [pipeline] = pipelines_of(tmp_path, files)
    assert (pipeline.path, pipeline.mechanism, pipeline.sampling) == (
        "train.py", mechanism, "poisson")
    divisor = next(e for e in pipeline.evidence if e.role == "divisor")
    assert (divisor.span.path, divisor.span.line) == ("optim.py", 20)


LOADERS = '''
import numpy as np
import torch
from torch.utils.data import DataLoader


class Bernoulli:
    def __init__(self, n, expected, steps):
        self.n, self.rate, self.steps = n, expected / n, steps

    def __iter__(self):
        for _ in range(self.steps):
            yield np.where(torch.rand(self.n) < self.rate)[0]


def loaders(expected, steps):
    def train_loader(dataset):
        return DataLoader(dataset, batch_sampler=Bernoulli(len(dataset), expected, steps))

    def eval_loader(dataset):
        return DataLoader(dataset, batch_size=expected)

    return train_loader, eval_loader
'''


def test_a_closure_returned_by_a_loader_factory_is_followed(tmp_path: Path) -> None:
    train = '''
    import torch
    from torch.utils.data import TensorDataset

    from loaders import loaders

    CLIP, SIGMA = 1.0, 1.1


    def main():
        data = TensorDataset(torch.randn(60000, 4), torch.randint(0, 2, (60000,)))
        model = torch.nn.Linear(4, 2)
        params = list(model.parameters())
        make_train_loader, make_eval_loader = loaders(256, 1000)
        for x, y in make_train_loader(data):
            sums = [torch.zeros_like(p) for p in params]
            for xi, yi in zip(x, y):
                model.zero_grad()
                torch.nn.functional.cross_entropy(model(xi[None]), yi[None]).backward()
                norm = sum(p.grad.norm() ** 2 for p in params) ** 0.5
                factor = min(CLIP / (norm + 1e-6), 1.0)
                for p, s in zip(params, sums):
                    s.add_(p.grad * factor)
            with torch.no_grad():
                for p, s in zip(params, sums):
                    noisy = s + CLIP * SIGMA * torch.randn_like(s)
                    p -= 0.1 * noisy / len(x)


    if __name__ == "__main__":
        main()
    '''
    index = ProjectIndex(make_project(tmp_path / "index", {"loaders.py": LOADERS,
                                                           "train.py": train}))
    assert index.function("make_train_loader", Ctx("train.py", "main", 14)) == Ctx(
        "loaders.py", "loaders.train_loader")
    assert index.function("make_eval_loader", Ctx("train.py", "main", 14)) == Ctx(
        "loaders.py", "loaders.eval_loader")
    [pipeline] = pipelines_of(tmp_path / "scan", {"loaders.py": LOADERS, "train.py": train})
    assert (pipeline.mechanism, pipeline.sampling) == ("ASGM", "poisson")
    sampler = next(e for e in pipeline.evidence if e.role == "sampler")
    assert (sampler.span.path, sampler.span.line) == ("loaders.py", 17)
