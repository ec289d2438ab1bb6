"""N of a ``torch.utils.data.Subset``: the length of its index sequence (a slice of a permutation
of a well-known dataset's indices, a range, a literal list), so the FEASGM divisor check runs on
the real N (docs/theory.md#divisor-dependence). Real projects on disk and the real builder."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpcheck.bounds.attach import attach_bounds
from dpcheck.pipelines import build_pipelines
from dpcheck.rules import evaluate
from tests.pipelines.builder import make_project

# FashionMNIST's training split has 60000 images (torchvision); the code holds some out.
SPLIT = '''
import numpy as np
import torch
from opacus import PrivacyEngine
from torch.utils.data import DataLoader, Subset
from torchvision import datasets

full = datasets.FashionMNIST("data", train=True, download=True)
{indices}
kept = Subset(full, {chosen})
loader = DataLoader(kept, batch_size=300, shuffle=True)
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
'''


@pytest.mark.parametrize(("indices", "chosen", "size"), [
    # a held-out fifth, after an in-place shuffle of all indices
    ("order = list(range(len(full)))\nnp.random.shuffle(order)\ncut = len(full) // 5\n"
     "train_part, held_out = order[cut:], order[:cut]", "train_part", 48000),
    ("order = torch.randperm(len(full))", "order[:-10000]", 50000),
    ("order = np.arange(60000)", "order[::4]", 15000),
    ("", "range(1000, 3500)", 2500),
    ("", "[3, 1, 4, 1, 5]", 5),
    # conversions keep a length: any of the vocabulary's keeps_examples, builtins too
    ("order = torch.from_numpy(np.arange(4000))", "order", 4000),
    ("", "range(len(torch.from_numpy(np.asarray(full.data))) // 2)", 30000),
    ("", "range(len(sorted(full.targets)) - 100)", 59900),
    # every attribute holding one entry per example has the dataset's length
    ("", "range(len(full.inputs) // 3)", 20000),
    # a permutation of a sequence has the sequence's length
    ("order = np.random.permutation(list(range(700)))", "order", 700),
])
def test_a_subset_has_as_many_examples_as_its_indices(
        tmp_path: Path, indices: str, chosen: str, size: int) -> None:
    code = SPLIT.format(indices=indices, chosen=chosen)
    project = make_project(tmp_path, {"train.py": code, "requirements.txt": "opacus==1.4.0\n"})
    [pipeline] = build_pipelines(project)
    assert pipeline.params["N"].value == size


def test_a_project_class_named_subset_is_not_torch(tmp_path: Path) -> None:
    code = SPLIT.format(indices="class Subset:\n    def __init__(self, data, rows):\n"
                                "        self.data = data\n", chosen="range(100)")
    code = code.replace("from torch.utils.data import DataLoader, Subset",
                        "from torch.utils.data import DataLoader")
    project = make_project(tmp_path, {"train.py": code, "requirements.txt": "opacus==1.4.0\n"})
    [pipeline] = build_pipelines(project)
    assert "N" not in pipeline.params


@pytest.mark.parametrize(("batch", "severity"), [(256, "info"), (500, "error")])
def test_the_feasgm_divisor_check_runs_on_the_subsets_n(
        tmp_path: Path, batch: int, severity: str) -> None:
    """N = 60000 - 6000 = 54000 held in. Opacus divides by int(N / len(loader)): B = 256 gives
    int(54000/211) = 255, and 255 again at N - 1 and N + 1 (a note); B = 500 gives
    int(54000/108) = 500 but int(53999/108) = 499 (an error)."""
    code = SPLIT.format(indices="order = np.random.permutation(len(full))\ncut = 6000",
                        chosen="order[cut:]").replace("batch_size=300", f"batch_size={batch}")
    project = make_project(tmp_path, {"train.py": code, "requirements.txt": "opacus==1.4.0\n"})
    pipelines = build_pipelines(project)
    assert pipelines[0].params["N"].value == 54000
    findings = attach_bounds(evaluate(pipelines, project), pipelines)
    assert [(f.rule, f.severity.value) for f in findings if f.rule == "DP101"] \
        == [("DP101", severity)]
