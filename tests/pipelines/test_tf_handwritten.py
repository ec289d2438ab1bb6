"""Hand-written TensorFlow 2 DP-SGD (fast-dpsgd's ``tf2dp.py``, bench/REAL_REPOS.md): per-example
gradients from ``tf.vectorized_map`` or ``GradientTape.jacobian``, per-example clipping,
``tf.random.normal`` noise and a divisor written with ``tf.cast``; noise that is not DP-SGD
(on the inputs, or on a batch gradient clipped once as a whole) is no pipeline."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.pipelines.builder import pipelines_of

REQUIREMENTS = "tensorflow==2.15.1\nnumpy==1.26.4\n"

VECTORIZED = '''
import numpy as np
import tensorflow as tf

CLIP, SIGMA, BATCH = 1.0, 1.3, 64


def example_grads(model, example):
    x, y = example
    with tf.GradientTape() as tape:
        loss = tf.keras.losses.mse(y[None], model(x[None]))
    grads = tape.gradient(loss, model.trainable_variables)
    return [tf.clip_by_norm(g, CLIP) for g in grads]


def step(model, opt, xb, yb):
    per_example_grads = tf.vectorized_map(lambda e: example_grads(model, e), (xb, yb))
    summed_grads = [tf.reduce_sum(g, axis=0) for g in per_example_grads]
    noisy_grads = [g + tf.random.normal(tf.shape(g), stddev=SIGMA * CLIP) for g in summed_grads]
    opt.apply_gradients(zip([g / tf.cast({divisor}, tf.float32) for g in noisy_grads],
                            model.trainable_variables))


def main():
    x, y = np.load("x.npy"), np.load("y.npy")
    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    opt = tf.keras.optimizers.SGD(0.1)
    for start in range(0, len(x), BATCH):
        step(model, opt, x[start:start + BATCH], y[start:start + BATCH])


main()
'''


@pytest.mark.parametrize(("divisor", "mechanism", "note"), [
    ("BATCH", "SGM", "constant"),
    # tf.cast(tf.shape(xb)[0]) is read as xb.shape[0]; xb slices the arrays np.load gives (the
    # dataset), so it is a batch: realized. The slicing loop is not a sampler dpcheck reads,
    # so the sampling, and with it the update rule, stay undecided.
    ("tf.shape(xb)[0]", "unknown", "realized"),
])
def test_vectorized_map_per_example_clipping(tmp_path: Path, divisor: str, mechanism: str,
                                             note: str) -> None:
    pipelines = pipelines_of(tmp_path, {"train.py": VECTORIZED.format(divisor=divisor),
                                        "requirements.txt": REQUIREMENTS})
    assert len(pipelines) == 1
    found = pipelines[0]
    assert found.mechanism == mechanism
    divisors = [e for e in found.evidence if e.role == "divisor"]
    assert divisors and note in divisors[0].note
    assert any(e.role == "per-sample-grad" for e in found.evidence)
    assert found.params["sigma"].value == pytest.approx(1.3)
    assert found.params["clip"].value == pytest.approx(1.0)


JACOBIAN = '''
import numpy as np
import tensorflow as tf

C, SIGMA = 0.5, 1.0


def main():
    x, y = np.load("x.npy"), np.load("y.npy")
    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    for i in range(0, 1000, 50):
        with tf.GradientTape() as tape:
            losses = tf.keras.losses.mse(y[i:i + 50], model(x[i:i + 50]))
        jacobians = tape.jacobian(losses, model.trainable_variables)
        norms = tf.sqrt(tf.add_n([tf.reduce_sum(tf.square(j), axis=[1, 2]) for j in jacobians]))
        scale = tf.minimum(1.0, C / norms)
        for var, jac in zip(model.trainable_variables, jacobians):
            clipped_grads = jac * scale[:, None, None]
            noisy_grad = tf.reduce_sum(clipped_grads, 0) + {noise}
            var.assign_sub(0.1 * noisy_grad)


main()
'''


@pytest.mark.parametrize("noise", [
    "tf.random.normal(var.shape, stddev=SIGMA * C)",
    "tf.random.stateless_normal(var.shape, seed=[1, i], stddev=SIGMA * C)",
])
def test_gradient_tape_jacobian_is_per_example(tmp_path: Path, noise: str) -> None:
    pipelines = pipelines_of(tmp_path, {"train.py": JACOBIAN.replace("{noise}", noise),
                                        "requirements.txt": REQUIREMENTS})
    assert len(pipelines) == 1
    assert pipelines[0].mechanism == "SGM"
    assert any(e.role == "per-sample-grad" for e in pipelines[0].evidence)
    assert pipelines[0].params["sigma"].value == pytest.approx(1.0)


TRAPS = {
    "input noise": '''
    x_noisy = xb + tf.random.normal(tf.shape(xb), stddev=0.1)
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.keras.losses.mse(yb, model(x_noisy)))
    grads, _ = tf.clip_by_global_norm(tape.gradient(loss, model.trainable_variables), 1.0)
    opt.apply_gradients(zip(grads, model.trainable_variables))
''',
    "noise after one global clip": '''
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.keras.losses.mse(yb, model(xb)))
    grads, _ = tf.clip_by_global_norm(tape.gradient(loss, model.trainable_variables), 1.0)
    noisy_grads = [g + tf.random.normal(tf.shape(g), stddev=0.01) for g in grads]
    opt.apply_gradients(zip(noisy_grads, model.trainable_variables))
''',
}


@pytest.mark.parametrize("body", TRAPS.values(), ids=list(TRAPS))
def test_noise_that_is_not_dp_sgd_is_no_pipeline(tmp_path: Path, body: str) -> None:
    code = '''
import numpy as np
import tensorflow as tf


def step(model, opt, xb, yb):''' + body + '''

def main():
    x, y = np.load("x.npy"), np.load("y.npy")
    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    opt = tf.keras.optimizers.SGD(0.1)
    for start in range(0, len(x), 32):
        step(model, opt, x[start:start + 32], y[start:start + 32])


main()
'''
    assert pipelines_of(tmp_path, {"train.py": code, "requirements.txt": REQUIREMENTS}) == []
