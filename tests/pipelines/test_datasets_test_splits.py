"""Test-split sizes of well-known datasets, as Keras names them (``mnist.load_data()`` returns
the training and the test split): the published sizes, each with its source."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import pytest

from dpcheck.pipelines.index import ProjectIndex
from dpcheck.pipelines.scope import Ctx
from dpcheck.pipelines.values import Evaluator, dataset_sizes
from tests.pipelines.builder import make_project

#: Test-split sizes as published by each dataset's authors / the Keras dataset pages.
PUBLISHED_TEST_SIZES = {"mnist": 10_000, "fashion_mnist": 10_000, "cifar10": 10_000,
                        "cifar100": 10_000, "imdb": 25_000}


@pytest.mark.parametrize(("name", "size"), sorted(PUBLISHED_TEST_SIZES.items()))
def test_keras_test_split_resolves(tmp_path: Path, name: str, size: int) -> None:
    source = (f"import tensorflow as tf\n"
              f"(x_train, y_train), (x_test, y_test) = tf.keras.datasets.{name}.load_data()\n"
              f"n_test = len(x_test)\n"
              f"n_train = len(y_train)\n")
    index = ProjectIndex(make_project(tmp_path, {"data.py": source}))
    evaluator = Evaluator(index)
    test = evaluator.value(["r", "n_test"], Ctx("data.py", "<module>"))
    assert test is not None and (test.value, test.source, test.line) == (size, "dataset-size", 2)
    train = evaluator.value(["r", "n_train"], Ctx("data.py", "<module>"))
    assert train is not None and train.value == dataset_sizes()["train"][name]


def test_every_added_test_size_names_its_source() -> None:
    data = dataset_sizes()
    table = resources.files("dpcheck.data").joinpath("datasets.json").read_text("utf-8")
    sources = json.loads(table)["test_sources"]
    assert set(PUBLISHED_TEST_SIZES) <= set(sources)
    assert set(sources) <= set(data["test"])
    assert all(name in data["train"] for name in data["test"])
