"""The epochs of a pipeline are decided by the structure of its loops (``data_passes``), never
by names: an epoch loop is a counted loop whose body makes one pass over the data, directly or
through a project function it calls, and a step count written E / q (or E * N / B with
q = B / N, the sampling rate) holds E passes. Random integers select examples only by their use:
compared with a batch number they allocate examples to batches (balls-and-bins); random labels
select nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpcheck import engine
from dpcheck.model import Pipeline
from dpcheck.pipelines import build_pipelines
from dpcheck.pipelines.index import ProjectIndex
from dpcheck.pipelines.provenance import Provenance
from dpcheck.pipelines.scope import Ctx
from dpcheck.rules.evaluate import evaluate
from tests.fixture_projects import fixture_project
from tests.pipelines.builder import make_project

REQUIREMENTS = "torch==2.3.1\nopacus==1.4.0\n"

#: A private loader's passes, repeated by a loop that calls a project helper for each pass; a
#: warm-up loop named ``epoch`` before it takes single steps on a fixed public batch.
HELPER_PASSES = '''
import torch
from opacus import PrivacyEngine
from torch.utils.data import DataLoader, TensorDataset

ROUNDS, WARMUP = 6, 40


def one_pass(model, optimizer, loader):
    for xb, yb in loader:
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(model(xb), yb).backward()
        optimizer.step()


def main():
    data = TensorDataset(torch.randn(8000, 5), torch.randint(0, 2, (8000,)))
    model = torch.nn.Linear(5, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    anchor = torch.zeros(16, 5), torch.zeros(16, dtype=torch.long)
    for epoch in range(WARMUP):
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(model(anchor[0]), anchor[1]).backward()
        optimizer.step()
    engine = PrivacyEngine()
    model, optimizer, loader = engine.make_private(
        module=model, optimizer=optimizer, data_loader=DataLoader(data, batch_size=80),
        noise_multiplier=1.0, max_grad_norm=1.0)
    for rnd in range(ROUNDS):
        one_pass(model, optimizer, loader)
    print(engine.get_epsilon(1e-5))


if __name__ == "__main__":
    main()
'''

#: A hand-written per-example update on the rows a random selection keeps; ``{loop}`` is the
#: training loop around it.
HANDWRITTEN = '''
import torch
from opacus.accountants import RDPAccountant
from torch.utils.data import DataLoader, TensorDataset

ROWS, RATE, LR, PASSES, SIGMA, CLIP, WIDTH = 5000, 0.02, 0.02, 9, 1.1, 1.0, 100

xs = torch.randn(ROWS, 4)
ys = (xs[:, 0] > 0).long()
model = torch.nn.Linear(4, 2)
accountant = RDPAccountant()


def noisy_step(xb, yb):
    params = list(model.parameters())
    sums = [torch.zeros_like(p) for p in params]
    for xi, yi in zip(xb, yb):
        model.zero_grad()
        torch.nn.functional.cross_entropy(model(xi[None]), yi[None]).backward()
        norm = sum(p.grad.norm() ** 2 for p in params) ** 0.5
        for p, s in zip(params, sums):
            s.add_(p.grad * min(1.0, CLIP / (norm + 1e-6)))
    with torch.no_grad():
        for p, s in zip(params, sums):
            p -= LR * (s + SIGMA * CLIP * torch.randn_like(s)) / len(xb)


def main():
{loop}
    print(accountant.get_epsilon(1e-5))


if __name__ == "__main__":
    main()
'''

POISSON_STEPS = '''    for _ in range({count}):
        keep = torch.rand(ROWS) < RATE
        noisy_step(xs[keep], ys[keep])
        accountant.step(noise_multiplier=SIGMA, sample_rate=RATE)'''

SLICED_PASSES = '''    for sweep in range(PASSES):
        order = torch.randperm(ROWS)
        for start in range(0, ROWS, WIDTH):
            picked = order[start:start + WIDTH]
            noisy_step(xs[picked], ys[picked])
            accountant.step(noise_multiplier=SIGMA, sample_rate=WIDTH / ROWS)'''

#: A lot kept by a fresh Bernoulli draw each iteration, served in batches by a loader built
#: from it: iterating the loader is a pass over the lot, not over the data.
LOT_LOADER = '''    for local in range(PASSES):
        keep = torch.rand(ROWS) < RATE
        lot = DataLoader(TensorDataset(xs[keep], ys[keep]), batch_size=WIDTH, shuffle=True)
        for xb, yb in lot:
            noisy_step(xb, yb)'''

#: A random part of the data kept once, before training: the training set of every pass.
HELD_OUT_SPLIT = '''    keep = torch.randperm(ROWS)[:4000]
    train = DataLoader(TensorDataset(xs[keep], ys[keep]), batch_size=WIDTH, shuffle=True)
    for sweep in range(PASSES):
        for xb, yb in train:
            noisy_step(xb, yb)'''


def _scan(tmp_path: Path, source: str) -> tuple[Pipeline, list[str]]:
    """The one pipeline of the project and the rules that fire on it."""
    project = make_project(tmp_path, {"requirements.txt": REQUIREMENTS, "train.py": source})
    [pipeline] = build_pipelines(project)
    return pipeline, sorted(f.rule for f in evaluate([pipeline], project))


def _value(pipeline: Pipeline, name: str) -> float | None:
    param = pipeline.params.get(name)
    return None if param is None else param.value


def test_a_loop_repeating_a_pass_through_a_helper_counts_the_epochs(tmp_path: Path) -> None:
    pipeline, rules = _scan(tmp_path, HELPER_PASSES)
    assert (pipeline.mechanism, pipeline.sampling) == ("FEASGM", "poisson")
    assert (_value(pipeline, "epochs"), _value(pipeline, "steps")) == (6, 600)
    assert rules == ["DP101"]


def test_slices_of_a_permutation_make_the_pass_a_loop_repeats(tmp_path: Path) -> None:
    pipeline, rules = _scan(tmp_path, HANDWRITTEN.format(loop=SLICED_PASSES))
    assert pipeline.sampling == "shuffle"
    assert (_value(pipeline, "epochs"), _value(pipeline, "steps")) == (9, 450)
    assert rules == ["DP102"]


def test_a_step_count_written_passes_over_the_rate_holds_the_epochs(tmp_path: Path) -> None:
    pipeline, rules = _scan(tmp_path, HANDWRITTEN.format(
        loop=POISSON_STEPS.format(count="int(PASSES / RATE)")))
    assert (pipeline.mechanism, pipeline.sampling) == ("ASGM", "poisson")
    assert (_value(pipeline, "epochs"), _value(pipeline, "steps")) == (9, 450)
    assert rules == ["DP101"]


def test_a_constant_equal_to_the_rate_is_not_the_rate(tmp_path: Path) -> None:
    """LR has the value of RATE, but a count written PASSES / LR is not passes over the rate."""
    pipeline, rules = _scan(tmp_path, HANDWRITTEN.format(
        loop=POISSON_STEPS.format(count="int(PASSES / LR)")))
    assert _value(pipeline, "steps") == 450
    assert "epochs" not in pipeline.params
    assert rules == ["DP101"]


def test_the_epochs_of_a_shadow_model_are_not_the_private_runs() -> None:
    """The private update runs in one pass over a loader of 3,000 Poisson lots; the only counted
    loop around a pass fits a shadow model: the pipeline has no epochs, not the shadow's 10."""
    result = engine.scan(engine.ScanOptions(
        paths=[fixture_project("private_optimizer_beside_shadow_model_asgm")], use_cache=False,
        jobs=1))
    [pipeline] = result.pipelines
    assert _value(pipeline, "steps") == 3000
    assert "epochs" not in pipeline.params


