"""A scan of a DP library's own repository: the package at its root is the library for the
tutorials beside it (they are judged as its users, by import-qualified name), and the
library's own modules are no user pipelines."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpcheck.rules.evaluate import evaluate
from dpcheck.pipelines import build_pipelines
from tests.pipelines.builder import make_project

FILES = {
    "setup.py": "from setuptools import setup\nsetup(name='tensorflow_privacy')\n",
    "tensorflow_privacy/__init__.py": "from tensorflow_privacy.optimizers import DPKerasSGDOptimizer\n",
    "tensorflow_privacy/optimizers.py": '''
import tensorflow as tf


class DPKerasSGDOptimizer(tf.keras.optimizers.SGD):
    def __init__(self, l2_norm_clip, noise_multiplier, num_microbatches=None, **kwargs):
        super().__init__(**kwargs)
        self.clip, self.sigma, self.parts = l2_norm_clip, noise_multiplier, num_microbatches

    def noisy_mean(self, per_example):
        clipped = [tf.clip_by_norm(g, self.clip) for g in per_example]
        total = tf.add_n(clipped)
        total += tf.random.normal(tf.shape(total), stddev=self.clip * self.sigma)
        return total / self.parts


def train_here(data, labels):
    model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
    model.compile(optimizer=DPKerasSGDOptimizer(1.0, 1.1, 32), loss="mse")
    model.fit(data, labels, batch_size=32, epochs=3)
''',
    "tutorials/train.py": '''
import dp_accounting
import tensorflow as tf
from tensorflow_privacy import DPKerasSGDOptimizer

N, BATCH, EPOCHS, SIGMA = 60000, 250, 15, 1.1


def main():
    (x, y), _ = tf.keras.datasets.mnist.load_data()
    model = tf.keras.Sequential([tf.keras.layers.Flatten(), tf.keras.layers.Dense(10)])
    optimizer = DPKerasSGDOptimizer(l2_norm_clip=1.0, noise_multiplier=SIGMA,
                                    num_microbatches=BATCH, learning_rate=0.1)
    loss = tf.keras.losses.SparseCategoricalCrossentropy(
        from_logits=True, reduction=tf.losses.Reduction.NONE)
    model.compile(optimizer=optimizer, loss=loss)
    model.fit(x, y, batch_size=BATCH, epochs=EPOCHS)
    accountant = dp_accounting.rdp.RdpAccountant()
    accountant.compose(dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(BATCH / N, dp_accounting.GaussianDpEvent(SIGMA)),
        EPOCHS * N // BATCH))
    print(accountant.get_epsilon(1e-5))


if __name__ == "__main__":
    main()
''',
}


def test_the_tutorial_is_judged_as_a_user_of_the_library_at_the_root(tmp_path: Path) -> None:
    project = make_project(tmp_path, FILES)
    pipelines = build_pipelines(project)
    assert [(p.path, p.mechanism, p.sampling) for p in pipelines] == [
        ("tutorials/train.py", "fixed-mean", "shuffle")]
    assert sorted(f.rule for f in evaluate(pipelines, project)) == ["DP102"]


KERAS_MODEL = '''
import dp_accounting
import tensorflow as tf
from tensorflow_privacy.privacy.keras_models.dp_keras_model import DPSequential

N, BATCH, EPOCHS, SIGMA = 60000, 250, 15, 1.1


def main():
    (x, y), _ = tf.keras.datasets.mnist.load_data()
    model = DPSequential(l2_norm_clip=1.0, noise_multiplier=SIGMA, num_microbatches={parts},
                         layers=[tf.keras.layers.Flatten(), tf.keras.layers.Dense(10)])
    model.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss="sparse_categorical_crossentropy")
    model.fit(x, y, batch_size=BATCH, epochs=EPOCHS)
    accountant = dp_accounting.rdp.RdpAccountant()
    accountant.compose(dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(BATCH / N, dp_accounting.GaussianDpEvent(SIGMA)),
        EPOCHS * N // BATCH))
    print(accountant.get_epsilon(1e-5))


if __name__ == "__main__":
    main()
'''


def test_a_dp_keras_model_is_the_dp_step_of_its_pipeline(tmp_path: Path) -> None:
    """TF-Privacy's DPSequential clips, noises and divides by num_microbatches (the batch size
    when None) in its own train_step: a DP step matched by qualified name, like the optimizers."""
    project = make_project(tmp_path, {"train.py": KERAS_MODEL.format(parts="BATCH"),
                                      "requirements.txt": "tensorflow-privacy==0.9.0\n"})
    [pipeline] = build_pipelines(project)
    assert (pipeline.mechanism, pipeline.sampling) == ("fixed-mean", "shuffle")
    assert [f.rule for f in evaluate([pipeline], project)] == ["DP102"]


ENGINE_REPOSITORY = {
    "setup.py": "from setuptools import setup\nsetup(name='{package}')\n",
    "{package}/__init__.py": "from {package}.engine import PrivacyEngine\n",
    "{package}/engine.py": '''
import torch


class PrivacyEngine:
    def __init__(self, module, *, batch_size, sample_size, epochs, noise_multiplier):
        self.module, self.batch_size, self.sigma = module, batch_size, noise_multiplier
        self.sample_rate = batch_size / sample_size

    def noisy_mean(self, per_example):
        clipped = [g * torch.clamp(1.0 / (g.norm() + 1e-6), max=1.0) for g in per_example]
        total = torch.stack(clipped).sum(0)
        total += torch.normal(0.0, self.sigma, size=total.shape)
        return total / self.batch_size
''',
    "examples/run.py": '''
import torch
from torch.utils.data import DataLoader, TensorDataset

from {package} import PrivacyEngine


def main():
    data = TensorDataset(torch.randn(20000, 8), torch.randint(0, 2, (20000,)))
    loader = DataLoader(data, batch_size={batch}, shuffle={shuffle})
    model = torch.nn.Linear(8, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    engine = PrivacyEngine(model, batch_size={batch}, sample_size=len(data), epochs=3,
                           noise_multiplier=1.0)
    engine.attach(optimizer)
    for epoch in range(3):
        for x, y in loader:
            torch.nn.functional.cross_entropy(model(x), y).backward()
            optimizer.step()
            optimizer.zero_grad()


if __name__ == "__main__":
    main()
''',
}


def _engine_repository(shuffle: bool, package: str = "fastDP") -> dict[str, str]:
    files = {name.format(package=package): text.replace("{package}", package)
             for name, text in ENGINE_REPOSITORY.items()}
    files["examples/run.py"] = files["examples/run.py"].format(batch=200, shuffle=shuffle)
    return files


@pytest.mark.parametrize(("package", "accountant"), [
    ("fastDP", "fastdp"), ("private_transformers", "private-transformers")])
def test_an_example_of_a_dp_library_s_own_engine_is_judged_by_the_catalog(
        tmp_path: Path, package: str, accountant: str) -> None:
    """The engine of the library at the root (a library of the DP-library table whose engine
    the catalog describes) is matched by qualified name: the example is its user (fixed-size
    batches divided by the configured batch, accounted for Poisson subsampling with
    sample_rate = batch_size / sample_size), and the engine's own module makes no pipeline
    although it clips, noises and divides."""
    project = make_project(tmp_path, _engine_repository(shuffle=True, package=package))
    pipelines = build_pipelines(project)
    assert [(p.path, p.mechanism, p.sampling, p.accountant.name, p.accountant.assumes)
            for p in pipelines] == [("examples/run.py", "fixed-mean", "shuffle", accountant,
                                     "SGM+poisson")]
    assert pipelines[0].params["q"].value == 200 / 20000
    assert [f.rule for f in evaluate(pipelines, project)] == ["DP102"]


def test_a_sequential_example_of_the_library_s_engine_is_still_not_poisson(tmp_path: Path) -> None:
    project = make_project(tmp_path, _engine_repository(shuffle=False))
    [pipeline] = build_pipelines(project)
    assert (pipeline.mechanism, pipeline.sampling) == ("fixed-mean", "shuffle")
    assert [f.rule for f in evaluate([pipeline], project)] == ["DP102"]
