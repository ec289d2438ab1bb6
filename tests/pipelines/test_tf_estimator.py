"""TF-Privacy estimator pipelines (the tensorflow/privacy tutorials, bench/REAL_REPOS.md): the
optimizer built in a ``model_fn`` reached as ``Estimator(model_fn=...)``, the input fn a factory
returns, ``numpy_input_fn`` batches, the GDP accountant and the GDP tutorials' ``global
microbatches``; and the sample rate ``B / N`` given to an accountant as the source of N."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpcheck.model import Pipeline
from tests.pipelines.builder import pipelines_of

REQUIREMENTS = "tensorflow==2.15.1\ntensorflow-privacy==0.9.0\nabsl-py==2.1.0\n"

HEADER = '''
import numpy as np
import tensorflow as tf
from absl import app, flags
from tensorflow import estimator as tf_estimator
from tensorflow.compat.v1 import estimator as v1_estimator
from tensorflow_privacy.privacy.optimizers import dp_optimizer

flags.DEFINE_float("noise_multiplier", 0.5, "sigma")
flags.DEFINE_integer("batch_size", 100, "batch")
FLAGS = flags.FLAGS
'''

MODEL_FN = '''
def model_fn(features, labels, mode):
    logits = tf.keras.layers.Dense(10)(features["x"])
    loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    opt = dp_optimizer.DPAdamGaussianOptimizer(
        l2_norm_clip=1.0, noise_multiplier=FLAGS.noise_multiplier,
        num_microbatches={microbatches}, learning_rate=0.01)
    train_op = opt.minimize(loss=loss, global_step=tf.compat.v1.train.get_global_step())
    return tf_estimator.EstimatorSpec(mode=mode, loss=tf.reduce_mean(loss), train_op=train_op)
'''


def _line(text: str, marker: str) -> int:
    """The line of ``marker`` in ``text`` as the builder writes it (leading newline dropped)."""
    return next(n for n, line in enumerate(text.lstrip("\n").splitlines(), 1) if marker in line)


def _code(main: str, microbatches: str) -> str:
    return HEADER + MODEL_FN.format(microbatches=microbatches) + main


def _only(tmp_path: Path, main: str, microbatches: str = "FLAGS.batch_size") -> Pipeline:
    code = _code(main, microbatches)
    pipelines = pipelines_of(tmp_path, {"train.py": code, "requirements.txt": REQUIREMENTS})
    assert len(pipelines) == 1, pipelines
    return pipelines[0]


def test_model_fn_passed_by_keyword_is_reached(tmp_path: Path) -> None:
    found = _only(tmp_path, '''
def main(_):
    est = tf_estimator.Estimator(model_fn=model_fn)
    est.train(input_fn=v1_estimator.inputs.numpy_input_fn(
        x={"x": np.load("x.npy")}, batch_size=FLAGS.batch_size, num_epochs=3, shuffle=True))


if __name__ == "__main__":
    app.run(main)
''')
    assert (found.mechanism, found.sampling) == ("fixed-mean", "shuffle")
    assert found.params["sigma"].value == 0.5
    assert found.params["batch_size"].value == 100
    assert found.params["epochs"].value == 3
    assert any(e.role == "sampler" and "numpy_input_fn(shuffle=True)" in e.note
               for e in found.evidence)


def test_a_model_fn_nobody_passes_is_its_own_entry_not_mains(tmp_path: Path) -> None:
    """The script does not reach it (no pipeline of ``train.py``), but DP code that nothing in
    the repository calls (a notebook may) is analysed from the function itself: never silent."""
    code = _code('''
def main(_):
    est = tf_estimator.Estimator(model_fn=None)


if __name__ == "__main__":
    app.run(main)
''', "100")
    found = pipelines_of(tmp_path, {"train.py": code, "requirements.txt": REQUIREMENTS})
    assert [p.entry for p in found] == ["train.py::model_fn"]


def test_input_fn_returned_by_a_factory_in_another_module_is_the_sampler(tmp_path: Path) -> None:
    inputs = '''
import tensorflow as tf


def make_input_fn(batch):
    def input_fn(params=None):
        return tf.data.Dataset.from_tensor_slices(tf.zeros([5000, 8])).shuffle(5000).batch(batch)
    return input_fn
'''
    main = '''
import inputs


def main(_):
    est = tf_estimator.Estimator(model_fn=model_fn)
    est.train(input_fn=inputs.make_input_fn(FLAGS.batch_size))


if __name__ == "__main__":
    app.run(main)
'''
    pipelines = pipelines_of(tmp_path, {"train.py": _code(main, "FLAGS.batch_size"),
                                        "inputs.py": inputs,
                                        "requirements.txt": REQUIREMENTS})
    assert len(pipelines) == 1
    sampler = next(e for e in pipelines[0].evidence if e.role == "sampler")
    assert pipelines[0].sampling == "shuffle"
    assert (sampler.span.path, sampler.span.line) == ("inputs.py", _line(inputs, ".shuffle("))
    # B of the .batch(B) after the shuffle: the factory's parameter, passed FLAGS.batch_size.
    assert pipelines[0].params["batch_size"].value == 100


@pytest.mark.parametrize(("flag", "note"), [("False", "sequential"), ("True", "shuffled")])
def test_the_evaluation_input_fn_is_not_the_sampler(tmp_path: Path, flag: str, note: str) -> None:
    main = f'''
def main(_):
    est = tf_estimator.Estimator(model_fn=model_fn)
    train_input_fn = v1_estimator.inputs.numpy_input_fn(
        x={{"x": np.load("x.npy")}}, batch_size=FLAGS.batch_size, shuffle={flag})
    eval_input_fn = v1_estimator.inputs.numpy_input_fn(
        x={{"x": np.load("t.npy")}}, batch_size=500, shuffle={not eval(flag)})
    est.train(input_fn=train_input_fn)
    est.evaluate(input_fn=eval_input_fn)


if __name__ == "__main__":
    app.run(main)
'''
    found = _only(tmp_path, main)
    samplers = [e for e in found.evidence if e.role == "sampler"]
    assert [e.span.line for e in samplers] == [_line(_code(main, ""), "train_input_fn =")]
    assert note in samplers[0].note
    assert found.params["batch_size"].value == 100


def test_an_unresolved_shuffle_flag_leaves_the_sampling_unknown(tmp_path: Path) -> None:
    found = _only(tmp_path, '''
def main(_, shuffle_it):
    est = tf_estimator.Estimator(model_fn=model_fn)
    est.train(input_fn=v1_estimator.inputs.numpy_input_fn(
        x={"x": np.load("x.npy")}, batch_size=FLAGS.batch_size, shuffle=shuffle_it))


if __name__ == "__main__":
    app.run(main)
''')
    assert found.sampling == "unknown"


GDP_MAIN = '''
from tensorflow_privacy.privacy.analysis.gdp_accountant import compute_eps_poisson

expected = 100
microbatches = 100
n_examples = 20000


def main(_):
    est = tf_estimator.Estimator(model_fn=model_fn)
    rows = np.load("x.npy")
    for epoch in range(1, 6):
        for _ in range(n_examples // expected):
            keep = np.random.random_sample(n_examples) > 1 - expected / n_examples
            chosen = np.flatnonzero(keep)
            {rebind}
            est.train(input_fn=v1_estimator.inputs.numpy_input_fn(
                x={{"x": rows[chosen]}}, batch_size=len(chosen), num_epochs=1, shuffle=True),
                steps=1)
        print(compute_eps_poisson(epoch, FLAGS.noise_multiplier, n_examples, expected, 1e-5))


if __name__ == "__main__":
    app.run(main)
'''


def test_gdp_sampling_and_accountant(tmp_path: Path) -> None:
    found = _only(tmp_path, GDP_MAIN.format(rebind="pass"), microbatches="microbatches")
    assert found.sampling == "poisson"
    assert found.params["q"].value == pytest.approx(0.005)
    assert found.params["steps"].value == 5 * 200
    assert (found.accountant.name, found.accountant.assumes) == ("tf-privacy-gdp", "SGM+poisson")
    assert found.accountant.q is not None and found.accountant.q.value == pytest.approx(0.005)
    assert found.mechanism == "SGM"


def test_a_module_constant_rebound_through_global_is_the_realized_batch(
        tmp_path: Path) -> None:
    rebind = "global microbatches\n            microbatches = len(chosen)"
    found = _only(tmp_path, GDP_MAIN.format(rebind=rebind), microbatches="microbatches")
    assert found.mechanism == "ASGM"
    assert any("(realized)" in e.note for e in found.evidence if e.role == "update")


KERAS = '''
import dp_accounting
import numpy as np
import tensorflow as tf
from tensorflow_privacy import DPKerasSGDOptimizer

BATCH = 250
FIT_BATCH = {fit_batch}


def epsilon(steps):
    rate = BATCH / 60000
    event = dp_accounting.PoissonSampledDpEvent(rate, dp_accounting.GaussianDpEvent(0.5))
    accountant = dp_accounting.rdp.RdpAccountant()
    accountant.compose(dp_accounting.SelfComposedDpEvent(event, steps))
    return accountant.get_epsilon(1e-5)


def main():
    x, y = np.load("x.npy"), np.load("y.npy")
    model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
    model.compile(optimizer=DPKerasSGDOptimizer(l2_norm_clip=1.0, noise_multiplier=0.5,
                                                num_microbatches=FIT_BATCH, learning_rate=0.1),
                  loss=tf.keras.losses.SparseCategoricalCrossentropy(reduction="none"))
    model.fit(x, y, epochs=4, batch_size=FIT_BATCH)
    print(epsilon(4 * 60000 // BATCH))


main()
'''


def test_n_comes_from_the_accountant_rate_when_its_batch_agrees(tmp_path: Path) -> None:
    pipelines = pipelines_of(tmp_path, {"train.py": KERAS.format(fit_batch="BATCH"),
                                        "requirements.txt": REQUIREMENTS})
    params = pipelines[0].params
    assert params["N"].value == 60000
    assert "q = B/N" in (params["N"].expression or "")
    assert params["q"].value == pytest.approx(250 / 60000)


@pytest.mark.parametrize("fit_batch", ["20000", "None"])
def test_n_is_not_taken_from_a_rate_whose_batch_is_not_the_code_s(tmp_path: Path,
                                                                 fit_batch: str) -> None:
    pipelines = pipelines_of(tmp_path, {"train.py": KERAS.format(fit_batch=fit_batch),
                                        "requirements.txt": REQUIREMENTS})
    params = pipelines[0].params
    assert "N" not in params
    assert params.get("batch_size") is None or params["batch_size"].value == 20000