ALLOCATION = '''
import numpy as np
import torch

labels = torch.randint(0, 2, (600,))
rows = torch.randn(600, 3)
bins = np.random.randint(0, 6, size=600)
'''


def test_random_integers_select_examples_only_compared_with_a_batch_number(tmp_path: Path) -> None:
    provenance = Provenance(ProjectIndex(make_project(tmp_path, {"data.py": ALLOCATION})))
    at = Ctx("data.py", "<module>", 7)
    assert provenance.is_sample_index(["cmp", "==", ["r", "bins"], ["r", "b"]], at)
    assert provenance.is_sample_index(["cmp", "==", ["r", "b"], ["r", "bins"]], at)
    assert not provenance.is_sample_index(["cmp", "==", ["r", "labels"], ["n", 1]], at)
    assert not provenance.is_sample_index(["r", "labels"], at)
    assert not provenance.is_sample_index(["r", "bins"], at)


TF_BATCHES = '''
import tensorflow as tf
from tensorflow_privacy.privacy.optimizers.dp_optimizer_keras import DPKerasSGDOptimizer

BATCH, SWEEPS = 250, 5


def batches(images, labels):
    return (tf.data.Dataset.from_tensor_slices((images / 255.0, labels))
            .shuffle(60000).batch(BATCH, drop_remainder=True).prefetch(2))


def main():
    train, _ = tf.keras.datasets.mnist.load_data()
    images, labels = train
    model = tf.keras.Sequential([tf.keras.layers.Flatten(), tf.keras.layers.Dense(10)])
    opt = DPKerasSGDOptimizer(l2_norm_clip=1.0, noise_multiplier=1.1,
                              num_microbatches=BATCH, learning_rate=0.1)
    loss = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")
    for sweep in range(SWEEPS):
        {batches}
        for {items} in {iterable}:
            with tf.GradientTape(persistent=True) as tape:
                vector_loss = loss(y, model(x))
            grads = opt._compute_gradients(vector_loss, model.trainable_variables, tape=tape)
            opt.apply_gradients(grads)


main()
'''


