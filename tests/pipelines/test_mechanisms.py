"""The update-rule classifier on hand-written loops: what the noisy sum is divided by decides the
mechanism (docs/theory.md#update-rules), and non-DP noise is no
pipeline at all."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.pipelines.builder import pipelines_of

HEADER = '''
import argparse
import math
import torch
from torch.func import grad, vmap
from torchvision import datasets

SIGMA, CLIP, LR, Q = 1.1, 1.0, 0.1, 0.01
train_set = datasets.MNIST("data", train=True)
images = train_set.data.flatten(1).float()
per_sample = vmap(grad(lambda p, x: (p * x).sum()), in_dims=(None, 0))
'''

LOOP = '''
{prelude}
for step in range(100):
    mask = torch.rand(len(images)) < Q
    xb = images[mask]
    grads = per_sample(params, xb)
    factor = (CLIP / (grads.norm(dim=1) + 1e-6)).clamp(max=1.0)
    summed = (factor[:, None] * grads).sum(0)
    noisy = summed + torch.normal(0.0, SIGMA * CLIP, size=summed.shape)
    {update}
'''


def _mechanism(tmp_path: Path, update: str, prelude: str = "") -> tuple[str, str]:
    code = HEADER + LOOP.format(update=update, prelude=prelude)
    pipelines = pipelines_of(tmp_path, {"train.py": code})
    assert len(pipelines) == 1, pipelines
    return pipelines[0].mechanism, pipelines[0].sampling


@pytest.mark.parametrize(
    ("update", "prelude", "expected"),
    [
        ("params -= LR * noisy / len(xb)", "", "ASGM"),
        ("params -= LR * noisy / xb.shape[0]", "", "ASGM"),
        ("params -= LR * noisy / xb.size(0)", "", "ASGM"),
        ("params -= LR / mask.sum() * noisy", "", "ASGM"),
        ("params -= LR * noisy / (len(train_set) * Q)", "", "EASGM"),
        ("params -= LR * noisy / (N * Q)", "N = len(images)", "EASGM"),
        ("params -= LR * noisy / int(len(train_set) * Q)", "", "FEASGM"),
        ("params -= LR * noisy / math.floor(len(train_set) * Q)", "", "FEASGM"),
        ("params -= LR * noisy / 600", "", "SGM"),
        ("params -= LR * noisy / BATCH", "BATCH = 600", "SGM"),
        ("params -= LR * noisy", "", "SGM"),
        (
            "params -= LR * noisy / args.batch_size",
            "p = argparse.ArgumentParser()\np.add_argument('--batch-size', default=600)\n"
            "args = p.parse_args()",
            "SGM",
        ),
        ("params -= LR * noisy / unknown_divisor()", "", "unknown"),
    ],
)
def test_divisor_decides_the_mechanism(
    tmp_path: Path, update: str, prelude: str, expected: str
) -> None:
    assert _mechanism(tmp_path, update, prelude) == (expected, "poisson")


PICK = '''
def rows_for(sampled, everything, whole):
    if whole:
        return everything
    return sampled
'''


def test_a_size_of_data_of_undecided_kind_is_asgm_or_easgm(tmp_path: Path) -> None:
    """A divisor that sizes the batch or the dataset, undecided which (a project function
    returns one or the other on a flag known only at run time), normalizes by a data-dependent
    size either way (docs/theory.md#undecided-normalization)."""
    update = "params -= LR * noisy / len(rows_for(xb, images, len(sys.argv) > 1))"
    assert _mechanism(tmp_path, update, "import sys\n" + PICK) == ("ASGM|EASGM", "poisson")


def test_a_parameter_given_a_batch_and_the_dataset_sizes_data_of_undecided_kind(tmp_path: Path) -> None:
    """One parameter, the sampled batch from one caller and the whole dataset from another:
    its size is a size of the data, of undecided kind."""
    code = HEADER + '''
def noisy_mean(rows):
    grads = per_sample(params, rows)
    factor = (CLIP / (grads.norm(dim=1) + 1e-6)).clamp(max=1.0)
    summed = (factor[:, None] * grads).sum(0)
    return (summed + torch.normal(0.0, SIGMA * CLIP, size=summed.shape)) / len(rows)


for step in range(100):
    if step < 10:
        params -= LR * noisy_mean(images)
    else:
        params -= LR * noisy_mean(images[torch.rand(len(images)) < Q])
'''
    [pipeline] = pipelines_of(tmp_path, {"train.py": code})
    assert (pipeline.mechanism, pipeline.sampling) == ("ASGM|EASGM", "poisson")


def test_a_size_of_data_of_undecided_kind_with_fixed_batches_is_fixed_mean(tmp_path: Path) -> None:
    """Under fixed-size batches the size is the batch size (but a last partial batch), as for
    a realized size."""
    code = HEADER + "import sys\n" + PICK + '''
loader = torch.utils.data.DataLoader(train_set, batch_size=64, shuffle=True)
for xb, yb in loader:
    grads = per_sample(params, xb)
    factor = (CLIP / (grads.norm(dim=1) + 1e-6)).clamp(max=1.0)
    summed = (factor[:, None] * grads).sum(0)
    noisy = summed + SIGMA * CLIP * torch.randn_like(summed)
    params -= LR * noisy / len(rows_for(xb, images, len(sys.argv) > 1))
'''
    [pipeline] = pipelines_of(tmp_path, {"train.py": code})
    assert (pipeline.mechanism, pipeline.sampling) == ("fixed-mean", "shuffle")


def test_divisor_is_followed_through_locals_and_floor_division(tmp_path: Path) -> None:
    update = "k = len(train_set) * Q\n    params -= LR * noisy / k"
    assert _mechanism(tmp_path, update)[0] == "EASGM"
    update = "k = len(train_set) // 100\n    params -= LR * noisy / k"
    assert _mechanism(tmp_path, update)[0] == "FEASGM"


def test_shuffled_fixed_batches_divided_by_their_size_are_fixed_mean(tmp_path: Path) -> None:
    code = HEADER + '''
loader = torch.utils.data.DataLoader(train_set, batch_size=64, shuffle=True)
for epoch in range(3):
    for xb, yb in loader:
        grads = per_sample(params, xb)
        factor = (CLIP / (grads.norm(dim=1) + 1e-6)).clamp(max=1.0)
        summed = (factor[:, None] * grads).sum(0)
        noisy = summed + SIGMA * CLIP * torch.randn_like(summed)
        params -= LR * noisy / len(xb)
'''
    [pipeline] = pipelines_of(tmp_path, {"train.py": code})
    assert (pipeline.mechanism, pipeline.sampling) == ("fixed-mean", "shuffle")
    assert pipeline.params["batch_size"].value == 64
    assert pipeline.params["N"].value == 60000
    assert pipeline.params["epochs"].value == 3
    assert pipeline.params["sigma"].value == 1.1


@pytest.mark.parametrize(
    "body",
    [
        # noise on the inputs, pushed through the model: augmentation, not DP-SGD
        '''
for xb, yb in loader:
    noisy_x = xb + 0.1 * torch.randn_like(xb)
    loss = model(noisy_x).sum() / len(xb)
    loss.backward()
    optimizer.step()
''',
        # one global clip of the whole gradient, then noise: no per-sample clipping
        '''
for xb, yb in loader:
    model(xb).sum().backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    for p in model.parameters():
        p.grad += 0.01 * torch.randn_like(p.grad)
    optimizer.step()
''',
        # dropout is not a noise draw
        '''
for xb, yb in loader:
    out = torch.nn.functional.dropout(model(xb), p=0.5)
    out.sum().backward()
    optimizer.step()
''',
    ],
)
def test_noise_that_is_not_dp_sgd_makes_no_pipeline(tmp_path: Path, body: str) -> None:
    code = HEADER + "loader = torch.utils.data.DataLoader(train_set, batch_size=8)\n" + body
    assert pipelines_of(tmp_path, {"train.py": code}) == []


def test_test_files_are_not_entry_points(tmp_path: Path) -> None:
    code = HEADER + LOOP.format(update="params -= LR * noisy / len(xb)", prelude="")
    assert pipelines_of(tmp_path, {"tests/test_train.py": code}) == []
