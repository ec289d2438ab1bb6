"""Parameter values through calls: what ``*``/``**`` arguments may supply is not a default,
a simple project helper's return is evaluated with the call's own arguments, and dataset sizes
are followed through unpacked returns of project functions and length-keeping conversions."""

from __future__ import annotations

from pathlib import Path

from dpcheck.pipelines.calls import STAR, argument
from dpcheck.pipelines.index import ProjectIndex
from dpcheck.pipelines.scope import Ctx
from dpcheck.pipelines.values import Evaluator
from dpcheck.sites import summarize_source
from dpcheck.sites.ir import IR
from tests.pipelines.builder import make_project, pipelines_of

PARAMS = ["self", "params", "lr", "max_norm", "stddev"]


def _call(expression: str) -> IR:
    """The IR of a call expression, encoded by the real summarizer."""
    summary = summarize_source(f"value = {expression}\n", "m.py")
    return summary["scopes"]["<module>"]["stmts"][0]["e"]


def test_keyword_and_positional_arguments_are_read_from_the_call() -> None:
    call = _call("Opt(ps, 0.1, stddev=2.0)")
    assert argument(call, PARAMS, "lr") == ["n", 0.1]
    assert argument(call, PARAMS, "stddev") == ["n", 2.0]
    assert argument(call, PARAMS, "max_norm") is None


def test_star_and_mapping_arguments_leave_the_parameter_open() -> None:
    starred = _call("Opt(ps, *rest)")
    assert argument(starred, PARAMS, "lr") == STAR
    assert argument(starred, PARAMS, "params") == ["r", "ps"]
    mapping = _call("Opt(ps, lr=0.1, **CONFIGS[name])")
    assert argument(mapping, PARAMS, "max_norm") == \
        ["i", ["i", ["r", "CONFIGS"], ["r", "name"]], ["s", "max_norm"]]
    assert argument(mapping, PARAMS, "lr") == ["n", 0.1]
    from_call = argument(_call("f(**vars(args))"), ["x"], "x")
    assert from_call is not None and from_call[0] == "a" and from_call[2] == "x"


OPTIMIZER = '''
import argparse

import torch

CONFIGS = {"mnist": {"max_norm": 0.01, "stddev": 2.0}, "cifar": {"max_norm": 1.0, "stddev": 1.1}}
FIXED = {"max_norm": 0.5, "stddev": 1.3}


class NoisySGD(torch.optim.Optimizer):
    def __init__(self, params, lr=0.1, max_norm=1.0, stddev=1.0):
        self.lr, self.max_norm, self.stddev = lr, max_norm, stddev
        super().__init__(params, dict())

    def step(self):
        for group in self.param_groups:
            for p in group["params"]:
                norms = p.grad_batch.flatten(1).norm(dim=1)
                factor = torch.clamp(self.max_norm / norms, max=1.0)
                summed = (p.grad_batch * factor[:, None]).sum(0)
                noise = torch.randn_like(summed) * self.stddev * self.max_norm
                p.data.add_(-self.lr * (summed + noise))


def main(args):
    model = torch.nn.Linear(4, 2)
    optimizer = NoisySGD(model.parameters(), lr=args.lr, **{mapping})
    for _ in range(args.epochs):
        optimizer.step()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("experiment", choices=sorted(CONFIGS))
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--epochs", type=int, default=2)
    main(parser.parse_args())
'''


def test_mapping_chosen_at_run_time_does_not_fall_back_to_defaults(tmp_path: Path) -> None:
    [pipeline] = pipelines_of(tmp_path, {"train.py": OPTIMIZER.replace(
        "{mapping}", "CONFIGS[args.experiment]")})
    assert pipeline.mechanism == "SGM"
    for name in ("clip", "sigma"):
        assert name not in pipeline.params or pipeline.params[name].value is None, \
            pipeline.params[name]


def test_mapping_bound_to_a_dict_literal_is_read(tmp_path: Path) -> None:
    [pipeline] = pipelines_of(tmp_path, {"train.py": OPTIMIZER.replace("{mapping}", "FIXED")})
    clip, sigma = pipeline.params["clip"], pipeline.params["sigma"]
    assert (clip.value, clip.source, clip.span.line) == (0.5, "config", 6)
    assert sigma.value == 1.3


HELPERS = '''
REFERENCE_BATCH = 4096


def noise_for_batch(batch, ref_noise, ref_batch=REFERENCE_BATCH, beta=1):
    """Keep sigma / batch constant across batch sizes."""
    return ref_noise / ((ref_batch / batch) * beta)


def from_args(args, factor):
    return args.sigma * factor


def needs_more(batch, ref):
    scale = ref / batch
    return scale


def forever(x):
    return forever(x) + 1


class Schedule:
    def sigma(self, batch):
        return batch / 100
'''

CALLER = '''
import argparse

from helpers import Schedule, forever, from_args, needs_more, noise_for_batch

parser = argparse.ArgumentParser()
parser.add_argument("--sigma", type=float, default=0.8)
args = parser.parse_args()
small = noise_for_batch(256, 3.0)
large = noise_for_batch(1024, 3.0, beta=2)
doubled = from_args(args, 2)
local = needs_more(256, 3.0)
loop = forever(1.0)
method = Schedule().sigma(256)
missing = noise_for_batch(256)
'''


