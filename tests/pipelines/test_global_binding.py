"""A module name that a function assigns under ``global`` holds that function's value when other
functions read it (the GDP tutorials' ``global microbatches; microbatches = len(chosen)`` before
each step): the index binds such reads to that assignment, keeps the module value for reads at
module level and for plain locals of the same name, and decides nothing when several functions
store different values."""

from __future__ import annotations

from pathlib import Path

from dpcheck.model import Pipeline
from dpcheck.pipelines.binding import Binding
from dpcheck.pipelines.index import ProjectIndex
from dpcheck.pipelines.scope import Ctx
from tests.pipelines.builder import make_project, pipelines_of

MODULE = '''
import numpy as np

microbatches = 100


def model_fn():
    return make_optimizer(num_microbatches=microbatches)


def main():
    for _ in range(10):
        chosen = np.flatnonzero(np.random.random_sample(5000) < 0.02)
        {declaration}
        microbatches = len(chosen)
        train(model_fn)
{extra}

summary_batches = microbatches
'''

SECOND_WRITER = '''

def evaluate():
    global microbatches
    microbatches = 1
'''


def _index(tmp_path: Path, declaration: str = "global microbatches",
           extra: str = "") -> ProjectIndex:
    source = MODULE.format(declaration=declaration, extra=extra)
    return ProjectIndex(make_project(tmp_path, {"train.py": source}))


def _read_in_model_fn(index: ProjectIndex) -> Binding | None:
    return index.bind("microbatches", Ctx("train.py", "model_fn", 6))


def test_a_read_in_another_function_binds_to_the_global_assignment(tmp_path: Path) -> None:
    binding = _read_in_model_fn(_index(tmp_path))
    assert binding is not None and binding.kind == "assign"
    assert binding.ctx.scope == "main" and binding.line == 14
    assert binding.ir == ["call", ["r", "len"], [["r", "chosen"]], {}, [14, 24, 14, 35], {}]


def test_a_local_of_the_same_name_does_not_rebind_the_module_name(tmp_path: Path) -> None:
    binding = _read_in_model_fn(_index(tmp_path, declaration="pass"))
    assert binding is not None and binding.ctx.scope == "<module>"
    assert binding.ir == ["n", 100]


def test_a_module_level_read_keeps_the_module_value(tmp_path: Path) -> None:
    binding = _index(tmp_path).bind("microbatches", Ctx("train.py", "<module>", 18))
    assert binding is not None and binding.ctx.scope == "<module>"
    assert binding.ir == ["n", 100]


def test_several_functions_storing_the_name_leave_it_undecided(tmp_path: Path) -> None:
    binding = _read_in_model_fn(_index(tmp_path, extra=SECOND_WRITER))
    assert binding is not None and binding.kind == "global"
    assert binding.assigned() is None


def test_the_writer_reading_its_own_global_is_not_redirected_to_itself(tmp_path: Path) -> None:
    binding = _index(tmp_path).bind("microbatches", Ctx("train.py", "main", 13))
    assert binding is not None and binding.ctx.scope == "<module>"


GDP_STYLE = '''
import numpy as np
import tensorflow as tf
from absl import app, flags
from tensorflow import estimator as tf_estimator
from tensorflow.compat.v1 import estimator as v1_estimator
from tensorflow_privacy.privacy.analysis.gdp_accountant import compute_eps_poisson
from tensorflow_privacy.privacy.optimizers import dp_optimizer

flags.DEFINE_float("noise_multiplier", 1.0, "sigma")
FLAGS = flags.FLAGS

microbatches = 50
n_examples = 10000


def model_fn(features, labels, mode):
    logits = tf.keras.layers.Dense(2)(features["x"])
    loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    opt = dp_optimizer.DPGradientDescentGaussianOptimizer(
        l2_norm_clip=1.0, noise_multiplier=FLAGS.noise_multiplier,
        num_microbatches=microbatches, learning_rate=0.1)
    train_op = opt.minimize(loss=loss, global_step=tf.compat.v1.train.get_global_step())
    return tf_estimator.EstimatorSpec(mode=mode, loss=tf.reduce_mean(loss), train_op=train_op)


def main(_):
    est = tf_estimator.Estimator(model_fn=model_fn)
    rows = np.load("x.npy")
    for epoch in range(1, 4):
        for _ in range(n_examples // 50):
            chosen = np.flatnonzero(np.random.random_sample(n_examples) < 50 / n_examples)
            {declaration}
            microbatches = len(chosen)
            est.train(input_fn=v1_estimator.inputs.numpy_input_fn(
                x={{"x": rows[chosen]}}, batch_size=len(chosen), num_epochs=1), steps=1)
        print(compute_eps_poisson(epoch, FLAGS.noise_multiplier, n_examples, 50, 1e-5))


if __name__ == "__main__":
    app.run(main)
'''
REQUIREMENTS = "tensorflow==2.15.1\ntensorflow-privacy==0.9.0\nabsl-py==2.1.0\n"


def _gdp_pipeline(tmp_path: Path, declaration: str) -> Pipeline:
    files = {"train.py": GDP_STYLE.format(declaration=declaration),
             "requirements.txt": REQUIREMENTS}
    pipelines = pipelines_of(tmp_path, files)
    assert len(pipelines) == 1, pipelines
    return pipelines[0]


def test_the_optimizer_divides_by_the_realized_batch_the_global_stores(tmp_path: Path) -> None:
    found = _gdp_pipeline(tmp_path, "global microbatches")
    assert (found.mechanism, found.sampling) == ("ASGM", "poisson")
    assert found.accountant.name == "tf-privacy-gdp"
    assert any("realized" in e.note for e in found.evidence if e.role == "update")


def test_without_global_the_optimizer_reads_the_module_constant(tmp_path: Path) -> None:
    found = _gdp_pipeline(tmp_path, "pass")
    assert found.mechanism == "SGM"
