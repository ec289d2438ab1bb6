"""The sampler table (``dpcheck/data/samplers.json``) is data, validated on load: every malformed
entry is an error naming it, and the shipped table is consistent with what the bounds and rules
read from it."""

from __future__ import annotations

import copy
import json
from importlib import resources
from typing import Any

import pytest

from dpcheck.errors import DpcheckError
from dpcheck.samplers import kind_of_pipeline, parse_table, sampler_table

SHIPPED: dict[str, Any] = json.loads(resources.files("dpcheck.data").joinpath("samplers.json").read_text("utf-8"))


def test_the_shipped_table_names_every_known_sampler() -> None:
    table = sampler_table()
    assert set(table.kinds) == {"poisson", "shuffle", "sequential", "shuffled-or-sequential", "buffered-shuffle",
                                "fixed-subsets", "with-replacement", "balls-and-bins"}
    for name in ("numpy.random.choice", "torch.randperm", "torch.utils.data.RandomSampler", "torch.randint",
                 "jax_privacy.batch_selection.BallsInBinsSampling"):
        assert table.api(name) is not None, name
    assert table.api("torch.utils.data.sampler.RandomSampler") is table.api("torch.utils.data.RandomSampler")
    wrapper = table.api("contextlib.nullcontext")
    assert wrapper is not None and wrapper.wraps is not None and wrapper.kind is None
    assert wrapper.wraps.of(["lots"], {}) == "lots"
    numpy_view = table.api("tensorflow_datasets.as_numpy")  # the batches of the tf.data it is given
    assert numpy_view is not None and numpy_view.role == "wrapper" and numpy_view.kind is None
    assert numpy_view.wraps is not None and numpy_view.wraps.of([], {"dataset": "ds"}) == "ds"


def test_a_batching_wrapper_has_no_kind_of_its_own_and_names_the_sampler_it_wraps() -> None:
    batching = sampler_table().api("torch.utils.data.sampler.BatchSampler")
    assert batching is not None and batching.role == "batching" and batching.kind is None
    assert batching.wraps is not None
    assert (batching.wraps.keyword, batching.wraps.position) == ("sampler", 0)


def test_kinds_are_consistent_with_the_bounds() -> None:
    """DP104's threshold is about one batch per epoch; the deterministic-batch guarantee needs it;
    only Poisson is not a DP102 scheme; balls-and-bins is an info note."""
    for kind in sampler_table().kinds.values():
        if kind.dp104 or kind.guarantee == "deterministic-batches":
            assert kind.once_per_epoch, kind.name
        assert (kind.dp102 is None) == (kind.sampling == "poisson"), kind.name
    assert sampler_table().kinds["balls-and-bins"].dp102 == "info"


def test_a_pipeline_without_a_decided_scheme_is_fixed_batches_of_either_order() -> None:
    assert kind_of_pipeline("unknown", "shuffle").name == "shuffled-or-sequential"  # type: ignore[union-attr]
    assert kind_of_pipeline("unknown", "unknown") is None
    assert kind_of_pipeline("sequential", "shuffle").name == "sequential"  # type: ignore[union-attr]


def _broken(edit: Any) -> dict[str, Any]:
    data = copy.deepcopy(SHIPPED)
    edit(data)
    return data


@pytest.mark.parametrize(("edit", "words"), [
    (lambda d: d["kinds"]["shuffle"].pop("title"), "kind 'shuffle': 'title'"),
    (lambda d: d["kinds"]["shuffle"].update(guarantee="magic"), "'guarantee' must be one of"),
    (lambda d: d["kinds"]["shuffle"].update(dp102="fatal"), "'dp102'"),
    (lambda d: d["kinds"]["shuffle"].update(colour="red"), "unknown keys ['colour']"),
    (lambda d: d["apis"]["torch.randint"].update(role="oracle"), "api 'torch.randint': 'role'"),
    (lambda d: d["apis"]["torch.randint"].update(kind="nope"), "api 'torch.randint': 'kind'"),
    (lambda d: d["apis"]["numpy.random.choice"]["switch"]["kinds"].pop("unresolved"), "switch"),
    (lambda d: d["aliases"].update({"x.Y": "not.an.api"}), "alias 'x.Y'"),
    (lambda d: d["apis"]["jax_privacy.batch_selection.BallsInBinsSampling"].pop("method"), "'method'"),
    (lambda d: d["apis"]["contextlib.nullcontext"].pop("wraps"), "a wrapper (and only a wrapper) names"),
    (lambda d: d["apis"]["torch.randint"].update(wraps={"keyword": "x", "position": 0}), "only a wrapper"),
    (lambda d: d["apis"]["contextlib.nullcontext"].update(kind="shuffle"), "a permutation or a wrapper has none"),
    (lambda d: d.update(schema=2), "'schema' must be 1"),
    (lambda d: d["apis"]["torch.utils.data.BatchSampler"].pop("wraps"), "'wraps'"),
    (lambda d: d["apis"]["torch.utils.data.BatchSampler"].update(kind="shuffle"),
     "api 'torch.utils.data.BatchSampler': 'kind'"),
    (lambda d: d["apis"]["torch.utils.data.RandomSampler"].update(
        wraps={"keyword": "sampler", "position": 0}), "'wraps'"),
])
def test_malformed_tables_are_refused_naming_the_entry(edit: Any, words: str) -> None:
    with pytest.raises(DpcheckError, match="samplers.json") as error:
        parse_table(_broken(edit))
    assert words in str(error.value)
