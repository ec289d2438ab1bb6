"""Accountant recognition: which accountant a pipeline reports with, what it assumes, and the
q / steps it is given (resolved statically, for DP103)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.pipelines.builder import pipelines_of

TRAINING = '''
import dp_accounting
import tensorflow as tf
import tensorflow_privacy
from autodp import mechanism_zoo
from prv_accountant.dpsgd import DPSGDAccountant
from tensorflow_privacy import compute_dp_sgd_privacy

(x, y), _ = tf.keras.datasets.mnist.load_data()
model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
optimizer = tensorflow_privacy.DPKerasSGDOptimizer(
    l2_norm_clip=1.0, noise_multiplier=1.1, num_microbatches=256, learning_rate=0.1
)
model.compile(optimizer=optimizer, loss="mse")
model.fit(x, y, epochs=3, batch_size=256)
'''


@pytest.mark.parametrize(
    ("code", "name", "assumes", "q", "steps"),
    [
        ("compute_dp_sgd_privacy(n=60000, batch_size=256, noise_multiplier=1.1, epochs=3,"
         " delta=1e-5)", "tf-privacy-rdp", "SGM+poisson", 256 / 60000, 3 * 60000 / 256),
        ("acc = dp_accounting.pld.PLDAccountant()\n"
         "acc.compose(dp_accounting.PoissonSampledDpEvent(0.01, dp_accounting.GaussianDpEvent(1.1)),"
         " 500)\nacc.get_epsilon(1e-5)", "dp-accounting-pld", "SGM+poisson", 0.01, 500),
        ("event = dp_accounting.SampledWithoutReplacementDpEvent(60000, 256,"
         " dp_accounting.GaussianDpEvent(1.1))\nacc = dp_accounting.rdp.RdpAccountant()\n"
         "acc.compose(event, 700)", "dp-accounting-rdp", "SGM+without-replacement", 256 / 60000,
         700),
        ("acc = DPSGDAccountant(noise_multiplier=1.1, sampling_probability=0.02, eps_error=0.1,"
         " delta_error=1e-9)\nacc.compute_epsilon(num_steps=700, delta=1e-5)",
         "prv-accountant", "SGM+poisson", 0.02, 700),
        ("mechanism = mechanism_zoo.GaussianMechanism(sigma=1.1)", "autodp",
         "SGM+without-replacement", None, None),
        ("print('no accountant')", "none", "unknown", None, None),
    ],
)
def test_accountant_name_assumption_and_arguments(
    tmp_path: Path, code: str, name: str, assumes: str, q: float | None, steps: float | None
) -> None:
    [pipeline] = pipelines_of(tmp_path, {"train.py": TRAINING + code + "\n"})
    accountant = pipeline.accountant
    assert (accountant.name, accountant.assumes) == (name, assumes)
    assert (accountant.q.value if accountant.q else None) == pytest.approx(q)
    assert (accountant.steps.value if accountant.steps else None) == pytest.approx(steps)
    assert (pipeline.mechanism, pipeline.sampling) == ("fixed-mean", "shuffle")
