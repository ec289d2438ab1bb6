"""``make_private`` of another library (jax_privacy's Keras API) is not Opacus: matched by the
import it comes from, not by its name (found scanning google-deepmind/jax_privacy, whose Keras
example and notebooks got an error-severity DP101 and a DP105 for Opacus)."""

from __future__ import annotations

from pathlib import Path

from dpcheck.pipelines import build_pipelines
from tests.pipelines.builder import make_project

KERAS = '''
import keras
from jax_privacy import keras_api

model = keras.Sequential([keras.layers.Dense(10)])
params = keras_api.DPKerasConfig(epsilon=1.0, delta=1e-5, clipping_norm=1.0, batch_size=64,
                                 gradient_accumulation_steps=1, train_steps=100, train_size=6000)
model = keras_api.make_private(model, params)
model.fit(x, y, batch_size=64, epochs=2)
'''

OPACUS_MODULE = '''
import torch
import opacus.privacy_engine as engines

engine = engines.PrivacyEngine()
model, optimizer, loader = engine.make_private(module=model, optimizer=optimizer,
                                               data_loader=loader, noise_multiplier=1.0,
                                               max_grad_norm=1.0)
for x, y in loader:
    optimizer.step()
'''


def test_another_librarys_make_private_is_not_opacus(tmp_path: Path) -> None:
    project = make_project(tmp_path, {"train.py": KERAS, "requirements.txt": "jax-privacy\n"})
    assert [p for p in build_pipelines(project) if p.library == "opacus"] == []


def test_opacus_reached_through_a_module_import_still_is(tmp_path: Path) -> None:
    project = make_project(tmp_path, {"train.py": OPACUS_MODULE,
                                      "requirements.txt": "opacus==1.4.0\n"})
    (pipeline,) = build_pipelines(project)
    assert pipeline.library == "opacus==1.4.0" and pipeline.mechanism == "FEASGM"
