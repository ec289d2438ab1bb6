"""BackPACK per-example gradients (``grad_batch``, ``batch_l2``) and the inverted clip factor
(fast-dpsgd, bench/REAL_REPOS.md: ``clamp_max(norm / C, 1)`` multiplies instead of clipping)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpcheck.pipelines.handwritten import clip_factor_inverted
from dpcheck.sites import summarize_source
from dpcheck.sites.ir import IR, walk
from tests.pipelines.builder import pipelines_of


def _call(expression: str) -> IR:
    """The outermost call of ``expression`` as the summary encodes it."""
    summary = summarize_source(f"factor = {expression}\n", "m.py")
    return next(n for n in walk(summary["scopes"]["<module>"]["stmts"][0]["e"]) if n[0] == "call")


@pytest.mark.parametrize(("expression", "inverted"), [
    ("torch.clamp_max(norms / C, 1.0)", True),
    ("torch.clamp(norms / C, max=1.0)", True),
    ("min(grad_norm / max_grad_norm, 1)", True),
    ("torch.max(C / norms, torch.ones_like(norms))", True),
    ("torch.clamp_max(C / norms, 1.0)", False),
    ("(C / (norms + 1e-6)).clamp(max=1.0)", False),
    ("min(1.0, C / total_norm)", False),
    ("jnp.maximum(total_grad_norm / C, 1.0)", False),
    ("tf.maximum(global_norm / l2_norm_clip, 1.0)", False),
    ("torch.clamp(norms / C, min=1.0)", False),
    ("torch.where(norms > C, C / norms, 1.0)", False),
])
def test_clip_factor_direction(expression: str, inverted: bool) -> None:
    assert clip_factor_inverted(_call(expression)) is inverted


BACKPACK = '''
import torch
from backpack import backpack, extend
from backpack.extensions import BatchGrad, BatchL2Grad
from torch import nn
from torch.utils.data import DataLoader
from torchvision import datasets, transforms

C, SIGMA, LR = 1.0, 1.1, 0.1


def private_step(model):
    norms = torch.sqrt(sum(p.batch_l2 for p in model.parameters()))
    factor = {factor}
    for p in model.parameters():
        clipped_grads = p.grad_batch * factor.view(-1, *([1] * (p.grad_batch.dim() - 1)))
        noisy_grad = clipped_grads.sum(0) + SIGMA * C * torch.randn_like(p.data)
        p.data.add_(-LR * noisy_grad)


def main():
    data = datasets.MNIST("data", train=True, transform=transforms.ToTensor())
    model = extend(nn.Sequential(nn.Flatten(), nn.Linear(784, 10)))
    loss_fn = extend(nn.CrossEntropyLoss())
    for x, y in DataLoader(data, batch_size=64, shuffle=True):
        loss = loss_fn(model(x), y)
        with backpack(BatchGrad(), BatchL2Grad()):
            loss.backward()
        private_step(model)


main()
'''


@pytest.mark.parametrize(("factor", "inverted"), [
    ("torch.clamp_max(norms / C, 1.0)", True),
    ("torch.clamp_max(C / norms, 1.0)", False),
])
def test_backpack_pipeline_and_clip_direction(tmp_path: Path, factor: str, inverted: bool) -> None:
    pipelines = pipelines_of(tmp_path, {"train.py": BACKPACK.format(factor=factor),
                                        "requirements.txt": "torch==2.2.2\n"})
    assert len(pipelines) == 1
    found = pipelines[0]
    assert (found.mechanism, found.sampling) == ("SGM", "shuffle")
    roles = {e.role for e in found.evidence}
    assert {"per-sample-grad", "clip", "noise"} <= roles
    assert found.params["sigma"].value == pytest.approx(1.1)
    flagged = [e for e in found.evidence if e.note.startswith("clip factor inverted")]
    assert bool(flagged) is inverted
