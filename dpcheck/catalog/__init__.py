"""The rule catalog: rules as data (top-level ``rules/*.toml``), loaded and validated once.

Public API: ``load_catalog``, ``select_rules`` and the data types ``Catalog``, ``Rule``,
``Example`` and ``Reference``.
"""

from dpcheck.catalog.loader import load_catalog
from dpcheck.catalog.rule import Catalog, Example, Reference, Rule
from dpcheck.catalog.selection import select_rules

__all__ = ["Catalog", "Example", "Reference", "Rule", "load_catalog", "select_rules"]
