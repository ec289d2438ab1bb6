"""``tail_name``: the one helper for the last component of a dotted name, read off real encoded
calls (one helper instead of a private copy in each module)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from dpcheck.sites.ir import IR, Encoder, Source, callee_name, tail_name

PACKAGE = Path(__file__).resolve().parents[2] / "dpcheck"


def _call(source: str) -> IR:
    calls: list[IR] = []
    tree = ast.parse(source, mode="eval")
    Encoder(Source(source), lambda _name, ir: calls.append(ir)).encode(tree.body)
    return calls[-1]


@pytest.mark.parametrize(
    ("source", "tail"),
    [
        ("torch.nn.functional.normal(x)", "normal"),
        ("np.random.binomial(1, q, n)", "binomial"),
        ("len(batch)", "len"),
        ("model(x).grad.normal_(0, 1)", "normal_"),
        ("fns[0](x)", ""),
    ],
)
def test_tail_of_encoded_callees(source: str, tail: str) -> None:
    assert tail_name(callee_name(_call(source))) == tail


def test_targets_that_are_not_names_have_no_tail() -> None:
    assert tail_name(None) == ""
    assert tail_name(["x", "y"]) == ""
    assert tail_name("self.loader") == "loader"


def test_no_module_keeps_a_private_copy() -> None:
    copies = [p.relative_to(PACKAGE).as_posix() for p in PACKAGE.rglob("*.py")
              if "def _tail(" in p.read_text(encoding="utf-8")]
    assert copies == []
