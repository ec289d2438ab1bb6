"""Parameters, accumulation and the TF-Privacy optimizer are read only from statements that may
run: a dispatch arm the default configuration skips (``if args.mode == "..."`` with another
default) feeds none of them, the same reading ``ProjectIndex.statements`` gives the sampling."""

from __future__ import annotations

from pathlib import Path

from tests.pipelines.builder import pipelines_of

TORCH = '''
import argparse

import torch
from opacus import PrivacyEngine
from torch.utils.data import DataLoader, TensorDataset


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--schedule", default="full")
    parser.add_argument("--epochs", type=int, default=30)
    args = parser.parse_args()
    data = TensorDataset(torch.randn(50000, 8), torch.randint(0, 2, (50000,)))
    loader = DataLoader(data, batch_size=500, shuffle=True)
    model = torch.nn.Linear(8, 2)
    engine = PrivacyEngine()
    model, optimizer, loader = engine.make_private(
        module=model, optimizer=torch.optim.SGD(model.parameters(), lr=0.1), data_loader=loader,
        noise_multiplier=1.0, max_grad_norm=1.0, poisson_sampling=False)
    if args.schedule == "smoke":
        for epoch in range(2):
            for i, (x, y) in enumerate(loader):
                torch.nn.functional.cross_entropy(model(x), y).backward()
                if (i + 1) % 4 != 0:
                    optimizer.signal_skip_step()
                optimizer.step()
                optimizer.zero_grad()
    else:
        for epoch in range(args.epochs):
            for x, y in loader:
                torch.nn.functional.cross_entropy(model(x), y).backward()
                optimizer.step()
                optimizer.zero_grad()
    print(engine.get_epsilon(1e-5))


if __name__ == "__main__":
    main()
'''

TF = '''
from absl import app, flags
import tensorflow as tf
from tensorflow_privacy.privacy.optimizers.dp_optimizer_keras import (
    DPKerasAdamOptimizer, DPKerasSGDOptimizer)

FLAGS = flags.FLAGS
flags.DEFINE_string("optimizer", "sgd", "which DP optimizer")


def main(_):
    (x, y), _ = tf.keras.datasets.mnist.load_data()
    model = tf.keras.Sequential([tf.keras.layers.Flatten(), tf.keras.layers.Dense(10)])
    if FLAGS.optimizer == "adam":
        optimizer = DPKerasAdamOptimizer(l2_norm_clip=3.0, noise_multiplier=0.5,
                                         num_microbatches=250, learning_rate=0.001)
    else:
        optimizer = DPKerasSGDOptimizer(l2_norm_clip=1.0, noise_multiplier=1.1,
                                        num_microbatches=250, learning_rate=0.15)
    loss = tf.keras.losses.SparseCategoricalCrossentropy(
        from_logits=True, reduction=tf.losses.Reduction.NONE)
    model.compile(optimizer=optimizer, loss=loss)
    model.fit(x / 255.0, y, epochs=60, batch_size=250)


if __name__ == "__main__":
    app.run(main)
'''


def test_epoch_loop_and_accumulation_in_a_skipped_arm_feed_nothing(tmp_path: Path) -> None:
    (pipeline,) = pipelines_of(tmp_path, {"train.py": TORCH, "requirements.txt": "opacus==1.4.0\n"})
    params = pipeline.params
    assert params["epochs"].value == 30  # the smoke arm's range(2) does not run
    assert params["batch_size"].value == 500  # its skip-step gate (k = 4) neither
    assert params["steps"].value == 30 * 100
    assert not any(e.role == "accumulation" for e in pipeline.evidence)


def test_tf_optimizer_of_a_skipped_arm_is_not_the_pipelines(tmp_path: Path) -> None:
    (pipeline,) = pipelines_of(tmp_path, {"train.py": TF,
                                          "requirements.txt": "tensorflow-privacy==0.8.10\n"})
    assert pipeline.params["sigma"].value == 1.1
    assert pipeline.params["clip"].value == 1.0
    assert pipeline.params["sigma"].span.line == 17  # the else arm's optimizer
