"""A noisy sum kept in a container (a dict of per-parameter sums) and divided in place through
a subscript target (``sums[k] /= d``, ``self.sums[k] /= d``) is judged by its divisor exactly as
``total / d`` is; and a divisor read from a container (``settings["rate"]``) is judged by the
item the container holds, followed through a parameter to the container every caller passes (a
config dict handed to a constructor). Real projects written to disk and the real pipeline
builder; the expected mechanisms follow docs/theory.md#update-rules (realized batch size ->
ASGM, N*q -> EASGM, a hyper-parameter -> SGM, anything not decided -> unknown)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpcheck.pipelines.divisor import DivisorClassifier
from dpcheck.pipelines.index import ProjectIndex
from dpcheck.pipelines.scope import Ctx
from tests.pipelines.builder import make_project, pipelines_of

TRAINER = '''
import json

import torch
from opacus.accountants import RDPAccountant
from torch import nn


class Trainer:
    def __init__(self, xs, ys, settings):
        self.xs, self.ys = xs, ys
        self.count = len(xs)
        self.rate = settings["rate"]
        self.lot = settings["lot"]
        self.noise = settings["noise"]
        self.net = nn.Linear(12, 3)
        self.sums = {}
        self.accountant = RDPAccountant()

    def step(self):
        keep = torch.rand(self.count) < self.rate
        xb, yb = self.xs[keep], self.ys[keep]
        self.sums = {k: torch.zeros_like(p) for k, p in self.net.named_parameters()}
        for x, y in zip(xb, yb):
            self.net.zero_grad()
            nn.functional.cross_entropy(self.net(x[None]), y[None]).backward()
            nn.utils.clip_grad_norm_(self.net.parameters(), 1.0)
            for k, p in self.net.named_parameters():
                self.sums[k] += p.grad
        for k in self.sums:
            self.sums[k] += torch.normal(0.0, self.noise, size=self.sums[k].shape)
            self.sums[k] /= {divisor}
        with torch.no_grad():
            for k, p in self.net.named_parameters():
                p -= 0.1 * self.sums[k]
        self.accountant.step(noise_multiplier=self.noise, sample_rate=self.rate)


def main():
    data = torch.load("records.pt")
    trainer = Trainer(data["x"], data["y"], {settings})
    for _ in range(500):
        trainer.step()


if __name__ == "__main__":
    main()
'''
SETTINGS = '{"rate": 0.01, "lot": 64, "noise": 1.1}'


def _pipeline(tmp_path: Path, divisor: str, settings: str = SETTINGS) -> str:
    code = TRAINER.replace("{divisor}", divisor).replace("{settings}", settings)
    [pipeline] = pipelines_of(tmp_path, {"train.py": code, "requirements.txt": "opacus==1.4.0\n"})
    return pipeline.mechanism


@pytest.mark.parametrize(("divisor", "mechanism"), [
    ("len(xb)", "ASGM"),
    # settings["rate"] is 0.01 in the dict the one caller passes: a hyper-parameter.
    ("self.count * self.rate", "EASGM"),
    ("self.lot", "SGM"),
    ("keep.sum()", "ASGM"),
])
def test_an_in_place_division_through_a_subscript_target_is_judged_by_its_divisor(
        tmp_path: Path, divisor: str, mechanism: str) -> None:
    assert _pipeline(tmp_path, divisor) == mechanism


def test_a_config_read_at_run_time_leaves_the_divisor_unknown(tmp_path: Path) -> None:
    """A config whose items are not written in the project (``json.load``) decides nothing:
    unknown stays unknown."""
    settings = 'json.load(open("settings.json"))'
    assert _pipeline(tmp_path, "self.count * self.rate", settings) == "unknown"


ITEMS = '''
import torch

SMALL = {"lot": 32, "size": 0}
LARGE = {"lot": 256, "size": 0}


def configure(cfg, xs):
    return cfg["lot"], cfg["size"]


def run(xs):
    keep = torch.rand(len(xs)) < 0.01
    batch = xs[keep]
    first = configure(SMALL, xs)
    second = configure(LARGE, xs)
    drawn = {"n": len(batch), "total": len(xs) * 0.01}
    divisor = {divisor}
    return divisor
'''


def _dependence(tmp_path: Path, divisor: str, scope: str = "run") -> str:
    project = make_project(tmp_path, {"train.py": ITEMS.replace("{divisor}", divisor)})
    index = ProjectIndex(project)
    found = index.scope(Ctx("train.py", scope))
    assert found is not None
    [assign] = [s for s in found.statements if s.target == "divisor"]
    return DivisorClassifier(index).classify(assign.expr, Ctx("train.py", scope, assign.line)).kind


@pytest.mark.parametrize(("divisor", "kind"), [
    ('drawn["n"]', "realized"),        # the item is the length of a sampled batch
    ('drawn["total"]', "expected"),    # the item is the dataset size times a rate
    ('SMALL["lot"]', "constant"),
])
def test_an_item_is_judged_by_what_the_container_holds_under_its_key(
        tmp_path: Path, divisor: str, kind: str) -> None:
    assert _dependence(tmp_path, divisor) == kind


def test_a_parameter_item_joins_what_every_caller_passes(tmp_path: Path) -> None:
    """``cfg["lot"]`` inside ``configure``: 32 from one caller and 256 from the other, both
    hyper-parameters, so the item is a constant whichever caller ran."""
    code = ITEMS.replace("    return cfg[\"lot\"], cfg[\"size\"]",
                         "    divisor = cfg[\"lot\"]\n    return divisor")
    project = make_project(tmp_path, {"train.py": code.replace("{divisor}", "0")})
    index = ProjectIndex(project)
    found = index.scope(Ctx("train.py", "configure"))
    assert found is not None
    [assign] = [s for s in found.statements if s.target == "divisor"]
    dep = DivisorClassifier(index).classify(assign.expr, Ctx("train.py", "configure", assign.line))
    assert dep.kind == "constant"
