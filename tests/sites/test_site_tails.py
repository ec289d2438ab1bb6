"""The summary keeps the source text of the statements the classifiers quote as evidence: every
Gaussian draw and clip-by-norm API they recognise, the bounds of a clip factor
(``clamp_max``) and the optimizer calls that apply a noisy update, so a finding's evidence shows
the code, not a placeholder."""

from __future__ import annotations

from pathlib import Path

from dpcheck.pipelines.vocabulary import vocabulary
from dpcheck.sites.summary import SITE_TAILS, summarize_source
from tests.pipelines.builder import pipelines_of


def test_every_noise_draw_and_clip_api_the_classifiers_know_keeps_its_text() -> None:
    words = vocabulary()
    assert words["gaussian_draws"].tails <= SITE_TAILS
    assert words["norm_clips"].tails <= SITE_TAILS


def test_update_and_clip_factor_statements_keep_their_text() -> None:
    source = ("factor = torch.clamp_max(C * norms.reciprocal(), 1.0)\n"
              "optimizer.apply_gradients(zip(grads, variables))\n"
              "noise = tf.random.stateless_normal(shape, seed)\n"
              "count = len(batch)\n")
    stmts = summarize_source(source, "m.py")["scopes"]["<module>"]["stmts"]
    assert [s.get("src") for s in stmts] == [
        "factor = torch.clamp_max(C * norms.reciprocal(), 1.0)",
        "optimizer.apply_gradients(zip(grads, variables))",
        "noise = tf.random.stateless_normal(shape, seed)",
        None,
    ]


TF2_LOOP = '''
import dp_accounting
import numpy as np
import tensorflow as tf

RATE = 0.01
SIGMA = 1.0
CLIP = 1.0


def example_grad(model, x, y):
    with tf.GradientTape() as tape:
        loss = tf.keras.losses.sparse_categorical_crossentropy(y[None], model(x[None]))
    grads = tape.gradient(loss, model.trainable_variables)
    clipped, _ = tf.clip_by_global_norm(grads, CLIP)
    return clipped


def main():
    images, labels = np.load("x.npy"), np.load("y.npy")
    model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
    optimizer = tf.keras.optimizers.SGD(0.1)
    for step in range(1000):
        chosen = np.flatnonzero(np.random.random(len(images)) < RATE)
        per_example = tf.vectorized_map(
            lambda e: example_grad(model, e[0], e[1]), (images[chosen], labels[chosen]))
        seed = tf.constant([step, 0])
        noised = [tf.reduce_sum(g, axis=0) + tf.random.stateless_normal(
            tf.shape(g)[1:], seed, stddev=SIGMA * CLIP) for g in per_example]
        optimizer.apply_gradients(zip(noised, model.trainable_variables))
    accountant = dp_accounting.rdp.RdpAccountant()
    accountant.compose(dp_accounting.SelfComposedDpEvent(dp_accounting.PoissonSampledDpEvent(
        RATE, dp_accounting.GaussianDpEvent(SIGMA)), 1000))


if __name__ == "__main__":
    main()
'''


def test_clip_and_noise_evidence_quote_the_code(tmp_path: Path) -> None:
    pipelines = pipelines_of(tmp_path, {"train.py": TF2_LOOP,
                                        "requirements.txt": "tensorflow==2.15.1\n"})
    assert len(pipelines) == 1
    notes = {e.role: e.note for e in pipelines[0].evidence}
    assert notes["clip"] == "clipped, _ = tf.clip_by_global_norm(grads, CLIP)"
    assert notes["noise"].startswith("noised = [tf.reduce_sum(g, axis=0) + "
                                     "tf.random.stateless_normal(")
