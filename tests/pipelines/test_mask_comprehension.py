"""The indices a comprehension keeps from the index range by a Bernoulli mask (``[i for i in
np.arange(n) if keep[i]]``, the TF-Privacy GDP tutorials) are one per sampled example, so their
count is the realized batch size; the complement form ``random_sample(n) > 1 - q`` is a mask
too. A comprehension filtered by anything else is not a batch size: ``unknown``, never a guess."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpcheck.pipelines.divisor import DivisorClassifier
from dpcheck.pipelines.index import ProjectIndex
from dpcheck.pipelines.scope import Ctx
from tests.pipelines.builder import make_project

SOURCE = '''
import numpy as np
import torch

n = 60000
q = 0.01


def step(labels):
    keep = {mask}
    chosen = {chosen}
    return len(chosen)
'''


def _kind(tmp_path: Path, mask: str, chosen: str) -> str:
    project = make_project(tmp_path, {"m.py": SOURCE.format(mask=mask, chosen=chosen)})
    return DivisorClassifier(ProjectIndex(project)).classify(
        ["call", ["r", "len"], [["r", "chosen"]], {}, [11, 12, 11, 24], {}],
        Ctx("m.py", "step", 11)).kind


@pytest.mark.parametrize(("mask", "chosen"), [
    ("np.random.random_sample(n) > 1 - q", "[i for i in np.arange(n) if keep[i]]"),
    ("torch.rand(n) < q", "[i for i in range(n) if keep[i]]"),
    ("np.random.binomial(1, q, n)", "[i for i in np.arange(n) if keep[i]]"),
    ("np.random.random_sample(n) >= 1 - q", "np.flatnonzero(keep)"),
])
def test_indices_a_mask_keeps_count_the_realized_batch(tmp_path: Path, mask: str,
                                                       chosen: str) -> None:
    assert _kind(tmp_path, mask, chosen) == "realized"


@pytest.mark.parametrize(("mask", "chosen"), [
    ("labels == 3", "[i for i in np.arange(n) if keep[i]]"),
    ("np.random.random_sample(n) > 1 - q", "[i for i in np.arange(n) if keep[i] if i % 2]"),
    ("np.random.random_sample(n) > 1 - q", "[i for i in np.arange(n) if not keep[i]]"),
    ("np.random.random_sample(n) > 1 - q", "[labels[i] for i in labels if keep[i]]"),
])
def test_other_filters_are_not_a_batch_size(tmp_path: Path, mask: str, chosen: str) -> None:
    assert _kind(tmp_path, mask, chosen) == "unknown"
