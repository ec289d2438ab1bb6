"""A pipeline anchored on Gaussian noise on gradients and an accountant, with no per-example clip
in sight (each example's gradient bounded by the data: unit-norm rows, labels in [-1, 1]). The
sampling the accountant assumes is checked however sensitivity is bounded; without a clip no
sigma is read from the noise std (it is not a multiplier of a known bound), only the
accountant's. Noise on gradients without an accountant (a regulariser) and noise that never
reaches a gradient still form no pipeline. A value moved against, scaled, in its own update
(``w = w - lr * d``) is a gradient whatever it is called. Real projects on disk, the real
builder."""

from __future__ import annotations

from pathlib import Path

from tests.pipelines.builder import pipelines_of

REQUIREMENTS = "numpy==1.26.4\ndp-accounting==0.4.4\n"

SCRIPT = '''
import numpy as np
from dp_accounting import dp_event
from dp_accounting.rdp import rdp_privacy_accountant

ROWS, WIDTH, BATCH, EPOCHS, NOISE = 20000, 16, 200, 10, 0.9


def summed(weights, rows, targets):
    return rows.T @ (rows @ weights - targets)


def main():
    rng = np.random.default_rng(1)
    rows = rng.normal(size=(ROWS, WIDTH))
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    targets = np.tanh(rng.normal(size=ROWS))
    weights = np.zeros(WIDTH)
    for _ in range(EPOCHS):
        order = rng.permutation(ROWS)
        for start in range(0, ROWS, BATCH):
            picked = order[start:start + BATCH]
            step = summed(weights, rows[picked], targets[picked])
            step += rng.normal(0.0, NOISE * 2.0, size=WIDTH)
            step = step / BATCH
            weights = weights - 0.1 * step
    ACCOUNTING


if __name__ == "__main__":
    main()
'''

ACCOUNTANT = '''accountant = rdp_privacy_accountant.RdpAccountant()
    accountant.compose(dp_event.PoissonSampledDpEvent(BATCH / ROWS, dp_event.GaussianDpEvent(NOISE)),
                       EPOCHS * ROWS // BATCH)
    print(accountant.get_epsilon(1e-5))'''


def _pipelines(tmp_path: Path, script: str) -> list:
    return pipelines_of(tmp_path, {"train.py": script, "requirements.txt": REQUIREMENTS})


def test_noise_on_an_unclipped_gradient_with_an_accountant_forms_a_pipeline(tmp_path: Path) -> None:
    [pipeline] = _pipelines(tmp_path, SCRIPT.replace("ACCOUNTING", ACCOUNTANT))
    assert (pipeline.mechanism, pipeline.sampling) == ("fixed-mean", "shuffle")
    assert pipeline.accountant.name == "dp-accounting-rdp"
    assert pipeline.params["sigma"].value == 0.9  # the accountant's, not 0.9 * 2.0 from the std
    assert "clip" not in pipeline.params
    [unclipped] = [e for e in pipeline.evidence if e.role == "clip"]
    assert unclipped.note.startswith("no per-example clip seen")


def test_noise_on_an_unclipped_gradient_without_an_accountant_is_no_pipeline(tmp_path: Path) -> None:
    assert _pipelines(tmp_path, SCRIPT.replace("ACCOUNTING", "print(weights)")) == []


def test_noise_that_reaches_no_gradient_is_no_pipeline_even_with_an_accountant(tmp_path: Path) -> None:
    on_inputs = SCRIPT.replace("ACCOUNTING", ACCOUNTANT).replace(
        "step += rng.normal(0.0, NOISE * 2.0, size=WIDTH)",
        "rows[picked] += rng.normal(0.0, NOISE, size=(BATCH, WIDTH))")
    assert _pipelines(tmp_path, on_inputs) == []


def test_a_split_at_a_quantile_of_its_own_draw_is_not_poisson_sampling(tmp_path: Path) -> None:
    """``u < np.percentile(u, 80)`` keeps a fixed fraction of the rows (a train split): the
    threshold comes from the draw itself, so it is no sampling rate and the batches are still
    the permutation's slices (before, the split read as Poisson disagreed with them and left
    the sampling unknown)."""
    split = SCRIPT.replace("ACCOUNTING", ACCOUNTANT).replace(
        "    weights = np.zeros(WIDTH)\n",
        "    u = rng.random(ROWS)\n    kept = u < np.percentile(u, 80)\n"
        "    rows, targets = rows[kept], targets[kept]\n    weights = np.zeros(WIDTH)\n")
    [pipeline] = _pipelines(tmp_path, split)
    assert (pipeline.mechanism, pipeline.sampling) == ("fixed-mean", "shuffle")
    assert not [e for e in pipeline.evidence if "Poisson" in e.note]
