"""The DP library API catalog (``dpcheck/data/accountants.toml``, ``dp_engines.toml``): the shipped
files load, every broken file is refused with its file and key named, and the matching rule
(library root, optional ``**``, the name's last components) decides what a qualified name is."""

from __future__ import annotations

import pytest

from dpcheck.catalog.apis import ACCOUNTANT_ROLES, ENGINE_ROLES, load_api_catalog
from dpcheck.errors import CatalogError
from dpcheck.pipelines.accountants import POISSON

ACCOUNTANT = """
schema = 1

[accountant.demo-rdp]
family = "demo"
assumes = "SGM+poisson"
title = "a demo accountant"
"""

ENTRY = """
[[api]]
match = ["demo.**.Accountant"]
role = "constructor"
accountant = "demo-rdp"
"""


def _load(accountants: str, engines: str = "schema = 1\n"):
    return load_api_catalog({"accountants.toml": accountants, "dp_engines.toml": engines})


def test_the_shipped_catalog_loads_and_names_the_known_dp_libraries() -> None:
    catalog = load_api_catalog()
    assert {"opacus", "tensorflow_privacy", "dp_accounting", "prv_accountant", "autodp",
            "jax_privacy", "differential_privacy"} <= catalog.roots
    assert catalog.copies and all(shape.defines for shape in catalog.copies)
    # every accountant an entry reports is declared with a family and an assumption
    for api in catalog.apis:
        for name in [api.accountant, *(api.choice.accountants.values() if api.choice else ())]:
            assert name is None or name in catalog.accountants


@pytest.mark.parametrize(("qualified", "roles", "role", "accountant"), [
    ("opacus.accountants.RDPAccountant", ACCOUNTANT_ROLES, "constructor", "opacus-rdp"),
    ("opacus.RDPAccountant", ACCOUNTANT_ROLES, "constructor", "opacus-rdp"),
    ("opacus.accountants.rdp.RDPAccountant.step", ACCOUNTANT_ROLES, "step", "opacus-rdp"),
    ("opacus.accountants.analysis.rdp.compute_rdp", ACCOUNTANT_ROLES, "compute", "opacus-rdp"),
    ("tensorflow_privacy.privacy.analysis.rdp_accountant.compute_rdp", ACCOUNTANT_ROLES,
     "compute", "tf-privacy-rdp"),
    ("privacy.analysis.rdp_accountant.compute_rdp", ACCOUNTANT_ROLES, "compute",
     "tf-privacy-rdp"),
    ("dp_accounting.pld.pld_privacy_accountant.PLDAccountant", ACCOUNTANT_ROLES, "constructor",
     "dp-accounting-pld"),
    ("prv_accountant.Accountant", ACCOUNTANT_ROLES, "constructor", "prv-accountant"),
    ("objax.privacy.dpsgd.analyze_dp", ACCOUNTANT_ROLES, "compute", "objax-rdp"),
    ("objax.privacy.dpsgd.privacyaccountant.analyze_renyi", ACCOUNTANT_ROLES, "compute",
     "objax-rdp"),
    ("opacus.PrivacyEngine.make_private", ENGINE_ROLES, "entry", None),
    ("tensorflow_privacy.DPKerasSGDOptimizer", ENGINE_ROLES, "optimizer", None),
    ("privacy.optimizers.dp_optimizer.DPGradientDescentGaussianOptimizer", ENGINE_ROLES,
     "optimizer", None),
])
def test_a_qualified_name_matches_by_root_and_last_components(
        qualified: str, roles: frozenset[str], role: str, accountant: str | None) -> None:
    api = load_api_catalog().match(qualified, roles)
    assert api is not None and (api.role, api.accountant) == (role, accountant)


@pytest.mark.parametrize(("qualified", "roles"), [
    # the same last components under another root: another library's API, not this one
    ("jax_privacy.keras_api.make_private", ENGINE_ROLES),
    ("mylib.accountants.RDPAccountant", ACCOUNTANT_ROLES),
    ("objax.analyze_dp", ACCOUNTANT_ROLES),
    # the root without the object's own name
    ("opacus.accountants", ACCOUNTANT_ROLES),
    # `privacy` (TF-Privacy's first package name) only with its module path: a generic root
    ("privacy.compute_rdp", ACCOUNTANT_ROLES),
    # a role the caller does not ask for
    ("opacus.accountants.RDPAccountant", ENGINE_ROLES),
])
def test_a_name_that_only_ends_like_an_entry_matches_nothing(
        qualified: str, roles: frozenset[str]) -> None:
    assert load_api_catalog().match(qualified, roles) is None


