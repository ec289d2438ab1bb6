"""A loader whose batch size is the size of its data serves that data as one batch: it samples
nothing, and the draw that made the data decides (``dpcheck.pipelines.single_batch``). A loader
with any other batch size keeps its own sampling; a one-batch loader over data made where
dpcheck does not look stays unknown instead of being read as sequential batches."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpcheck.model import Pipeline

from dpcheck.pipelines import build_pipelines
from dpcheck.rules.evaluate import evaluate
from tests.pipelines.builder import make_project

REQUIREMENTS = "opacus==1.4.0\n"

DRAWS = '''
import numpy as np


def bernoulli_sets(n, rate, steps):
    out = []
    for _ in range(steps):
        keep = np.random.rand(n) < rate
        out.append(np.flatnonzero(keep))
    return out


def shuffled_sets(n, size, steps):
    order = np.random.permutation(n)
    return [order[i * size:(i + 1) * size] for i in range(steps)]
'''

TRAIN = '''
import torch
from opacus import PrivacyEngine
from torch.utils.data import DataLoader, Subset, TensorDataset

import draws

STEPS = 100


def main():
    data = TensorDataset(torch.randn(6000, 20), torch.randint(0, 2, (6000,)))
    model = torch.nn.Linear(20, 2)
    engine = PrivacyEngine(accountant="rdp")
    model, optimizer, _ = engine.make_private(
        module=model, optimizer=torch.optim.SGD(model.parameters(), lr=0.1),
        data_loader=DataLoader(data, batch_size=60), noise_multiplier=1.0,
        max_grad_norm=1.0, loss_reduction="sum")
    sets = draws.{helper}(6000, {second}, STEPS)
    for t in range(STEPS):
        picked = sets[t]
        {loader}
        for x, y in loader:
            optimizer.zero_grad()
            torch.nn.functional.cross_entropy(model(x), y, reduction="sum").backward()
            optimizer.step()
    print(engine.get_epsilon(1e-5))


if __name__ == "__main__":
    main()
'''


def _scan(tmp_path: Path, helper: str, second: str, loader: str) -> tuple[Pipeline, list[str]]:
    """The one pipeline of the project and the rules that fire on it."""
    files = {"draws.py": DRAWS, "requirements.txt": REQUIREMENTS,
             "train.py": TRAIN.format(helper=helper, second=second, loader=loader)}
    project = make_project(tmp_path, files)
    [pipeline] = build_pipelines(project)
    return pipeline, sorted(f.rule for f in evaluate([pipeline], project))


@pytest.mark.parametrize("loader", [
    "loader = DataLoader(Subset(data, picked), batch_size=len(picked))",
    "loader = DataLoader(Subset(data, picked), batch_size=picked.shape[0])",
    "part = Subset(data, picked)\n        loader = DataLoader(part, batch_size=len(part))",
    "size = len(picked)\n        loader = DataLoader(Subset(data, picked), batch_size=size)",
])
def test_one_batch_loader_takes_the_sampling_of_its_index_draw(tmp_path: Path, loader: str) -> None:
    pipeline, rules = _scan(tmp_path, "bernoulli_sets", "0.01", loader)
    assert (pipeline.mechanism, pipeline.sampling, pipeline.sampler) == ("SGM", "poisson", "poisson")
    assert rules == []
    notes = [e.note for e in pipeline.evidence if e.role == "sampler"]
    assert any("whole dataset as one batch" in n for n in notes), notes
    assert any("Poisson" in n for n in notes), notes


def test_one_batch_loader_over_fixed_slices_of_a_permutation_is_fixed_size(tmp_path: Path) -> None:
    pipeline, rules = _scan(tmp_path, "shuffled_sets", "60",
                            "loader = DataLoader(Subset(data, picked), batch_size=len(picked))")
    assert (pipeline.mechanism, pipeline.sampling) == ("SGM", "shuffle")
    assert rules == ["DP102"]


def test_a_loader_with_its_own_batch_size_keeps_its_sampling(tmp_path: Path) -> None:
    pipeline, rules = _scan(tmp_path, "bernoulli_sets", "0.01",
                            "loader = DataLoader(Subset(data, picked), batch_size=16)")
    assert (pipeline.sampling, pipeline.sampler) == ("shuffle", "sequential")
    assert rules == ["DP102"]


def test_one_batch_loader_over_data_not_followed_is_unknown_not_sequential(tmp_path: Path) -> None:
    pipeline, rules = _scan(tmp_path, "bernoulli_sets", "0.01",
                            "chunk = torch.load(picked)\n        loader = DataLoader(chunk, batch_size=len(chunk))")
    assert pipeline.sampling == "unknown"
    assert "DP102" not in rules
