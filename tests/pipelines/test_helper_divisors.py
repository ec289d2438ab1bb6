"""Where the noisy sum is divided decides the update rule, wherever that is written: inside a
project helper the noisy sum is handed to (its parameters read through what the callers pass,
by the provenance analysis), or inside the argument of the call that applies the update. The
count of a per-step sampling mask is the realized batch size in every spelling of a count.
Real projects written to disk and the real pipeline builder; the expected mechanisms follow
docs/theory.md#update-rules (realized batch size -> ASGM, N*q -> EASGM, floor(N*q) -> FEASGM,
a hyper-parameter -> SGM, anything not decided -> unknown, never an undivided sum)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.pipelines.builder import pipelines_of

HELPER = '''
import sys

import torch
from opacus.accountants import RDPAccountant
from torchvision import datasets

RATE = 0.01
BATCH = 600


def scale(total, by):
    return total / by


def main():
    mnist = datasets.MNIST("data", train=True)
    images = mnist.data.float().flatten(1)
    labels = mnist.targets
    w = torch.zeros(784, 10)
    accountant = RDPAccountant()
    for _ in range(1000):
        keep = torch.rand(len(images)) < RATE
        xb, yb = images[keep], labels[keep]
        rows = []
        for x, y in zip(xb, yb):
            v = w.detach().requires_grad_(True)
            (g,) = torch.autograd.grad(torch.nn.functional.cross_entropy((x @ v)[None], y[None]), v)
            rows.append(g / max(1.0, float(g.norm())))
        noisy = torch.stack(rows).sum(dim=0) + torch.normal(0.0, 1.0, size=w.shape)
        {update}
        accountant.step(noise_multiplier=1.0, sample_rate=RATE)
'''


def _mechanism(tmp_path: Path, update: str, extra: str = "") -> str:
    code = HELPER.replace("{update}", update) + extra
    [pipeline] = pipelines_of(tmp_path, {"train.py": code, "requirements.txt": "opacus==1.4.0\n"})
    return pipeline.mechanism


@pytest.mark.parametrize(("update", "mechanism"), [
    ("w = w - 0.1 * scale(noisy, len(xb))", "ASGM"),
    ("w = w - 0.1 * scale(noisy, len(images) * RATE)", "EASGM"),
    ("w = w - 0.1 * scale(noisy, int(len(images) * RATE))", "FEASGM"),
    ("w = w - 0.1 * scale(noisy, BATCH)", "SGM"),
    ("w = w - 0.1 * scale(noisy, float(sys.argv[1]))", "unknown"),
])
def test_a_division_inside_a_helper_is_judged_with_the_callers_arguments(
        tmp_path: Path, update: str, mechanism: str) -> None:
    assert _mechanism(tmp_path, update) == mechanism


def test_a_helper_that_hands_the_noisy_sum_on_is_followed_to_the_division(
        tmp_path: Path) -> None:
    extra = '''

def averaged(total, rows):
    return scale(total, len(rows))
'''
    assert _mechanism(tmp_path, "w = w - 0.1 * averaged(noisy, xb)", extra) == "ASGM"


def test_a_helper_where_the_noisy_sum_is_lost_leaves_the_update_undecided(
        tmp_path: Path) -> None:
    """The helper passes the noisy sum to a library call dpcheck does not read: the update is
    not known to be undivided, so it is not SGM."""
    extra = '''

def publish(total):
    torch.save(total, "update.pt")
'''
    assert _mechanism(tmp_path, "publish(noisy)", extra) == "unknown"


@pytest.mark.parametrize("count", [
    "keep.sum()", "torch.sum(keep)", "keep.sum(dim=0)", "keep.sum(0)", "keep.sum().item()",
    "torch.count_nonzero(keep)", "keep.float().sum()", "sum(keep)",
])
def test_the_count_of_a_sampling_mask_in_the_argument_of_the_update_is_realized(
        tmp_path: Path, count: str) -> None:
    extra = '''

class Plain:
    def __init__(self, w):
        self.w = w

    def step(self, direction):
        self.w -= 0.1 * direction
'''
    update = f"opt = Plain(w)\n        opt.step(noisy / {count})"
    assert _mechanism(tmp_path, update, extra) == "ASGM"


def test_a_mask_drawn_by_a_project_function_is_counted_as_the_batch(tmp_path: Path) -> None:
    extra = '''

def select(n, rate):
    return torch.rand(n) < rate
'''
    update = "picked = select(len(images), RATE)\n        w -= 0.1 * (noisy / picked.sum())"
    assert _mechanism(tmp_path, update, extra) == "ASGM"


@pytest.mark.parametrize("count", ["keep.sum(1)", "xb.sum()"])
def test_a_sum_that_is_not_the_count_of_a_mask_stays_unknown(tmp_path: Path, count: str) -> None:
    assert _mechanism(tmp_path, f"w -= 0.1 * (noisy / {count})") == "unknown"
