"""DP102 for every subsampling accountant: fixed-size batches of a shuffled or fixed order
accounted by an accountant that assumes Poisson subsampling or a fresh subsample drawn without
replacement at every step (docs/theory.md#shuffling). Real projects, builder and rule evaluation."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpcheck.pipelines import build_pipelines
from dpcheck.rules import evaluate
from tests.pipelines.builder import make_project

LOADER_LOOP = '''
import dp_accounting
import torch
from torch.func import grad, vmap
from torch.utils.data import DataLoader, TensorDataset

SIGMA, CLIP, N = 1.1, 1.0, 4000
BATCH = {batch}
data = TensorDataset(torch.randn(N, 5), torch.randint(0, 2, (N,)))
loader = DataLoader(data, batch_size=BATCH, {order})
per_sample = vmap(grad(lambda w, x: (w * x).sum()), in_dims=(None, 0))
weights = torch.zeros(5)
for epoch in range(6):
    for xb, yb in loader:
        g = per_sample(weights, xb)
        factor = (CLIP / (g.norm(dim=1) + 1e-6)).clamp(max=1.0)
        summed = (factor[:, None] * g).sum(0)
        weights -= 0.1 * (summed + SIGMA * CLIP * torch.randn_like(summed)) / BATCH
event = {event}
accountant = dp_accounting.rdp.RdpAccountant()
accountant.compose(dp_accounting.SelfComposedDpEvent(event, 6 * N // BATCH))
print(accountant.get_epsilon(1e-5))
'''
WITHOUT_REPLACEMENT = ("dp_accounting.SampledWithoutReplacementDpEvent(N, BATCH, "
                       "dp_accounting.GaussianDpEvent(SIGMA))")
POISSON = "dp_accounting.PoissonSampledDpEvent(BATCH / N, dp_accounting.GaussianDpEvent(SIGMA))"


def _dp102(tmp_path: Path, event: str, order: str = "shuffle=True", batch: str = "200"):
    code = LOADER_LOOP.format(event=event, order=order, batch=batch)
    project = make_project(tmp_path, {"train.py": code})
    pipelines = build_pipelines(project)
    return pipelines, [f for f in evaluate(pipelines, project) if f.rule == "DP102"]


@pytest.mark.parametrize("order", ["shuffle=True", "shuffle=False"])
def test_fixed_size_batches_accounted_without_replacement_fire_and_say_so(
        tmp_path: Path, order: str) -> None:
    [pipeline], [finding] = _dp102(tmp_path, WITHOUT_REPLACEMENT, order)
    assert pipeline.accountant.assumes == "SGM+without-replacement"
    assert finding.message.endswith("assumes a random subsample drawn without replacement at "
                                    "every step")


def test_the_poisson_wording_is_kept_for_poisson_accountants(tmp_path: Path) -> None:
    [pipeline], [finding] = _dp102(tmp_path, POISSON)
    assert pipeline.accountant.assumes == "SGM+poisson"
    assert finding.message.endswith("assumes Poisson subsampling")


def test_one_batch_that_is_the_whole_dataset_is_exempt_under_either_assumption(
        tmp_path: Path) -> None:
    for name, event in (("wor", WITHOUT_REPLACEMENT), ("poisson", POISSON)):
        _, findings = _dp102(tmp_path / name, event, batch="N")
        assert findings == [], name
