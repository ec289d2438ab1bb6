"""N where the code says it, so the FEASGM divisor check (docs/theory.md#divisor-dependence) runs
on the real size: a dataset built from same-length tensors has the length of any of them whose
length is known. Real projects on disk, the real engine and builder."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpcheck import engine
from dpcheck.model import Pipeline
from dpcheck.pipelines import build_pipelines
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
