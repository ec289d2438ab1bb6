"""Fixes in the rule catalog: a valid ``[[fixes]]`` entry read field by field, every kind of
malformed one refused naming the file and the key, and the fix registry pairing catalog fixes
with their modules one to one (real catalog, real modules)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from dpcheck.catalog import Catalog, load_catalog
from dpcheck.errors import CatalogError
from dpcheck.rules.fixes.fix import FixDefinition, NoFix
from dpcheck.rules.fixes.registry import discover, fix_registry, registered
from tests.catalog.conftest import WriteRule, valid_rule

FIX = '''
[[fixes]]
id = "do-it-right"
title = "Do it right"
safety = "safe"
when = "Whenever x is wrong."

[[fixes.examples]]
name = "applied"
before = "x = 3\\n"
after = "x = 4\\n"

[[fixes.examples]]
name = "left alone"
path = "requirements.txt"
before = "opacus\\n"
unfixed = "no release"
[fixes.examples.files]
"example.py" = "import opacus\\n"
'''


def _with_fix(fix: str = FIX, rule_id: str = "DP901", name: str = "test-rule") -> str:
    return valid_rule(rule_id, name) + fix


def test_a_fix_entry_is_read_field_by_field(write_rule: WriteRule) -> None:
    rule = load_catalog(write_rule(_with_fix())).get("DP901")
    [fix] = rule.fixes
    assert (fix.id, fix.title, fix.safety, fix.when) == (
        "do-it-right", "Do it right", "safe", "Whenever x is wrong.")
    applied, alone = fix.examples
    assert (applied.path, applied.before, applied.after, applied.unfixed) == (
        "example.py", "x = 3\n", "x = 4\n", None)
    assert alone.project_files() == (("requirements.txt", "opacus\n"),
                                     ("example.py", "import opacus\n"))
    assert (alone.after, alone.unfixed) == (None, "no release")
    assert rule.to_json()["fixes"][0]["examples"][1]["unfixed"] == "no release"


BAD_FIXES = [
    pytest.param('safety = "safe"', 'safety = "risky"', "fixes[0].safety: 'risky'", id="bad safety"),
    pytest.param('id = "do-it-right"', 'id = "Do_It"', "fixes[0].id: 'Do_It' is not kebab-case",
                 id="non-kebab id"),
    pytest.param('title = "Do it right"', 'title = "two\\nlines"', "fixes[0].title: must be a single",
                 id="multi-line title"),
    pytest.param('when = "Whenever x is wrong."\n', "", "fixes[0].when: missing required key",
                 id="missing when"),
    pytest.param('safety = "safe"', 'safety = "safe"\nauto = true', "fixes[0].auto: unknown key",
                 id="unknown fix key"),
    pytest.param('after = "x = 4\\n"', 'after = "x = 4\\n"\nunfixed = "why"',
                 "fixes[0].examples[0]: give exactly one of `after`", id="after and unfixed"),
    pytest.param('after = "x = 4\\n"', "", "fixes[0].examples[0]: give exactly one of `after`",
                 id="neither after nor unfixed"),
    pytest.param('after = "x = 4\\n"', 'after = "x = 3\\n"', "fixes[0].examples[0].after: equals",
                 id="after equals before"),
    pytest.param('after = "x = 4\\n"', 'unfixed = "never"', "fixes[0].examples: no example shows",
                 id="no applied example"),
    pytest.param('"example.py" = "import opacus\\n"', '"helper.py" = ""',
                 "fixes[0].examples[1].files: the project has no example.py", id="no example.py"),
    pytest.param('path = "requirements.txt"', 'path = "../requirements.txt"',
                 "fixes[0].examples[1].path: '../requirements.txt'", id="edited file outside"),
    pytest.param('"example.py" = "import opacus\\n"',
                 '"example.py" = "import opacus\\n"\n"requirements.txt" = ""',
                 "fixes[0].examples[1].files: 'requirements.txt' is the edited file",
                 id="edited file twice"),
]


@pytest.mark.parametrize(("old", "new", "message"), BAD_FIXES)
def test_each_kind_of_bad_fix_is_a_catalog_error_naming_file_and_key(
        write_rule: WriteRule, old: str, new: str, message: str) -> None:
    text = _with_fix()
    assert old in text
    directory = write_rule(text.replace(old, new, 1))
    with pytest.raises(CatalogError) as excinfo:
        load_catalog(directory)
    assert f"{directory / 'DP901.toml'}: " in str(excinfo.value)
    assert message in str(excinfo.value)


def test_a_fix_id_names_one_fix_in_the_whole_catalog(write_rule: WriteRule) -> None:
    write_rule(_with_fix())
    directory = write_rule(_with_fix(rule_id="DP902", name="other-rule"), filename="DP902.toml")
    with pytest.raises(CatalogError, match=r"DP902.toml: fixes\[0\].id: duplicate fix id "
                                           r"'do-it-right'"):
        load_catalog(directory)


def _shipped() -> list[tuple[str, FixDefinition]]:
    return [(f.definition.id.replace("-", "_"), f.definition) for f in fix_registry().fixes]


def test_every_shipped_fix_has_one_module_named_after_it() -> None:
    registry = fix_registry()
    assert {f.entry.id: f.rule for f in registry.fixes} == {
        "divide-by-batch-size": "DP101", "opacus-poisson-sampling": "DP102",
        "account-code-sampling": "DP103", "pin-installed-release": "DP105"}
    assert sorted(name for name, _ in discover("dpcheck.rules.fixes")) == sorted(
        name for name, _ in _shipped())
    assert [f.entry.id for f in registry.of("DP101")] == ["divide-by-batch-size"]
    assert registry.of("DP104") == ()


def test_a_catalog_fix_without_its_module_is_refused() -> None:
    catalog = load_catalog()
    dp104 = catalog.get("DP104")
    extra = replace(dp104, fixes=(replace(catalog.get("DP101").fixes[0], id="raise-sigma"),))
    rules = Catalog(tuple(extra if r.id == "DP104" else r for r in catalog.rules))
    with pytest.raises(CatalogError, match=r"DP104's fix 'raise-sigma' needs exactly one module "
                                           r"dpcheck/rules/fixes/raise_sigma\.py"):
        registered(rules, _shipped())


def test_a_fix_module_the_catalog_does_not_declare_is_refused() -> None:
    stray = FixDefinition("raise-sigma", "DP104", lambda site: NoFix("never"))
    with pytest.raises(CatalogError, match=r"raise_sigma\.py defines the fix 'raise-sigma', "
                                           r"which no rule declares"):
        registered(load_catalog(), [*_shipped(), ("raise_sigma", stray)])


def test_a_misnamed_or_misattributed_fix_module_is_refused() -> None:
    modules = _shipped()
    renamed = [("pin_it" if d.id == "pin-installed-release" else name, d) for name, d in modules]
    with pytest.raises(CatalogError, match=r"defined in dpcheck/rules/fixes/pin_it\.py: name the "
                                           r"module pin_installed_release\.py"):
        registered(load_catalog(), renamed)
    moved = [(name, replace(d, rule="DP104") if d.id == "pin-installed-release" else d)
             for name, d in modules]
    with pytest.raises(CatalogError, match=r"says its fix is for DP104, but rules/DP105.toml "
                                           r"declares it"):
        registered(load_catalog(), moved)