def test_helper_return_is_evaluated_per_call_with_provenance(tmp_path: Path) -> None:
    index = ProjectIndex(make_project(tmp_path, {"helpers.py": HELPERS, "train.py": CALLER}))
    evaluator = Evaluator(index)
    at_end = Ctx("train.py", "<module>", 100)
    small = evaluator.value(["r", "small"], at_end)
    assert small is not None and small.value == 3.0 / (4096 / 256)
    assert (small.source, small.path, small.line) == ("derived", "train.py", 8)
    assert "noise_for_batch" in small.param("sigma").expression
    assert "helpers.py:6" in small.param("sigma").expression
    large = evaluator.value(["r", "large"], at_end)
    assert large is not None and large.value == 3.0 / ((4096 / 1024) * 2)
    doubled = evaluator.value(["r", "doubled"], at_end)
    assert doubled is not None and doubled.value == 1.6


def test_helpers_outside_the_simple_form_stay_unresolved(tmp_path: Path) -> None:
    index = ProjectIndex(make_project(tmp_path, {"helpers.py": HELPERS, "train.py": CALLER}))
    evaluator = Evaluator(index)
    at_end = Ctx("train.py", "<module>", 100)
    for name in ("local", "loop", "method", "missing"):
        assert evaluator.value(["r", name], at_end) is None, name


DATA = '''
import numpy as np
import tensorflow as tf


def load_mnist():
    train, test = tf.keras.datasets.mnist.load_data()
    train_images, train_labels = train
    test_images, test_labels = test
    train_images = np.array(train_images, dtype=np.float32) / 255
    train_images = train_images.reshape((train_images.shape[0], 28, 28, 1))
    test_images = np.asarray(test_images, dtype=np.float32) / 255
    return (train_images, tf.convert_to_tensor(train_labels)), (test_images, test_labels)


def main():
    (x, y), (x_test, y_test) = load_mnist()
    print(x, y, x_test, y_test)
'''


def test_dataset_size_through_unpacked_returns_and_conversions(tmp_path: Path) -> None:
    index = ProjectIndex(make_project(tmp_path, {"data.py": DATA}))
    evaluator = Evaluator(index)
    at_print = Ctx("data.py", "main", 18)
    sizes = {name: evaluator.dataset_size(["r", name], at_print) for name in ("x", "y")}
    assert {name: size.value for name, size in sizes.items() if size} == {"x": 60000, "y": 60000}
    assert (sizes["x"].source, sizes["x"].path, sizes["x"].line) == ("dataset-size", "data.py", 6)


KERAS = '''
import dp_accounting
import tensorflow as tf
from absl import app, flags
from tensorflow_privacy import DPKerasSGDOptimizer

from data import load_mnist

flags.DEFINE_float("noise_multiplier", 1.1, "noise multiplier")
flags.DEFINE_integer("batch_size", 250, "batch size")
FLAGS = flags.FLAGS


def epsilon(steps):
    accountant = dp_accounting.rdp.RdpAccountant([2, 4, 8])
    event = dp_accounting.PoissonSampledDpEvent(
        FLAGS.batch_size / 60000, dp_accounting.GaussianDpEvent(FLAGS.noise_multiplier))
    accountant.compose(dp_accounting.SelfComposedDpEvent(event, steps))
    return accountant.get_epsilon(target_delta=1e-5)


def main(_):
    (x, y), _ = load_mnist()
    model = tf.keras.Sequential([tf.keras.layers.Flatten(), tf.keras.layers.Dense(10)])
    optimizer = DPKerasSGDOptimizer(l2_norm_clip=1.0, noise_multiplier=FLAGS.noise_multiplier,
                                    num_microbatches=FLAGS.batch_size, learning_rate=0.15)
    loss = tf.keras.losses.SparseCategoricalCrossentropy(
        from_logits=True, reduction=tf.losses.Reduction.NONE)
    model.compile(optimizer=optimizer, loss=loss)
    model.fit(x, y, epochs=15, batch_size=FLAGS.batch_size)
    print(epsilon(15 * 60000 // FLAGS.batch_size))


if __name__ == "__main__":
    app.run(main)
'''


def test_keras_pipeline_takes_n_from_its_own_data(tmp_path: Path) -> None:
    [pipeline] = pipelines_of(tmp_path, {"data.py": DATA, "train.py": KERAS})
    size = pipeline.params["N"]
    assert (size.value, size.source, size.span.path, size.span.line) == \
        (60000, "dataset-size", "data.py", 6)


CONFIGS = '''
import argparse

HPARAMS = {"mnist": {"sigma": 1.1, "clip": 0.1}, "cifar10": dict(sigma=1.5, clip=1.0)}
parser = argparse.ArgumentParser()
parser.add_argument("--dataset", default="cifar10")
parser.add_argument("--task", choices=sorted(HPARAMS))
args = parser.parse_args()
DEFAULT = "mnist"
chosen = HPARAMS[args.dataset]["sigma"]
fixed = HPARAMS[DEFAULT]["clip"]
open_key = HPARAMS[args.task]["sigma"]
'''


def test_nested_config_items_with_constant_keys(tmp_path: Path) -> None:
    index = ProjectIndex(make_project(tmp_path, {"conf.py": CONFIGS}))
    evaluator = Evaluator(index)
    at_end = Ctx("conf.py", "<module>", 100)
    chosen = evaluator.value(["r", "chosen"], at_end)
    assert chosen is not None and (chosen.value, chosen.source, chosen.line) == (1.5, "config", 3)
    fixed = evaluator.value(["r", "fixed"], at_end)
    assert fixed is not None and fixed.value == 0.1
    assert evaluator.value(["r", "open_key"], at_end) is None


WRAPPER = '''
def build(lr=0.1, clip=1.0):
    return lr * clip


def make(**kwargs):
    return build(**kwargs)


def run():
    return make(clip=0.5)
'''


def test_forwarded_keyword_arguments_are_not_the_defaults(tmp_path: Path) -> None:
    index = ProjectIndex(make_project(tmp_path, {"m.py": WRAPPER}))
    assert Evaluator(index).value(["r", "clip"], Ctx("m.py", "build", 2)) is None
