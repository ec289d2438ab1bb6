"""``dict_item``: constant keys of dict displays and ``dict(...)`` calls, read from real IR."""

from __future__ import annotations

import ast

import pytest

from dpcheck.sites.ir import Encoder, Source, dict_item


def _ir(source: str) -> list:
    return Encoder(Source(source), lambda *_: None).encode(ast.parse(source, mode="eval").body)


@pytest.mark.parametrize(("source", "key", "expected"), [
    ('{"sigma": 1.1, "clip": 0.5}', "clip", ["n", 0.5]),
    ("{1: 'a', 2: 'b'}", 2, ["s", "b"]),
    ("dict(sigma=1.1, lot=256)", "lot", ["n", 256]),
    ('{"sigma": 1.1}', "clip", None),
    ("dict(base, sigma=2.0)", "sigma", ["n", 2.0]),  # the keyword wins over the mapping
    ("dict(base, sigma=2.0)", "clip", None),  # the mapping's keys are not known
    ("dict(sigma=1.1)", 1, None),
    ("make_config(sigma=1.1)", "sigma", None),
])
def test_dict_item(source: str, key: object, expected: list | None) -> None:
    assert dict_item(_ir(source), key) == expected
