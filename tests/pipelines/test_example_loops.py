"""Per-example gradients from a plain Python loop: a loop over the examples of a sampled batch
that differentiates one example per iteration (``.backward()`` or ``torch.autograd.grad``),
clips it (in place, or in a project helper that returns the clipped gradients) and sums the
clipped gradients (a running list sum, a list comprehension, ``torch.stack(...).sum(0)``) is
per-example clipping, whatever the names. The batch is a random selection of the dataset
however the selection is spelled: a mask kept in a name (``u = rand(n); keep = u < q``), the
indices a mask selects from a range (``np.arange(n)[keep]``). Real projects written to disk
and the real pipeline builder; mechanisms follow docs/theory.md#update-rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpcheck import engine
from tests.pipelines.builder import make_project, pipelines_of

LOOP = '''
import numpy as np
import torch
from opacus.accountants import RDPAccountant
from torch import nn

RATE = 0.01


def sample(xs, ys):
    n = ys.shape[0]
    {draw}
    return xs[picked], ys[picked]


def clipped(net, c):
    norm = torch.sqrt(sum((p.grad ** 2).sum() for p in net.parameters()))
    if norm > c:
        for p in net.parameters():
            p.grad = p.grad / (norm / c)
    return [p.grad.clone() for p in net.parameters()]


def main():
    xs, ys = torch.load("train.pt")
    net = nn.Linear(20, 2)
    accountant = RDPAccountant()
    for _ in range(800):
        xb, yb = sample(xs, ys)
        acc = None
        for i in range(xb.shape[0]):
            net.zero_grad()
            nn.functional.cross_entropy(net(xb[i:i + 1]), yb[i:i + 1]).backward()
            g = clipped(net, 1.0)
            {sum}
        with torch.no_grad():
            for k, p in enumerate(net.parameters()):
                noisy = acc[k] + torch.normal(0.0, 1.2, size=p.shape)
                p -= 0.1 * noisy / xb.shape[0]
        accountant.step(noise_multiplier=1.2, sample_rate=RATE)


if __name__ == "__main__":
    main()
'''
NAMED_DRAW = "coins = np.random.rand(n)\n    picked = np.arange(n)[coins <= RATE]"
RUNNING = "acc = g if acc is None else [a + b for a, b in zip(acc, g)]"


def _pipeline(tmp_path: Path, draw: str = NAMED_DRAW, total: str = RUNNING) -> tuple[str, str]:
    code = LOOP.replace("{draw}", draw).replace("{sum}", total)
    [pipeline] = pipelines_of(tmp_path, {"train.py": code, "requirements.txt": "opacus==1.4.0\n"})
    return pipeline.mechanism, pipeline.sampling


@pytest.mark.parametrize("draw", [
    NAMED_DRAW,                                                        # the draw kept in a name
    "picked = np.arange(n)[np.random.rand(n) < RATE]",                 # indices a mask selects
    "picked = np.random.rand(n) < RATE",                               # the mask itself
])
def test_a_per_example_loop_over_a_random_selection_is_per_example_clipping(
        tmp_path: Path, draw: str) -> None:
    assert _pipeline(tmp_path, draw=draw) == ("ASGM", "poisson")


@pytest.mark.parametrize("total", [
    RUNNING,
    "acc = g if acc is None else [torch.stack([a, b]).sum(0) for a, b in zip(acc, g)]",
])
def test_the_clipped_gradients_may_be_summed_in_any_spelling(tmp_path: Path, total: str) -> None:
    assert _pipeline(tmp_path, total=total) == ("ASGM", "poisson")


def test_a_loop_whose_counter_selects_an_example_of_the_batch_is_over_examples(
        tmp_path: Path) -> None:
    """The loop runs over ``range(CAP)``, a bound that says nothing about the batch, but its
    counter picks ``xb[i]``, an example of the sampled batch, which the loss then
    differentiates: a loop over examples, whatever its bound."""
    code = LOOP.replace("{draw}", NAMED_DRAW).replace("{sum}", RUNNING).replace(
        "for i in range(xb.shape[0]):", "for i in range(CAP):").replace(
        "net(xb[i:i + 1]), yb[i:i + 1]", "net(xb[i][None]), yb[i][None]").replace(
        "RATE = 0.01", "RATE = 0.01\nCAP = 256")
    [pipeline] = pipelines_of(tmp_path, {"train.py": code, "requirements.txt": "opacus==1.4.0\n"})
    assert (pipeline.mechanism, pipeline.sampling) == ("ASGM", "poisson")


def test_a_loop_that_differentiates_the_whole_batch_is_not_per_example(tmp_path: Path) -> None:
    """The same loop, but every iteration differentiates the whole batch: the clip bounds the
    batch gradient, not each example's, so no DP-SGD pipeline forms."""
    code = LOOP.replace("{draw}", NAMED_DRAW).replace("{sum}", RUNNING).replace(
        "net(xb[i:i + 1]), yb[i:i + 1]", "net(xb), yb")
    assert pipelines_of(tmp_path, {"train.py": code, "requirements.txt": "opacus==1.4.0\n"}) == []


SPLIT_STEPS = '''
import numpy as np
import torch
from opacus.accountants import RDPAccountant
from torch import nn

B, SIGMA, C = 64, 4.0, 4.0


def split(xs, ys):
    u = np.random.rand(len(xs))
    keep = u < np.percentile(u, 70)
    return xs[keep], ys[keep], xs[~keep], ys[~keep]


def main():
    xs, ys = torch.load("train.pt")
    xtr, ytr, xva, yva = split(xs, ys)
    net = nn.Linear(20, 2)
    accountant = RDPAccountant()
    for step in range(len(xtr) // B):
        idx = np.random.randint(len(xtr), size=B)
        net.zero_grad()
        nn.functional.cross_entropy(net(xtr[idx]), ytr[idx]).backward()
        with torch.no_grad():
            for p in net.parameters():
                g = p.grad / max(1.0, float(p.grad.norm()) / C)
                p -= 0.01 * (g + torch.normal(0.0, SIGMA * C, size=p.shape))
        accountant.step(noise_multiplier=SIGMA, sample_rate=B / len(xtr))


if __name__ == "__main__":
    main()
'''


def test_steps_counted_over_a_random_split_are_not_a_loop_over_examples(tmp_path: Path) -> None:
    """The step loop runs len(xtr) // B times, xtr a random 70% split of the data (its length a
    realized size), but its counter selects nothing and every step clips the gradient of the
    whole batch's loss: no per-example clipping (before, the range over a realized size made
    it a loop over examples). The noise on the gradients and the accountant still anchor a
    pipeline, whose evidence says that no per-example clip was seen. The split is no sampling
    (its threshold is a quantile of its own draw), so the B indices drawn with replacement
    every step decide, and the RDP accountant's Poisson assumption does not hold for them:
    DP102, however each example's contribution is bounded."""
    root = tmp_path / "project"
    make_project(root, {"train.py": SPLIT_STEPS, "requirements.txt": "opacus==1.4.0\n"})
    result = engine.scan(engine.ScanOptions(paths=[root], use_cache=False, jobs=1))
    [pipeline] = result.pipelines
    assert not [e for e in pipeline.evidence if e.role == "per-sample-grad"]
    clips = [e.note for e in pipeline.evidence if e.role == "clip"]
    assert clips[0].startswith("g = p.grad / max(1.0")  # the clip of the batch gradient
    assert clips[1].startswith("no per-example clip seen")
    [finding] = result.findings
    assert (finding.rule, finding.severity.value, finding.span.line) == ("DP102", "error", 21)
    assert "with replacement" in finding.message
