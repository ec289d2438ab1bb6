"""The provenance lattice on the values a divisor sizes (``dpcheck.pipelines.provenance``): a
batch and the dataset joined are DATA, and a batch stays a batch through calls."""

from __future__ import annotations

from pathlib import Path

from dpcheck.pipelines.index import ProjectIndex
from dpcheck.pipelines.provenance import Origin, Provenance
from dpcheck.pipelines.scope import Ctx
from tests.pipelines.builder import make_project

CODE = '''
import sys

import torch
from torchvision import datasets


def pick(sampled, everything, whole):
    if whole:
        return everything
    return sampled


def size_of(rows):
    return len(rows)


def forward(rows):
    return size_of(rows)


def train():
    train_set = datasets.MNIST("data", train=True)
    images = train_set.data.flatten(1).float()
    for _ in range(10):
        xs = images[torch.rand(len(images)) < 0.01]
        rows = pick(xs, images, len(sys.argv) > 1)
        print(rows, forward(xs))
'''


def _origins(tmp_path: Path) -> Provenance:
    return Provenance(ProjectIndex(make_project(tmp_path, {"train.py": CODE})))


def test_the_batch_or_the_dataset_returned_on_a_flag_is_data(tmp_path: Path) -> None:
    provenance = _origins(tmp_path)
    at = Ctx("train.py", "train", 27)
    assert provenance.origin(["r", "images"], at) == Origin.DATASET
    assert provenance.origin(["r", "xs"], at) == Origin.BATCH
    assert provenance.origin(["r", "rows"], at) == Origin.DATA


def test_a_batch_passed_through_two_functions_stays_a_batch(tmp_path: Path) -> None:
    provenance = _origins(tmp_path)
    assert provenance.origin(["r", "rows"], Ctx("train.py", "size_of", 14)) == Origin.BATCH


SWAPPED = '''
import torch


class Masks:
    def __init__(self, n):
        self.kept = self.spare
        self.drawn = torch.rand(n) < 0.01

    def swap(self):
        self.spare = self.kept
'''


def test_masks_defined_through_each_other_are_no_mask_and_no_crash(tmp_path: Path) -> None:
    provenance = Provenance(ProjectIndex(make_project(tmp_path, {"train.py": SWAPPED})))
    at = Ctx("train.py", "Masks.swap", 11)
    assert provenance.is_mask(["r", "self.drawn"], at)
    assert not provenance.is_mask(["r", "self.kept"], at)
