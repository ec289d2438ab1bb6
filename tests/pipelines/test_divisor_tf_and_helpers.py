"""The divisor classifier reads TF divisors natively (``tf.cast(n, ...)``, ``tf.shape(x)[0]``,
``tf.shape(input=x)[0]``) and gives a call of a project function the origin of what it returns
(a loader from a helper whatever its name, element ``i`` of a returned tuple). Real projects
written to disk, the real index; expected kinds follow docs/theory.md#update-rules (realized batch size
-> ``realized``, hyper-parameter -> ``constant``, dataset size in a numerator -> ``expected``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpcheck.pipelines.divisor import DivisorClassifier
from dpcheck.pipelines.index import ProjectIndex
from dpcheck.pipelines.scope import Ctx
from dpcheck.sites.ir import IR
from tests.pipelines.builder import make_project

TF_STEP = '''
import numpy as np
import tensorflow as tf

BATCH = 64
N = 60000


def step(x_all):
    mask = np.random.rand(N) < BATCH / N
    xb = tf.gather(x_all, np.flatnonzero(mask))
    sampled = x_all[mask]
    divisor = {divisor}
    return divisor
'''


def _divisor(tmp_path: Path, divisor: str) -> tuple[str, str | None]:
    project = make_project(tmp_path, {"train.py": TF_STEP.format(divisor=divisor)})
    index = ProjectIndex(project)
    scope = index.scope(Ctx("train.py", "step"))
    assert scope is not None
    [assign] = [s for s in scope["stmts"] if s["t"] == "divisor"]
    dep = DivisorClassifier(index).classify(assign["e"], Ctx("train.py", "step", assign["line"]))
    return dep.kind, dep.unknown


@pytest.mark.parametrize(("divisor", "kind"), [
    ("tf.cast(tf.shape(sampled)[0], tf.float32)", "realized"),
    ("tf.cast(tf.shape(input=sampled)[0], tf.float32)", "realized"),
    ("tf.shape(sampled)[0]", "realized"),
    ("tf.cast(BATCH, tf.float32)", "constant"),
    ("tf.convert_to_tensor(N * (BATCH / N))", "expected"),  # N sizes the mask
    ("tf.cast(tf.cast(N * (BATCH / N), tf.int32), tf.float32)", "floor-expected"),
    ("tf.cast(N * (BATCH / N), dtype=tf.float32)", "expected"),
])
def test_tf_divisors_are_read_natively(tmp_path: Path, divisor: str, kind: str) -> None:
    assert _divisor(tmp_path, divisor)[0] == kind


def test_tf_shape_of_a_value_of_unknown_origin_stays_unknown_with_the_reason(
        tmp_path: Path) -> None:
    kind, why = _divisor(tmp_path, "tf.cast(tf.shape(x_all)[0], tf.float32)")
    assert kind == "unknown" and why is not None and ".shape[0]" in why


HELPERS = '''
import torch
from torch.utils.data import DataLoader, TensorDataset


def make_batches(n, batch):
    data = TensorDataset(torch.randn(n, 4), torch.randint(0, 2, (n,)))
    return DataLoader(data, batch_size=batch, shuffle=True)


def splits(n):
    train = TensorDataset(torch.randn(n, 4), torch.randint(0, 2, (n,)))
    test = TensorDataset(torch.randn(100, 4), torch.randint(0, 2, (100,)))
    if n > 10**6:
        return train, test, DataLoader(train), DataLoader(test)
    return train, DataLoader(test), n
'''

USES = '''
from helpers import make_batches, splits

loader = make_batches(1000, 50)
train_set, test_loader, count = splits(1000)
it = iter(loader)
first = next(it)
for xb, yb in loader:
    pass
'''


@pytest.mark.parametrize(("expr", "origin"), [
    (["r", "loader"], "loader"),
    (["call", ["r", "make_batches"], [["n", 10], ["n", 2]], {}, [1, 1, 1, 1], {}], "loader"),
    (["r", "train_set"], "dataset"),
    (["r", "test_loader"], "loader"),
    (["r", "count"], "unknown"),
    (["r", "it"], "loader"),
    (["r", "first"], "batch"),
    (["r", "xb"], "batch"),
])
def test_origin_of_project_function_results(tmp_path: Path, expr: IR, origin: str) -> None:
    """``make_batches`` is not named ``*_loader``: its return decides. ``splits`` has a 4-tuple
    return that cannot be the one unpacked into three names, so element 1 is the DataLoader."""
    project = make_project(tmp_path, {"helpers.py": HELPERS, "main.py": USES})
    origins = DivisorClassifier(ProjectIndex(project))
    assert origins.origin(expr, Ctx("main.py", "<module>")).value == origin


def test_len_of_a_helper_loader_is_a_fixed_round_count(tmp_path: Path) -> None:
    """``len(loader)`` (rounds per epoch) is a hyper-parameter, even when the loader comes from a
    helper that is not named ``*_loader``: N / len(loader) is constant-like, not data-dependent."""
    project = make_project(tmp_path, {"helpers.py": HELPERS, "main.py": USES})
    classifier = DivisorClassifier(ProjectIndex(project))
    dep = classifier.classify(["call", ["r", "len"], [["r", "loader"]], {}, [1, 1, 1, 1], {}],
                              Ctx("main.py", "<module>"))
    assert dep.kind == "constant"


RECURSIVE = '''
import torch
from torch.utils.data import DataLoader


def batches(data, depth):
    if depth == 0:
        return DataLoader(data, batch_size=8)
    if depth % 2:
        return batches(data, depth - 1)
    return batches(data, depth - 2)


loader = batches(torch.randn(64, 2), 5)
'''


def test_a_recursive_helper_decides_nothing_and_ends(tmp_path: Path) -> None:
    """Following ``batches`` into itself would branch without end: re-entered, it is unknown, so
    the returns disagree (a loader and unknown) and the origin is unknown."""
    project = make_project(tmp_path, {"main.py": RECURSIVE})
    origins = DivisorClassifier(ProjectIndex(project))
    assert origins.origin(["r", "loader"], Ctx("main.py", "<module>")).value == "unknown"
