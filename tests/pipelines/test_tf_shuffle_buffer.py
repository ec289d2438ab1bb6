"""A tf.data ``.shuffle(buffer)`` is a (possibly local) shuffle whose buffer is recorded as
evidence and never taken as the dataset size N (the tensorflow/privacy tutorials,
bench/REAL_REPOS.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpcheck.pipelines.sampling.tf_inputs import shuffle_buffer
from dpcheck.sites import summarize_source
from dpcheck.sites.ir import walk
from tests.pipelines.builder import pipelines_of

CODE = '''
import tensorflow as tf
from tensorflow_privacy.privacy.optimizers.dp_optimizer_keras import DPKerasSGDOptimizer

BATCH, BUFFER = 250, 1000


def main():
    train, _ = tf.keras.datasets.mnist.load_data()
    images, labels = train
    data = tf.data.Dataset.from_tensor_slices((images / 255.0, labels))
    {pipeline}
    model = tf.keras.Sequential([tf.keras.layers.Flatten(), tf.keras.layers.Dense(10)])
    opt = DPKerasSGDOptimizer(l2_norm_clip=1.0, noise_multiplier=1.1,
                              num_microbatches=BATCH, learning_rate=0.1)
    loss = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")
    for epoch in range(5):
        for x, y in data.take(-1):
            with tf.GradientTape(persistent=True) as tape:
                vector_loss = loss(y, model(x))
            grads = opt._compute_gradients(vector_loss, model.trainable_variables, tape=tape)
            opt.apply_gradients(grads)


main()
'''


@pytest.mark.parametrize("pipeline", [
    "data = data.shuffle(BUFFER).batch(BATCH)",
    "data = data.shuffle(buffer_size=BUFFER)\n    data = data.batch(BATCH)",
])
def test_the_shuffle_buffer_is_evidence_not_the_dataset_size(tmp_path: Path, pipeline: str) -> None:
    pipelines = pipelines_of(tmp_path, {"train.py": CODE.replace("{pipeline}", pipeline),
                                        "requirements.txt": "tensorflow-privacy==0.8.12\n"})
    assert len(pipelines) == 1
    found = pipelines[0]
    assert found.sampling == "shuffle"
    assert found.params.get("N") is None or found.params["N"].value == 60000
    buffers = [e for e in found.evidence if e.role == "shuffle-buffer"]
    assert buffers and "= 1000 examples" in buffers[0].note


@pytest.mark.parametrize(("drop", "dropped"), [("True", 1), ("False", 0)])
def test_drop_remainder_of_the_batching_is_read(tmp_path: Path, drop: str, dropped: int) -> None:
    """The ``.batch(B, drop_remainder=...)`` after the shuffle is the loader of the batches: its
    flag decides floor(N/B) or ceil(N/B) batches per epoch."""
    code = CODE.replace("{pipeline}", f"data = data.shuffle(BUFFER).batch(BATCH, drop_remainder={drop})")
    [found] = pipelines_of(tmp_path, {"train.py": code,
                                      "requirements.txt": "tensorflow-privacy==0.8.12\n"})
    assert found.params["drop_last"].value == dropped
    assert found.params["batch_size"].value == 250


@pytest.mark.parametrize(("call", "buffer"), [
    ("ds.shuffle(512)", 512),
    ("ds.shuffle(buffer_size=64, seed=1)", 64),
    ("tf.data.Dataset.range(9).shuffle(9)", 9),
    ("np.random.shuffle(idx)", None),
    ("random.shuffle(idx)", None),
    ("rng.shuffle(idx)", None),
    ("np.random.default_rng(0).shuffle(idx)", None),
    # a bare call is a function (a project helper permuting its arguments), not a dataset method
    ("shuffle(features, labels)", None),
    ("shuffle(features, buffer_size=8)", None),
])
def test_only_a_dataset_shuffle_has_a_buffer(call: str, buffer: int | None) -> None:
    summary = summarize_source(f"x = {call}\n", "m.py")
    node = summary["scopes"]["<module>"]["stmts"][0]["e"]
    calls = [n for n in walk(node) if n[0] == "call" and (n[1][-1] == "shuffle" or str(
        n[1][1]).endswith("shuffle"))]
    found = shuffle_buffer(calls[0])
    assert (found[1] if found is not None else None) == buffer
