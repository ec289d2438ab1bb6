"""The framework vocabulary table (``dpcheck/data/vocabulary.toml``) is validated when it loads:
a broken document is an error naming the file and the group, never a silently partial table."""

from __future__ import annotations

import copy
from importlib import resources
from typing import Any

import pytest

from dpcheck.errors import DpcheckError
from dpcheck.pipelines.vocabulary import GROUPS, parse_vocabulary
from dpcheck.toml import tomllib


def shipped() -> dict[str, Any]:
    text = resources.files("dpcheck.data").joinpath("vocabulary.toml").read_text("utf-8")
    return tomllib.loads(text)


def test_the_shipped_table_has_every_group_and_matches_by_qualified_name() -> None:
    groups = parse_vocabulary(shipped(), "vocabulary.toml")
    assert set(groups) == set(GROUPS)
    ranges = groups["index_ranges"]
    assert ranges.has_library_function("numpy.arange")
    assert not ranges.has_library_function("numpy.random.rand")
    assert "range" in ranges.builtins


@pytest.mark.parametrize(("edit", "words"), [
    (lambda d: d.update({"made_up": {"summary": "x"}}), "unknown ['made_up']"),
    (lambda d: d.pop("index_ranges"), "missing ['index_ranges']"),
    (lambda d: d["keeps_examples"].update({"builtins": ["not a name"]}), "[keeps_examples] builtins"),
    (lambda d: d["counts"].update({"method": ["sum"]}), "[counts] method is unknown"),
    (lambda d: d["floors"]["functions"].update({"math": "floor"}), "[floors.functions] math"),
])
def test_a_broken_table_is_an_error_naming_file_and_group(edit: Any, words: str) -> None:
    document = copy.deepcopy(shipped())
    edit(document)
    with pytest.raises(DpcheckError) as raised:
        parse_vocabulary(document, "vocabulary.toml")
    assert "vocabulary.toml" in str(raised.value) and words in str(raised.value)
