"""The DP-library table (``dpcheck/data/dp_libraries.json``): the shipped table loads, names
libraries by import prefix (never by a name's last part), and a malformed entry is an error
naming it."""

from __future__ import annotations

import copy
import json
from importlib import resources
from typing import Any

import pytest

from dpcheck.errors import DpcheckError
from dpcheck.pipelines.dp_libraries import dp_libraries, parse_table
from dpcheck.sites import summarize_source
from dpcheck.sites.nodes import Call, node


def _shipped() -> dict[str, Any]:
    text = resources.files("dpcheck.data").joinpath("dp_libraries.json").read_text("utf-8")
    return json.loads(text)


def _call(expression: str) -> Call:
    summary = summarize_source(f"x = {expression}\n", "m.py")
    found = node(summary["scopes"]["<module>"]["stmts"][0]["e"])
    assert isinstance(found, Call)
    return found


def test_the_shipped_table_loads_with_cited_privatizers() -> None:
    table = dp_libraries()
    assert table.privatizer("objax.privacy.dpsgd.PrivateGradValues()") is not None
    assert table.privatizer("opacus.optimizers.DPOptimizer") is not None
    assert all(p.provides for p in table.privatizers.values())
    for entry in _shipped()["privatizers"]:
        assert all(e["repository"].startswith("https://github.com/") and len(e["commit"]) == 40
                   for e in entry["evidence"])


@pytest.mark.parametrize(("qualified", "title"), [
    ("opacus.PrivacyEngine", "Opacus"),
    ("opacus", "Opacus"),
    ("objax.privacy.dpsgd.PrivateGradValues()", "Objax privacy"),
    ("objax.nn.Linear", None),
    ("opacusx.engine", None),
    ("torch.normal", None),
    ("dp_accounting.rdp.RdpAccountant", "dp_accounting"),
    ("optax.contrib.dpsgd", "optax DP-SGD"),
    ("optax.contrib.differentially_private_aggregate.update", "optax DP-SGD"),
    ("optax.adam", None),
    ("optax.contrib.muon", None),
    (None, None),
])
def test_a_library_is_named_by_its_import_prefix(qualified: str | None, title: str | None) -> None:
    assert dp_libraries().library_of(qualified) == title


DP_AGGREGATE = "optax.contrib.differentially_private_aggregate"


@pytest.mark.parametrize(("target", "parts"), [
    ("optax", {DP_AGGREGATE, "optax.contrib.dpsgd"}),
    ("optax.contrib", {DP_AGGREGATE, "optax.contrib.dpsgd"}),
    ("optax.contrib.dpsgd", set()), ("objax", {"objax.privacy"}), ("optaxx", set()),
    ("torch", set()), ("optax.transforms", set()),
])
def test_an_import_of_a_general_library_reaches_its_dp_parts(target: str, parts: set[str]) -> None:
    assert dp_libraries().parts_below(target) == parts


def test_optax_chain_runs_the_update_of_what_it_is_given() -> None:
    table = dp_libraries()
    assert table.combinators["optax.chain"] == "update"
    privatizer = table.privatizer("optax.contrib.differentially_private_aggregate.update")
    assert privatizer is not None and privatizer.provides == {"clip", "noise"}
    assert privatizer.divisor(_call("opt.update(grads, state)")) == "realized"


def test_dp_optimizer_divides_by_its_argument_unless_the_loss_is_summed() -> None:
    privatizer = dp_libraries().privatizer("opacus.optimizers.DPOptimizer")
    assert privatizer is not None
    mean = _call("DPOptimizer(opt, noise_multiplier=1.0, max_grad_norm=1.0, "
                 "expected_batch_size=int(len(ds) * q))")
    divisor = privatizer.divisor(mean)
    assert isinstance(divisor, Call) and divisor.name == "int"
    summed = _call("DPOptimizer(opt, noise_multiplier=1.0, max_grad_norm=1.0, "
                   "expected_batch_size=256, loss_reduction='sum')")
    assert privatizer.divisor(summed) == "none"


def test_clipped_grad_divides_only_by_a_given_normalize_by() -> None:
    privatizer = dp_libraries().privatizer("jax_privacy.clipped_grad()")
    assert privatizer is not None
    assert privatizer.divisor(_call("f(params, x, y)")) is None


def test_a_library_utility_is_not_a_dp_marker() -> None:
    table = parse_table(_shipped())
    assert table.library_of("opacus.validators.ModuleValidator.fix") is None
    assert table.library_of("opacus.validators") is None
    assert table.library_of("opacus.PrivacyEngine") == "Opacus"
    assert table.library_of("opacus.validators_of_mine.f") == "Opacus"  # a module boundary


@pytest.mark.parametrize(("change", "message"), [
    (lambda t: t["privatizers"][0].update(provides=["noise", "magic"]), "privatizers[0]"),
    (lambda t: t["privatizers"][0].update(evidence=[]), "evidence"),
    (lambda t: t["privatizers"][0].update(divides="sometimes"), "divides"),
    (lambda t: t["privatizers"][1].pop("argument"), "argument"),
    (lambda t: t["privatizers"].append(copy.deepcopy(t["privatizers"][0])), "listed twice"),
    (lambda t: t["libraries"].append({"module": "x"}), "libraries["),
    (lambda t: t["libraries"].append({"module": "x", "title": "X", "utilities": ["y.z"]}),
     "'utilities' must list modules inside 'x'"),
    (lambda t: t.update(schema=2), "schema"),
    (lambda t: t["combinators"][0].pop("method"), "combinators[0]"),
    (lambda t: t["combinators"][0].update(method="update()"), "combinators[0]"),
    (lambda t: t["combinators"][0].update(evidence=[{"line": 1}]), "evidence"),
])
def test_a_malformed_entry_is_an_error_naming_it(change: Any, message: str) -> None:
    table = _shipped()
    change(table)
    with pytest.raises(DpcheckError) as error:
        parse_table(table)
    assert "dp_libraries.json" in str(error.value) and message in str(error.value)
