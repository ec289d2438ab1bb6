"""Every batch sampler named (``dpcheck/data/samplers.json``): a hand-written DP-SGD loop whose
batch selection is each API of the sampler table in turn, classified by the real builder from real
files, with its evidence; library APIs are matched by import-qualified name, so a project function
with a library's name is not taken for it; a random draw that does not select the batch (random
labels) is not a sampler."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpcheck.rules import evaluate
from tests.pipelines.builder import make_project, pipelines_of

LOOP = '''
import random

import jax
import numpy as np
import torch
from opacus.accountants import RDPAccountant
from torch import nn
from torch.func import functional_call, grad, vmap

N, BATCH, STEPS, SIGMA, CLIP = 60000, 250, 2400, 1.0, 1.0
features = torch.randn(N, 20)
labels = torch.randint(0, 2, (N,))
model = nn.Linear(20, 2)
params = {{k: v.detach() for k, v in model.named_parameters()}}
accountant = RDPAccountant()


def loss_of(p, x, y):
    return nn.functional.cross_entropy(functional_call(model, p, (x[None],)), y[None])


per_sample = vmap(grad(loss_of), in_dims=(None, 0, 0))
{setup}
for step in range(STEPS):
{select}
    grads = per_sample(params, features[idx], labels[idx])
    norms = torch.stack([g.flatten(1).norm(dim=1) for g in grads.values()]).norm(dim=0)
    factor = torch.clamp(CLIP / (norms + 1e-6), max=1.0)
    for name, g in grads.items():
        summed = torch.einsum("i,i...->...", factor, g)
        noisy = summed + SIGMA * CLIP * torch.randn_like(summed)
        params[name] -= 0.1 * noisy / BATCH
    accountant.step(noise_multiplier=SIGMA, sample_rate=BATCH / N)
print(accountant.get_epsilon(delta=1e-5))
'''

CASES = [
    # (setup, select (indented 4), sampling, sampler, evidence word)
    ("", "    idx = np.random.choice(N, BATCH, replace=False)", "shuffle", "fixed-subsets", "without replacement"),
    ("rng = np.random.default_rng(0)", "    idx = rng.choice(N, size=BATCH, replace=False)", "shuffle",
     "fixed-subsets", "without replacement"),
    ("", "    idx = torch.randperm(N)[:BATCH]", "shuffle", "fixed-subsets", "fresh torch.randperm"),
    ("", "    idx = random.sample(range(N), BATCH)", "shuffle", "fixed-subsets", "without replacement"),
    ("", "    idx = np.random.choice(N, BATCH)", "shuffle", "with-replacement", "with replacement"),
    ("", "    idx = torch.randint(0, N, (BATCH,))", "shuffle", "with-replacement", "with replacement"),
    ("key = jax.random.PRNGKey(0)", "    idx = jax.random.choice(key, N, (BATCH,), replace=False)", "shuffle",
     "fixed-subsets", "without replacement"),
    ("", "    mask = torch.rand(N) < BATCH / N\n    idx = mask.nonzero().flatten()", "poisson", "poisson",
     "Poisson"),
]


@pytest.mark.parametrize(("setup", "select", "sampling", "sampler", "word"), CASES)
def test_each_per_step_draw_is_named(tmp_path: Path, setup: str, select: str, sampling: str, sampler: str,
                                     word: str) -> None:
    [pipeline] = pipelines_of(tmp_path, {"train.py": LOOP.format(setup=setup, select=select)})
    assert (pipeline.sampling, pipeline.sampler) == (sampling, sampler), pipeline.evidence
    notes = [e.note for e in pipeline.evidence if e.role == "sampler"]
    assert any(word in note for note in notes), notes


def test_per_step_draws_give_the_batch_the_population_and_the_steps(tmp_path: Path) -> None:
    select = "    idx = np.random.choice(N, BATCH, replace=False)"
    [pipeline] = pipelines_of(tmp_path, {"train.py": LOOP.format(setup="", select=select)})
    values = {k: v.value for k, v in pipeline.params.items()}
    assert (values["N"], values["batch_size"], values["steps"]) == (60000, 250, 2400)


def test_a_project_function_named_like_a_library_draw_is_not_it(tmp_path: Path) -> None:
    """``choice`` here is the project's own function (it permutes, then slices): matched by the
    qualified name, it is not ``numpy.random.choice``."""
    setup = "def choice(n, k, replace=False):\n    return list(range(k))"
    [pipeline] = pipelines_of(tmp_path, {"train.py": LOOP.format(setup=setup, select="    idx = choice(N, BATCH)")})
    assert pipeline.sampler != "fixed-subsets" and pipeline.sampling == "unknown"


ALLOCATION = '''
import numpy as np
import torch
from opacus.accountants import RDPAccountant
from torch import nn
from torch.func import functional_call, grad, vmap

N, BATCHES, EPOCHS, SIGMA, CLIP = 60000, 240, 10, 1.0, 1.0
features = torch.randn(N, 20)
labels = torch.randint(0, 2, (N,))
model = nn.Linear(20, 2)
params = {k: v.detach() for k, v in model.named_parameters()}
accountant = RDPAccountant()


def loss_of(p, x, y):
    return nn.functional.cross_entropy(functional_call(model, p, (x[None],)), y[None])


per_sample = vmap(grad(loss_of), in_dims=(None, 0, 0))
for epoch in range(EPOCHS):
    bins = np.random.randint(0, BATCHES, size=N)
    for b in range(BATCHES):
        idx = np.flatnonzero(bins == b)
        grads = per_sample(params, features[idx], labels[idx])
        norms = torch.stack([g.flatten(1).norm(dim=1) for g in grads.values()]).norm(dim=0)
        factor = torch.clamp(CLIP / (norms + 1e-6), max=1.0)
        for name, g in grads.items():
            summed = torch.einsum("i,i...->...", factor, g)
            params[name] -= 0.1 * (summed + SIGMA * CLIP * torch.randn_like(summed)) / (N / BATCHES)
        accountant.step(noise_multiplier=SIGMA, sample_rate=1 / BATCHES)
'''


def test_a_batch_number_per_example_is_balls_and_bins(tmp_path: Path) -> None:
    [pipeline] = pipelines_of(tmp_path, {"train.py": ALLOCATION})
    assert (pipeline.sampling, pipeline.sampler) == ("balls-and-bins", "balls-and-bins"), pipeline.evidence
    assert any("batch number" in e.note for e in pipeline.evidence)


JAX_PRIVACY = '''
import numpy as np
import jax
import jax.numpy as jnp
import dp_accounting
from jax_privacy import batch_selection

N, BATCHES, EPOCHS, SIGMA, CLIP = 50000, 200, 5, 1.0, 1.0
features, labels = np.zeros((N, 8)), np.zeros(N)
params = jnp.zeros(8)


def loss(w, x, y):
    return (x @ w - y) ** 2


per_example = jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))
strategy = batch_selection.BallsInBinsSampling(iterations=EPOCHS * BATCHES, cycle_length=BATCHES)
key = jax.random.PRNGKey(0)
for idx in strategy.batch_iterator(N, rng=0):
    g = per_example(params, features[idx], labels[idx])
    norms = jnp.linalg.norm(g, axis=1, keepdims=True)
    clipped = g * jnp.minimum(1.0, CLIP / norms)
    key, sub = jax.random.split(key)
    noisy = clipped.sum(axis=0) + SIGMA * CLIP * jax.random.normal(sub, params.shape)
    params = params - 0.1 * noisy / (N / BATCHES)

event = dp_accounting.SelfComposedDpEvent(
    dp_accounting.PoissonSampledDpEvent(1 / BATCHES, dp_accounting.GaussianDpEvent(SIGMA)), EPOCHS * BATCHES)
accountant = dp_accounting.pld.PLDAccountant()
accountant.compose(event)
'''


def test_jax_privacy_balls_in_bins_is_named_by_its_qualified_name(tmp_path: Path) -> None:
    [pipeline] = pipelines_of(tmp_path, {"train.py": JAX_PRIVACY})
    assert pipeline.sampler == "balls-and-bins", pipeline.evidence
    assert any("BallsInBinsSampling" in e.note or "batch_iterator" in e.note for e in pipeline.evidence)


LOADER = '''
import torch
from opacus.accountants import RDPAccountant
from torch import nn
from torch.utils.data import DataLoader, RandomSampler, SequentialSampler, TensorDataset

SIGMA, CLIP, BATCH = 1.0, 1.0, 250
data = TensorDataset(torch.randn(50000, 20), torch.randint(0, 2, (50000,)))
loader = DataLoader(data, batch_size=BATCH, {loader})
model = nn.Linear(20, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
accountant = RDPAccountant()
for epoch in range(5):
    for x, y in loader:
        grads = []
        for xi, yi in zip(x, y):
            model.zero_grad()
            nn.functional.cross_entropy(model(xi[None]), yi[None]).backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), CLIP)
            grads.append([p.grad.clone() for p in model.parameters()])
        with torch.no_grad():
            for k, p in enumerate(model.parameters()):
                summed = sum(g[k] for g in grads)
                p -= 0.1 * (summed + torch.randn_like(summed) * SIGMA * CLIP) / BATCH
        accountant.step(noise_multiplier=SIGMA, sample_rate=BATCH / len(data))
'''


@pytest.mark.parametrize(("loader", "sampler"), [
    ("shuffle=True", "shuffle"),
    ("shuffle=False", "sequential"),
    ("drop_last=True", "sequential"),
    ("sampler=RandomSampler(data)", "shuffle"),
    ("sampler=RandomSampler(data, replacement=True)", "with-replacement"),
    ("sampler=SequentialSampler(data)", "sequential"),
    ("shuffle=bool(len(data) % 2)", "shuffled-or-sequential"),
])
def test_loader_samplers_are_named(tmp_path: Path, loader: str, sampler: str) -> None:
    [pipeline] = pipelines_of(tmp_path, {"train.py": LOADER.format(loader=loader)})
    assert (pipeline.sampling, pipeline.sampler) == ("shuffle", sampler), pipeline.evidence


TF_BUFFER = '''
import tensorflow as tf
import tensorflow_privacy
from tensorflow_privacy.privacy.analysis.compute_dp_sgd_privacy_lib import compute_dp_sgd_privacy

BATCH, EPOCHS, N = 250, 10, 60000
(x_train, y_train), _ = tf.keras.datasets.mnist.load_data()
data = tf.data.Dataset.from_tensor_slices((x_train, y_train)).shuffle(1024).batch(BATCH)
model = tf.keras.Sequential([tf.keras.layers.Flatten(), tf.keras.layers.Dense(10)])
optimizer = tensorflow_privacy.DPKerasSGDOptimizer(
    l2_norm_clip=1.0, noise_multiplier=1.1, num_microbatches=BATCH, learning_rate=0.1)
loss = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction=tf.losses.Reduction.NONE)
model.compile(optimizer=optimizer, loss=loss)
model.fit(data, epochs=EPOCHS)
eps, _ = compute_dp_sgd_privacy(n=N, batch_size=BATCH, noise_multiplier=1.1, epochs=EPOCHS, delta=1e-5)
'''


def test_a_tf_data_shuffle_buffer_is_a_buffered_shuffle(tmp_path: Path) -> None:
    [pipeline] = pipelines_of(tmp_path, {"train.py": TF_BUFFER})
    assert (pipeline.sampling, pipeline.sampler) == ("shuffle", "buffered-shuffle"), pipeline.evidence
    assert any(e.role == "shuffle-buffer" and "1024" in e.note for e in pipeline.evidence)


@pytest.mark.parametrize(("select", "sampler", "dp104"), [
    ("    idx = np.random.choice(N, BATCH, replace=False)", "fixed-subsets", False),
    ("    idx = torch.randint(0, N, (BATCH,))", "with-replacement", False),
])
def test_dp102_names_the_scheme_and_dp104_needs_one_batch_per_epoch(
        tmp_path: Path, select: str, sampler: str, dp104: bool) -> None:
    """SIGMA = 0.1 is below 1/sqrt(2 ln M) for M = 240, but DP104's threshold is about one batch
    per epoch: per-step subsets are outside it. DP102 fires and says which scheme."""
    code = LOOP.format(setup="", select=select).replace("SIGMA, CLIP = 60000, 250, 2400, 1.0, 1.0",
                                                        "SIGMA, CLIP = 60000, 250, 2400, 0.1, 1.0")
    project = make_project(tmp_path, {"train.py": code})
    from dpcheck.pipelines import build_pipelines

    findings = evaluate(build_pipelines(project), project)
    rules = {f.rule: f for f in findings}
    assert "DP102" in rules and ("DP104" in rules) is dp104
    from dpcheck.samplers import sampler_kind

    assert sampler_kind(sampler).title in rules["DP102"].message


PERSISTENT = '''
import numpy as np
import tensorflow as tf
import tensorflow_privacy
from tensorflow_privacy.privacy.analysis.compute_dp_sgd_privacy_lib import compute_dp_sgd_privacy

BATCH, EPOCHS, N = 250, 10, 60000
(x_train, y_train), _ = tf.keras.datasets.mnist.load_data()
order = np.random.permutation(len(x_train))
x_train, y_train = x_train[order], y_train[order]
model = tf.keras.Sequential([tf.keras.layers.Flatten(), tf.keras.layers.Dense(10)])
optimizer = tensorflow_privacy.DPKerasSGDOptimizer(
    l2_norm_clip=1.0, noise_multiplier=1.1, num_microbatches=BATCH, learning_rate=0.1)
loss = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction=tf.losses.Reduction.NONE)
model.compile(optimizer=optimizer, loss=loss)
model.fit(x_train, y_train, epochs=EPOCHS, batch_size=BATCH, shuffle=False)
eps, _ = compute_dp_sgd_privacy(n=N, batch_size=BATCH, noise_multiplier=1.1, epochs=EPOCHS, delta=1e-5)
'''


def test_a_permutation_drawn_once_then_batches_in_order_is_a_shuffle(tmp_path: Path) -> None:
    """The order is permuted once by the code (secret to the adversary), then cut in order: a
    persistent shuffle, not a sequential order the adversary would know."""
    [pipeline] = pipelines_of(tmp_path, {"train.py": PERSISTENT})
    assert pipeline.sampler == "shuffle", pipeline.evidence
    notes = [e.note for e in pipeline.evidence if e.role == "sampler"]
    assert any("permutation" in n for n in notes) and any("fit" in n for n in notes)
    [unshuffled] = pipelines_of(tmp_path / "b", {"train.py": PERSISTENT.replace(
        "order = np.random.permutation(len(x_train))\nx_train, y_train = x_train[order], y_train[order]\n", "")})
    assert unshuffled.sampler == "sequential"
