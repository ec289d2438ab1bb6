"""N where the code says it, so the FEASGM divisor check (docs/theory.md#divisor-dependence) runs
on the real size: a dataset built from same-length tensors has the length of any of them whose
length is known, and a dataset a helper returns from a dispatch is the one of the arm the default
configuration takes (unknown when the arm is not decided, never the last arm's). Real projects
on disk, the real engine and builder."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpcheck import engine
from dpcheck.bounds.attach import attach_bounds
from dpcheck.model import Pipeline
from dpcheck.pipelines import build_pipelines
from dpcheck.rules import evaluate
from tests.fixture_projects import fixture_project
from tests.pipelines.builder import make_project


def _scanned(name: str) -> tuple[list[Pipeline], list[tuple[str, str, str, int]]]:
    result = engine.scan(engine.ScanOptions(paths=[fixture_project(name)], use_cache=False, jobs=1))
    return result.pipelines, sorted((f.rule, f.severity.value, f.span.path, f.span.line)
                                    for f in result.findings)


def test_tensors_of_unknown_length_beside_mnist_targets_hold_60000_examples() -> None:
    """Embeddings from ``torch.load`` and MNIST's training targets: N = 60000; B = 64 gives
    q = 1/938 and int(N*q) = 63 at N - 1, N and N + 1, so the FEASGM DP101 is a note."""
    [pipeline], findings = _scanned("tensor_dataset_known_labels_feasgm")
    assert pipeline.params["N"].value == 60000
    assert findings == [("DP101", "info", "train.py", 33)]


def test_the_helpers_dataset_is_the_default_arms() -> None:
    """The default settings select CIFAR-10 (the first arm): N = 50000, B = 240, q = 1/209,
    int(N*q) = 239 at N - 1, N and N + 1: a note. The MNIST arm, written last, would give an
    error (int(60000/250) = 240 but int(59999/250) = 239)."""
    [pipeline], findings = _scanned("dataset_helper_default_arm_feasgm")
    assert pipeline.params["N"].value == 50000
    assert findings == [("DP101", "info", "run.py", 30)]


BUILT = '''
import torch
from opacus import PrivacyEngine
from torch.utils.data import DataLoader, TensorDataset
from torchvision import datasets

{prelude}
loader = DataLoader(TensorDataset({tensors}), batch_size=64, shuffle=True)
model = torch.nn.Linear(32, 10)
engine = PrivacyEngine()
model, optimizer, loader = engine.make_private(
    module=model, optimizer=torch.optim.SGD(model.parameters(), lr=0.1), data_loader=loader,
    noise_multiplier=1.0, max_grad_norm=1.0)
for epoch in range(3):
    for x, y in loader:
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
print(engine.get_epsilon(delta=1e-5))
'''
CACHED = 'cached = torch.load("codes.pt")\n'


@pytest.mark.parametrize(("prelude", "tensors", "size"), [
    # the known tensor first or second, the test split, the images rather than the labels
    (CACHED + 'labels = datasets.MNIST("d", train=True).targets', "labels, cached", 60000),
    (CACHED + 'held = datasets.CIFAR10("d", train=False)\nlabels = torch.tensor(held.targets)',
     "cached, labels", 10000),
    (CACHED + 'pixels = datasets.FashionMNIST("d").data.flatten(1).float()', "pixels, cached",
     60000),
    # a literal shape beside a loaded tensor
    (CACHED, "torch.randn(1200, 32), cached", 1200),
])
def test_a_tensor_dataset_has_the_length_of_its_known_tensor(
        tmp_path: Path, prelude: str, tensors: str, size: int) -> None:
    code = BUILT.format(prelude=prelude, tensors=tensors)
    project = make_project(tmp_path, {"train.py": code, "requirements.txt": "opacus==1.4.0\n"})
    [pipeline] = build_pipelines(project)
    assert pipeline.params["N"].value == size


@pytest.mark.parametrize("tensors", [
    "cached, torch.load('labels.pt')",  # no length known
    "torch.randn(1200, 32), torch.zeros(1000)",  # known lengths that disagree
])
def test_a_tensor_dataset_without_one_agreed_length_has_no_n(tmp_path: Path, tensors: str) -> None:
    code = BUILT.format(prelude=CACHED, tensors=tensors)
    project = make_project(tmp_path, {"train.py": code, "requirements.txt": "opacus==1.4.0\n"})
    [pipeline] = build_pipelines(project)
    assert "N" not in pipeline.params


HELPER = '''
from torchvision import datasets


def training_split(name):
    if name == "photos":
        chosen = datasets.CIFAR100("d", train=True)
    elif name == "glyphs":
        chosen = datasets.{second}("d", train=True)
    else:
        raise ValueError(name)
    return chosen
'''
CALLER = '''
import argparse
import sys

import torch
from opacus import PrivacyEngine
from torch.utils.data import DataLoader

from splits import training_split


def main(which):
    examples = training_split(which)
    loader = DataLoader(examples, batch_size=240, shuffle=True)
    model = torch.nn.Linear(784, 10)
    engine = PrivacyEngine()
    model, optimizer, loader = engine.make_private(
        module=model, optimizer=torch.optim.SGD(model.parameters(), lr=0.1), data_loader=loader,
        noise_multiplier=1.0, max_grad_norm=1.0)
    for epoch in range(3):
        for x, y in loader:
            optimizer.zero_grad()
            torch.nn.functional.cross_entropy(model(x.flatten(1)), y).backward()
            optimizer.step()
    print(engine.get_epsilon(delta=1e-5))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default="photos")
    main({passed})
'''


@pytest.mark.parametrize(("passed", "second", "size", "severity"), [
    # the option default selects the first arm (CIFAR-100), not the last one written (KMNIST)
    ("parser.parse_args().data", "KMNIST", 50000, "info"),
    ('"photos"', "KMNIST", 50000, "info"),
    # a literal selecting the last arm
    ('"glyphs"', "KMNIST", 60000, "error"),
    # not decided (a command-line word), both arms 50000: the size does not depend on the arm
    ("sys.argv[1]", "CIFAR10", 50000, "info"),
    # not decided, the arms differ: N is unknown, never the last arm's
    ("sys.argv[1]", "KMNIST", None, "error"),
])
def test_the_returned_dataset_is_the_arm_the_caller_selects(
        tmp_path: Path, passed: str, second: str, size: int | None, severity: str) -> None:
    """B = 240: at N = 50000, q = 1/209 and int(N*q) = 239 at N - 1, N and N + 1 (a note); at
    N = 60000, q = 1/250 and int(N*q) = 240 but 239 at N - 1 (an error), as when N is unknown."""
    project = make_project(tmp_path, {
        "train.py": CALLER.format(passed=passed), "splits.py": HELPER.format(second=second),
        "requirements.txt": "opacus==1.4.0\n"})
    pipelines = build_pipelines(project)
    [pipeline] = pipelines
    assert (pipeline.params["N"].value if "N" in pipeline.params else None) == size
    findings = attach_bounds(evaluate(pipelines, project), pipelines)
    assert [(f.rule, f.severity.value) for f in findings] == [("DP101", severity)]


PLACEHOLDER = '''
from torchvision import datasets


def training_split(name):
    chosen = None
    if name == "photos":
        chosen = datasets.CIFAR100("d", train=True)
    elif name == "glyphs":
        chosen = datasets.CIFAR10("d", train=True)
{last}
    return chosen
'''


@pytest.mark.parametrize(("last", "size"), [
    # every arm replaces the placeholder and every arm has 50000 examples
    ('    else:\n        chosen = datasets.CIFAR100("d", train=True)', 50000),
    # every arm replaces it, but the last one is a test split of 10000
    ('    else:\n        chosen = datasets.CIFAR10("d", train=False)', None),
    # without an else the placeholder may reach the return: nothing to size
    ("", None),
])
def test_an_undecided_dispatch_is_sized_only_when_every_reaching_arm_agrees(
        tmp_path: Path, last: str, size: int | None) -> None:
    project = make_project(tmp_path, {
        "train.py": CALLER.format(passed="sys.argv[1]"), "splits.py": PLACEHOLDER.format(last=last),
        "requirements.txt": "opacus==1.4.0\n"})
    [pipeline] = build_pipelines(project)
    assert (pipeline.params["N"].value if "N" in pipeline.params else None) == size


CHOOSER = '''
from torchvision import datasets


def training_split(options):
    if options.data == "photos":
        chosen = datasets.CIFAR100("d", train=True)
    else:
        chosen = datasets.KMNIST("d", train=True)
    return chosen
'''
SCRIPT = '''
import argparse

import torch
from opacus import PrivacyEngine
from torch.utils.data import DataLoader

from chooser import training_split

parser = argparse.ArgumentParser()
parser.add_argument("--data", default="{default}")
options = parser.parse_args()
loader = DataLoader(training_split(options), batch_size=240, shuffle=True)
model = torch.nn.Linear(784, 10)
engine = PrivacyEngine()
model, optimizer, loader = engine.make_private(
    module=model, optimizer=torch.optim.SGD(model.parameters(), lr=0.1), data_loader=loader,
    noise_multiplier=1.0, max_grad_norm=1.0)
for x, y in loader:
    optimizer.zero_grad()
    torch.nn.functional.cross_entropy(model(x.flatten(1)), y).backward()
    optimizer.step()
print(engine.get_epsilon(delta=1e-5))
'''


@pytest.mark.parametrize(("second", "sizes"), [
    # both scripts' options default to the first arm: decided, although they are two objects
    ("photos", {"one.py": 50000, "two.py": 50000}),
    # their defaults differ: the arm the shared helper takes is not decided
    ("glyphs", {"one.py": None, "two.py": None}),
])
def test_an_attribute_of_a_parameter_is_the_value_every_caller_passes(
        tmp_path: Path, second: str, sizes: dict[str, int | None]) -> None:
    project = make_project(tmp_path, {
        "one.py": SCRIPT.format(default="photos"), "two.py": SCRIPT.format(default=second),
        "chooser.py": CHOOSER, "requirements.txt": "opacus==1.4.0\n"})
    found = {p.path: p.params["N"].value if "N" in p.params else None
             for p in build_pipelines(project)}
    assert found == sizes


def test_two_entries_passing_their_own_options_with_one_default_decide_the_dispatch() -> None:
    """Both scripts default to CIFAR-10: N = 50000 and B = 240 (int(N*q) = 239 at N - 1, N and
    N + 1): a note for each entry, nothing else."""
    pipelines, findings = _scanned("two_entries_one_dispatch_default_feasgm")
    assert sorted((p.path, p.params["N"].value) for p in pipelines) \
        == [("narrow.py", 50000), ("wide.py", 50000)]
    assert findings == [("DP101", "info", "narrow.py", 23), ("DP101", "info", "wide.py", 23)]
