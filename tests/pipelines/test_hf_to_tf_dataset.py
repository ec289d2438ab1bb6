"""A Hugging Face dataset batched for Keras with ``to_tf_dataset``: fixed-size batches, shuffled or
in order, recognised by where the receiver comes from (the ``datasets`` library), never by the
method's name alone. Real projects on disk and the real builder."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpcheck.pipelines import build_pipelines
from tests.pipelines.builder import make_project

KERAS = '''
import tensorflow as tf
from datasets import load_dataset
from tensorflow_privacy import DPKerasSGDOptimizer

{source}
model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
model.compile(
    optimizer=DPKerasSGDOptimizer(l2_norm_clip=1.0, noise_multiplier=1.3, num_microbatches=16,
                                  learning_rate=0.1),
    loss=tf.keras.losses.SparseCategoricalCrossentropy(
        from_logits=True, reduction=tf.keras.losses.Reduction.NONE))
model.fit(batches, epochs=2)
'''

FROM_HUB = '''
reviews = load_dataset("some_org/reviews")
encoded = reviews.map(lambda rows: {{"ids": rows["text"]}}, batched=True)
batches = encoded["train"].to_tf_dataset(columns=["ids"], label_cols=["label"],
                                         batch_size=16{flag})
'''

OWN_CLASS = '''
class Reviews:
    def to_tf_dataset(self, batch_size, shuffle):
        return tf.data.Dataset.range(10)


batches = Reviews().to_tf_dataset(batch_size=16, shuffle=True)
'''


@pytest.mark.parametrize(("flag", "order"), [(", shuffle=True", "shuffled"),
                                             (", shuffle=False", "sequential"),
                                             ("", "sequential")])
def test_to_tf_dataset_of_a_datasets_object_gives_fixed_size_batches(
        tmp_path: Path, flag: str, order: str) -> None:
    code = KERAS.format(source=FROM_HUB.format(flag=flag))
    [pipeline] = build_pipelines(make_project(tmp_path, {"train.py": code}))
    assert pipeline.sampling == "shuffle"
    assert pipeline.params["batch_size"].value == 16
    notes = [e.note for e in pipeline.evidence if e.role == "sampler"]
    assert any("to_tf_dataset" in n and f"{order} fixed-size batches" in n for n in notes), notes


def test_a_project_method_of_the_same_name_is_not_the_library(tmp_path: Path) -> None:
    code = KERAS.format(source=OWN_CLASS)
    [pipeline] = build_pipelines(make_project(tmp_path, {"train.py": code}))
    assert pipeline.sampling == "unknown"
    assert not [e for e in pipeline.evidence if "to_tf_dataset" in e.note]
