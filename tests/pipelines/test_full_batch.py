"""Full-batch DP gradient descent: every step uses the whole dataset, which is Poisson sampling
with q = 1, decided when no sampling site exists and the accountant is told q = 1
(docs/theory.md#shuffle-rounds). Real projects on disk, the real builder and the real rule
evaluation."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpcheck.pipelines import build_pipelines
from dpcheck.rules import evaluate
from tests.pipelines.builder import make_project

# Per-example gradients of the whole table at every step, clipped, summed, noised, never
# divided; the accountant composes one Gaussian step per iteration at the given rate.
WHOLE_TABLE = '''
import torch
from opacus.accountants import RDPAccountant
from torch.func import functional_call, grad, vmap

SIGMA, CLIP, LR, ITERATIONS = 4.0, 1.0, 0.01, 300
table = torch.randn(2048, 8)
outcome = torch.randint(0, 2, (2048,))
model = torch.nn.Linear(8, 2)
accountant = RDPAccountant()


def example_loss(weights, row, label):
    out = functional_call(model, weights, (row[None],))
    return torch.nn.functional.cross_entropy(out, label[None])


for it in range(ITERATIONS):
    weights = {{k: v.detach() for k, v in model.named_parameters()}}
    grads = vmap(grad(example_loss), in_dims=(None, 0, 0))(weights, table, outcome)
    norms = torch.stack([g.flatten(1).norm(dim=1) for g in grads.values()]).norm(dim=0)
    factor = torch.clamp(CLIP / (norms + 1e-6), max=1.0)
    with torch.no_grad():
        for name, p in model.named_parameters():
            total = torch.einsum("i,i...->...", factor, grads[name])
            p -= LR * (total + SIGMA * CLIP * torch.randn_like(total))
    accountant.step(noise_multiplier=SIGMA, sample_rate={rate})
print(accountant.get_epsilon(delta=1e-5))
'''


def _scan(tmp_path: Path, rate: str):
    project = make_project(tmp_path, {"train.py": WHOLE_TABLE.format(rate=rate),
                                      "requirements.txt": "opacus==1.4.0\n"})
    pipelines = build_pipelines(project)
    return pipelines, evaluate(pipelines, project)


@pytest.mark.parametrize("rate", ["1", "1.0"])
def test_the_whole_dataset_every_step_accounted_with_q_1_is_poisson_at_q_1(
        tmp_path: Path, rate: str) -> None:
    [pipeline], findings = _scan(tmp_path, rate)
    assert (pipeline.mechanism, pipeline.sampling) == ("SGM", "poisson")
    assert pipeline.params["q"].value == 1
    assert any(e.role == "sampler" and "full batch" in e.note for e in pipeline.evidence)
    assert findings == [], [f.message for f in findings]


def test_a_smaller_rate_with_no_sampling_site_stays_undecided(tmp_path: Path) -> None:
    """An accountant told q = 0.01 while dpcheck sees no sampling: the sampling may happen where
    dpcheck cannot see, so it is not guessed."""
    [pipeline], findings = _scan(tmp_path, "0.01")
    assert pipeline.sampling == "unknown"
    assert [f.rule for f in findings] == ["DP106"]