def test_a_glob_component_matches_within_one_component_only() -> None:
    catalog = load_api_catalog()
    assert catalog.match("tensorflow_privacy.DPKerasAdamOptimizer", ENGINE_ROLES) is not None
    assert catalog.match("tensorflow_privacy.DPKeras.inner.Optimizer", ENGINE_ROLES) is None


def test_knows_names_objects_and_the_classes_holding_named_methods() -> None:
    catalog = load_api_catalog()
    module = "differential_privacy.privacy_accountant.tf.accountant"
    assert catalog.knows(f"{module}.AmortizedAccountant")
    assert catalog.knows("tensorflow_privacy.privacy.analysis.rdp_accountant.compute_rdp")
    assert not catalog.knows("tensorflow_privacy.privacy.analysis.rdp_accountant.get_sigma")


def test_choices_pick_an_accountant_or_fall_back_to_the_default() -> None:
    api = load_api_catalog().match("opacus.accountants.utils.get_noise_multiplier",
                                   ACCOUNTANT_ROLES)
    assert api is not None and api.choice is not None
    assert api.choice.pick("prv", True) == ("opacus-prv", None)
    assert api.choice.pick(None, False) == ("opacus-rdp", None)
    assert api.choice.pick("mystery", True) == (None, None)


def test_a_minimal_catalog_loads_with_its_entry() -> None:
    catalog = _load(ACCOUNTANT + ENTRY)
    api = catalog.match("demo.x.Accountant", ACCOUNTANT_ROLES)
    assert api is not None and catalog.family(api.accountant or "") == "demo"
    assert catalog.default_assumption("demo-rdp") == POISSON


@pytest.mark.parametrize(("text", "message"), [
    (ACCOUNTANT + ENTRY.replace('role = "constructor"', 'role = "constructor"\ncolour = "red"'),
     "accountants.toml: api[0].colour: unknown key"),
    (ACCOUNTANT + ENTRY.replace('"constructor"', '"launcher"'),
     "accountants.toml: api[0].role: 'launcher' is not one of"),
    (ACCOUNTANT + ENTRY.replace('"demo-rdp"', '"demo-pld"'),
     "accountants.toml: api[0].accountant: 'demo-pld' is not an accountant of the catalog"),
    (ACCOUNTANT + ENTRY.replace('["demo.**.Accountant"]', '"demo.Accountant"'),
     "accountants.toml: api[0].match: must be a list"),
    (ACCOUNTANT + ENTRY.replace('demo.**.Accountant', 'demo.**'),
     "accountants.toml: api[0].match[0]: 'demo.**'"),
    (ACCOUNTANT + ENTRY.replace('demo.**.Accountant', 'demo.**.x.**.Accountant'),
     "at most one '**'"),
    (ACCOUNTANT + ENTRY + 'args = { q = ["0", "q"] }\n',
     "accountants.toml: api[0].args.q: must be [position, keyword, ...]"),
    (ACCOUNTANT + ENTRY + 'args = { rate = [0, "q"] }\n',
     "accountants.toml: api[0].args.rate: not a parameter"),
    (ACCOUNTANT + ENTRY + ENTRY, "accountants.toml: api[1].match: 'demo.**.Accountant' is already"),
    (ACCOUNTANT + ENTRY.replace('accountant = "demo-rdp"\n', ''),
     "accountants.toml: api[0]: a constructor entry must name its accountant"),
    (ACCOUNTANT.replace('"SGM+poisson"', '"SGM+shuffle"'),
     "accountants.toml: accountant.demo-rdp.assumes: 'SGM+shuffle' is not one of"),
    (ACCOUNTANT.replace('title = "a demo accountant"\n', ''),
     "accountants.toml: accountant.demo-rdp.title: missing required key"),
    (ACCOUNTANT.replace("schema = 1", "schema = 2"), "accountants.toml: schema: 2 is not 1"),
    (ACCOUNTANT + '[[copy]]\nmodule = "demo.analysis"\ndefines = ["compute(q, sigma"]\n',
     "accountants.toml: copy[0].defines[0]: 'compute(q, sigma' is not"),
    (ACCOUNTANT + '[[copy]]\nmodule = "demo.analysis"\ndefines = []\n',
     "accountants.toml: copy[0].defines: must list at least one function"),
    (ACCOUNTANT + "[[api]\n", "accountants.toml: invalid TOML"),
])
def test_a_broken_catalog_is_refused_naming_the_file_and_key(text: str, message: str) -> None:
    with pytest.raises(CatalogError) as error:
        _load(text)
    assert message in str(error.value)


def test_an_engine_role_is_refused_in_the_accountant_file() -> None:
    with pytest.raises(CatalogError) as error:
        _load(ACCOUNTANT + '[[api]]\nmatch = ["demo.Engine.attach"]\nrole = "attach"\n')
    assert "accountants.toml: api[0].role: 'attach' is not one of" in str(error.value)
