"""optax's DP aggregation is a library privatizer (``dpcheck/data/dp_libraries.json``): its
``update`` clips per example, adds the noise and divides by the realized batch, also through
the ``update`` of an ``optax.chain`` it is given to. Other optax transformations, a chain of
them, and a project's own ``chain`` are not. Real projects on disk, the real builder."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.pipelines.builder import pipelines_of

SCRIPT = '''
import jax
import jax.numpy as jnp
import numpy as np
import optax
{imports}

def loss(w, x, y):
    return (jnp.dot(x, w) - y) ** 2

def main():
    rng = np.random.default_rng(0)
    xs = rng.normal(size=(5000, 4))
    ys = rng.normal(size=5000)
    optimizer = {optimizer}
    w = jnp.zeros(4)
    state = optimizer.init(w)
    per_example = jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))
    for step in range(300):
        chosen = rng.random(5000) < 0.02
        grads = per_example(w, xs[chosen], ys[chosen])
        updates, state = optimizer.update(grads, state, w)
        w = optax.apply_updates(w, updates)

if __name__ == "__main__":
    main()
'''


@pytest.mark.parametrize("optimizer", [
    "optax.contrib.dpsgd(learning_rate=0.1, l2_norm_clip=1.0, noise_multiplier=1.2, seed=0)",
    "optax.chain(optax.contrib.differentially_private_aggregate(1.0, 1.2, seed=0), optax.sgd(0.1))",
    # a chain nested in a chain, and a chain kept in a name first
    "optax.chain(optax.chain(optax.contrib.differentially_private_aggregate(1.0, 1.2, seed=0)), "
    "optax.sgd(0.1))",
])
def test_the_realized_poisson_batch_divides_the_noisy_sum(tmp_path: Path, optimizer: str) -> None:
    """Bernoulli selections with rate 0.02, divided by their realized size: ASGM."""
    files = {"train.py": SCRIPT.format(imports="", optimizer=optimizer),
             "requirements.txt": "optax==0.2.3\n"}
    [pipeline] = pipelines_of(tmp_path, files)
    assert (pipeline.mechanism, pipeline.sampling) == ("ASGM", "poisson")


def test_a_privatizer_kept_in_a_name_before_the_chain(tmp_path: Path) -> None:
    code = SCRIPT.format(imports="", optimizer="optax.chain(private, optax.sgd(0.1))").replace(
        "    optimizer =", "    private = optax.contrib.differentially_private_aggregate(1.0, 1.2, "
        "seed=0)\n    optimizer =", 1)
    [pipeline] = pipelines_of(tmp_path, {"train.py": code, "requirements.txt": "optax==0.2.3\n"})
    assert pipeline.mechanism == "ASGM"


@pytest.mark.parametrize(("imports", "optimizer"), [
    # the batch gradient clipped as a whole: no privatizer in the chain
    ("", "optax.chain(optax.clip_by_global_norm(1.0), optax.adam(0.01))"),
    # a project's own chain of a privatizer is project code, whose update nobody defines here
    ("def chain(*parts):\n    return parts[-1]\n",
     "chain(optax.contrib.differentially_private_aggregate(1.0, 1.2, seed=0), optax.sgd(0.1))"),
])
def test_no_privatizer_no_pipeline(tmp_path: Path, imports: str, optimizer: str) -> None:
    files = {"train.py": SCRIPT.format(imports=imports, optimizer=optimizer),
             "requirements.txt": "optax==0.2.3\n"}
    assert pipelines_of(tmp_path, files) == []
