"""The rule catalog: rules as data (top-level ``rules/*.toml``), loaded and validated once.

Public API: ``load_catalog``, ``select_rules``, ``rule_ids`` and the data types ``Catalog``, ``Rule``,
``Example`` and ``Reference``.
"""

from dpcheck.catalog.loader import load_catalog
from dpcheck.catalog.rule import Catalog, Example, MinimalExample, Reference, Rule
from dpcheck.catalog.selection import known_codes_hint, rule_ids, select_rules, unknown_codes

__all__ = [
    "Catalog",
    "Example",
    "MinimalExample",
    "Reference",
    "Rule",
    "known_codes_hint",
    "load_catalog",
    "rule_ids",
    "select_rules",
    "unknown_codes",
]
