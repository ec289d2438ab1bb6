"""The rule registry against the catalog: one module per rule, named after it, and every
mismatch (an id without a module, a module for an unknown id, two modules for one id, a misnamed
module) refused with a message naming the rule and the file. Real catalog, real modules, and a
real package written to a temporary folder for discovery."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import pytest

import dpcheck.rules
from dpcheck.catalog import Catalog, load_catalog
from dpcheck.errors import CatalogError
from dpcheck.rules.registry import discover, registered, registry
from dpcheck.rules.rule import FileRule, PipelineRule

RULES_DIR = Path(dpcheck.rules.__file__).parent


def _shipped() -> list[tuple[str, PipelineRule | FileRule]]:
    return [(r.module, r.definition) for r in registry().rules]


def test_every_catalog_rule_has_exactly_one_module_named_after_it() -> None:
    catalog = load_catalog()
    rules = registry().rules
    assert [r.definition.id for r in rules] == list(catalog.ids())
    for rule in catalog.rules:
        [module] = [r.module for r in rules if r.definition.id == rule.id]
        assert module == rule.name.replace("-", "_")
        assert (RULES_DIR / f"{module}.py").is_file()
    modules_with_rule = {name for name, _ in discover("dpcheck.rules")}
    assert modules_with_rule == {r.module for r in rules}


def test_dp001_is_a_file_rule_and_dp101_to_dp106_pipeline_rules_with_bounds() -> None:
    rules = registry()
    assert "DP001" in {r.id for r in rules.file_rules}
    pipeline = {r.id: r for r in rules.pipeline_rules}
    for rule_id in ("DP101", "DP102", "DP103", "DP104", "DP105", "DP106"):
        assert pipeline[rule_id].bound is not None
        assert pipeline[rule_id].fallback is (rule_id == "DP106")
    assert rules.bound_policy("DP001") is None and rules.bound_policy("DP999") is None


def test_a_catalog_rule_without_a_module_is_refused() -> None:
    catalog = load_catalog()
    extra = replace(catalog.get("DP104"), id="DP998", name="too-few-rounds")
    with pytest.raises(CatalogError, match=r"DP998 \(too-few-rounds\) has no check: add "
                                           r"dpcheck/rules/too_few_rounds\.py"):
        registered(Catalog((*catalog.rules, extra)), _shipped())


def test_a_module_for_an_id_the_catalog_lacks_is_refused() -> None:
    catalog = load_catalog()
    kept = Catalog(tuple(r for r in catalog.rules if r.id != "DP104"))
    with pytest.raises(CatalogError, match=r"low_noise_shuffle\.py checks DP104, which the "
                                           r"catalog does not define"):
        registered(kept, _shipped())


def test_two_modules_for_one_id_are_refused() -> None:
    shipped = _shipped()
    twin = next(d for name, d in shipped if d.id == "DP102")
    with pytest.raises(CatalogError, match="DP102 is checked by more than one module"):
        registered(load_catalog(), [*shipped, ("shuffle_twin", twin)])


def test_a_misnamed_module_is_refused() -> None:
    renamed = [("dp104" if d.id == "DP104" else name, d) for name, d in _shipped()]
    with pytest.raises(CatalogError, match=r"DP104 is checked in dpcheck/rules/dp104\.py: name "
                                           r"the module after the rule, dpcheck/rules/"
                                           r"low_noise_shuffle\.py"):
        registered(load_catalog(), renamed)


def test_discovery_takes_the_modules_that_define_a_rule(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "extra_rules"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "helpers.py").write_text("HELPER = 1\n")
    (package / "odd_rounds.py").write_text(
        "from dpcheck.rules.rule import PipelineRule\n\n\n"
        "def check(pipeline, project):\n    return iter(())\n\n\n"
        'RULE = PipelineRule("DP199", check)\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        found = discover("extra_rules")
    finally:
        for name in [m for m in sys.modules if m.startswith("extra_rules")]:
            del sys.modules[name]
    assert [(name, d.id) for name, d in found] == [("odd_rounds", "DP199")]
