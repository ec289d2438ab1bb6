"""A scan of a DP library's own repository: the package at its root is the library for the
tutorials beside it (they are judged as its users, by import-qualified name), and the
library's own modules are no user pipelines."""

from __future__ import annotations

from pathlib import Path

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
