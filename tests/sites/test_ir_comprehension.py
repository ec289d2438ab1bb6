"""Comprehensions keep whether an ``if`` clause drops items: the length of a filtered list over
a batch is not the batch size, so the divisor classifier must be able to tell; they also keep
the clauses' tests (the indices a sampling mask keeps are the sampled batch)."""

from __future__ import annotations

import ast

import pytest

from dpcheck.sites.ir import Encoder, Source, walk


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


def test_comprehension_keeps_its_if_tests_and_walk_reaches_their_calls() -> None:
    source = "[i for i in np.arange(n) if keep[i] if check(i)]"
    ir = Encoder(Source(source), lambda _name, _ir: None).encode(ast.parse(source).body[0].value)
    assert ir[5] == [["i", ["r", "keep"], ["r", "i"]],
                     ["call", ["r", "check"], [["r", "i"]], {}, [1, 40, 1, 48], {}]]
    called = [node[1] for node in walk(ir) if node[0] == "call"]
    assert called == [["r", "np.arange"], ["r", "check"]]
