"""Bernoulli-mask loops that turn the mask into an index set (docs/theory.md#update-rules): the size
of the indices of ``torch.rand(N) < q`` -- or of a list built once per sampled index -- is the
realized batch size, so dividing the noisy sum by it is ASGM; when the list is not built once
per example the classifier must stay ``unknown``, never guess."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.pipelines.builder import pipelines_of

LOOP = '''
import numpy as np
import torch
from torch import nn
from torchvision import datasets

Q, SIGMA, CLIP = 0.01, 1.0, 1.0
train_set = datasets.MNIST("data", train=True)
N = len(train_set)
model = nn.Linear(784, 10)
for step in range(500):
    mask = {mask}
    idx = {indices}
    grads = []
    for i in idx.tolist():
        x, y = train_set[i]
        model.zero_grad()
        nn.functional.cross_entropy(model(x.view(1, -1)), torch.tensor([y])).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), CLIP)
        {append}
    with torch.no_grad():
        for k, p in enumerate(model.parameters()):
            summed = sum(g[k] for g in grads)
            noisy = summed + torch.randn_like(summed) * SIGMA * CLIP
            p -= 0.1 * noisy / {divisor}
'''
APPEND = "grads.append([p.grad.clone() for p in model.parameters()])"
TORCH_MASK = "torch.rand(N) < Q"
NUMPY_MASK = "np.random.rand(N) < Q"
INDEX_SETS = [
    (TORCH_MASK, "mask.nonzero().flatten()"),
    (TORCH_MASK, "torch.nonzero(mask).squeeze(1)"),
    (TORCH_MASK, "torch.where(mask)[0]"),
    (NUMPY_MASK, "np.flatnonzero(mask)"),
    (NUMPY_MASK, "np.nonzero(mask)[0]"),
    ("torch.bernoulli(torch.full((N,), Q)).bool()", "mask.nonzero().flatten()"),
]
DIVISORS = ["len(idx)", "idx.numel()", "idx.shape[0]", "len(grads)"]


def _classified(tmp_path: Path, mask: str, indices: str, divisor: str,
                append: str = APPEND) -> tuple[str, str]:
    code = LOOP.format(mask=mask, indices=indices, divisor=divisor, append=append)
    [pipeline] = pipelines_of(tmp_path, {"train.py": code})
    return pipeline.mechanism, pipeline.sampling


@pytest.mark.parametrize(("mask", "indices"), INDEX_SETS)
@pytest.mark.parametrize("divisor", DIVISORS)
def test_sizes_of_mask_indices_are_the_realized_batch(
    tmp_path: Path, mask: str, indices: str, divisor: str
) -> None:
    assert _classified(tmp_path, mask, indices, divisor) == ("ASGM", "poisson")


def test_numpy_size_attribute_of_mask_indices_is_the_realized_batch(tmp_path: Path) -> None:
    assert _classified(tmp_path, NUMPY_MASK, "np.flatnonzero(mask)", "idx.size") == (
        "ASGM", "poisson")


def test_list_comprehension_over_the_sampled_indices_is_the_realized_batch(
    tmp_path: Path,
) -> None:
    indices = "mask.nonzero().flatten()"
    whole = "len([i for i in idx.tolist()])"
    filtered = "len([i for i in idx.tolist() if i % 2])"
    assert _classified(tmp_path / "a", TORCH_MASK, indices, whole) == ("ASGM", "poisson")
    assert _classified(tmp_path / "b", TORCH_MASK, indices, filtered) == ("unknown", "poisson")


@pytest.mark.parametrize(
    "append",
    [
        # appended only for some examples: its length is not the batch size
        "if y > 0:\n            " + APPEND,
        # appended once per parameter tensor, inside a loop that is not over examples
        "for p in model.parameters():\n            grads.append(p.grad.clone())",
    ],
)
def test_lists_not_built_once_per_example_stay_unknown(tmp_path: Path, append: str) -> None:
    found = _classified(tmp_path, TORCH_MASK, "mask.nonzero().flatten()", "len(grads)", append)
    assert found == ("unknown", "poisson")


def test_the_mask_itself_is_not_the_batch(tmp_path: Path) -> None:
    """``len(mask)`` is N, not the realized batch: it must not classify as ASGM."""
    found = _classified(tmp_path, TORCH_MASK, "mask.nonzero().flatten()", "len(mask)")
    assert found[0] != "ASGM"
