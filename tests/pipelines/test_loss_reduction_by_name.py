"""Opacus' ``loss_reduction`` decides the update by its value, not by how it is spelled: a name
that holds one string under the default configuration (an option default, a parameter every
caller passes the same constant for) is that string; callers that disagree leave it unknown."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.pipelines.builder import pipelines_of

TRAIN = '''
import argparse

import torch
from opacus import PrivacyEngine
from torch.utils.data import DataLoader, TensorDataset


def fit(reduction):
    data = TensorDataset(torch.randn(5000, 8), torch.randint(0, 2, (5000,)))
    model = torch.nn.Linear(8, 2)
    engine = PrivacyEngine(accountant="rdp")
    model, optimizer, loader = engine.make_private(
        module=model, optimizer=torch.optim.SGD(model.parameters(), lr=0.1),
        data_loader=DataLoader(data, batch_size=50), noise_multiplier=1.0,
        max_grad_norm=1.0, loss_reduction=reduction)
    for x, y in loader:
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
    print(engine.get_epsilon(1e-5))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--reduction", default={default!r})
    args = parser.parse_args()
    fit(args.reduction)
    {second}
'''


@pytest.mark.parametrize(("default", "second", "mechanism"), [
    ("sum", "", "SGM"),
    ("mean", "", "FEASGM"),
    ("sum", "fit('sum')", "SGM"),
    ("sum", "fit('mean')", "unknown"),
])
def test_reduction_passed_by_name_is_read_as_its_constant(
        tmp_path: Path, default: str, second: str, mechanism: str) -> None:
    files = {"train.py": TRAIN.format(default=default, second=second),
             "requirements.txt": "opacus==1.4.0\n"}
    [pipeline] = pipelines_of(tmp_path, files)
    assert pipeline.mechanism == mechanism, pipeline.evidence
