"""Comprehensions keep whether an ``if`` clause drops items: the length of a filtered list over
a batch is not the batch size, so the divisor classifier must be able to tell."""

from __future__ import annotations

import ast

import pytest

from dpcheck.sites.ir import Encoder, Source


@pytest.mark.parametrize(
    ("source", "filtered"),
    [
        ("[g for g in grads]", False),
        ("[g for g in grads if g is not None]", True),
        ("{k: v for k, v in items for _ in range(2) if k}", True),
        ("sum(x * 2 for x in xs)", False),
    ],
)
def test_comprehension_records_an_if_clause(source: str, filtered: bool) -> None:
    tree = ast.parse(source, mode="eval").body
    node = tree.args[0] if isinstance(tree, ast.Call) else tree
    ir = Encoder(Source(source), lambda _name, _ir: None).encode(node)
    assert ir[0] == "comp" and ir[4] is filtered