@pytest.mark.parametrize(("batches", "items", "iterable"), [
    ("pass", "x, y", "batches(images, labels)"),
    ("data = batches(images, labels)", "_, (x, y)", "enumerate(data.take(-1))"),
    ("bar = enumerate(batches(images, labels))", "_, (x, y)", "bar"),
])
def test_a_loop_over_the_pipelines_tf_data_batches_is_a_pass(
        tmp_path: Path, batches: str, items: str, iterable: str) -> None:
    """The loop iterates the tf.data ``.batch()`` chain the sampling analysis found, returned by
    a project helper (with a ``.prefetch`` after it), directly, through a method of it or
    through a wrapper kept in a name: one pass, so the loop around it counts the epochs
    whatever it is called."""
    source = TF_BATCHES.format(batches=batches, items=items, iterable=iterable)
    project = make_project(tmp_path, {"train.py": source,
                                      "requirements.txt": "tensorflow-privacy==0.8.12\n"})
    [pipeline] = build_pipelines(project)
    assert pipeline.sampling == "shuffle"
    assert (_value(pipeline, "epochs"), _value(pipeline, "batch_size")) == (5, 250)


def test_a_loader_over_a_lot_drawn_in_the_loop_makes_no_pass(tmp_path: Path) -> None:
    """Each iteration draws a Poisson lot and iterates a loader over it: the loop repeats lots,
    not passes over the data, so its count (9) is not the epochs."""
    [pipeline] = build_pipelines(make_project(tmp_path, {
        "requirements.txt": REQUIREMENTS, "train.py": HANDWRITTEN.format(loop=LOT_LOADER)}))
    assert "epochs" not in pipeline.params, pipeline.params["epochs"]


def test_a_loader_over_a_split_kept_before_training_makes_a_pass(tmp_path: Path) -> None:
    [pipeline] = build_pipelines(make_project(tmp_path, {
        "requirements.txt": REQUIREMENTS, "train.py": HANDWRITTEN.format(loop=HELD_OUT_SPLIT)}))
    assert _value(pipeline, "epochs") == 9
