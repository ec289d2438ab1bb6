"""The fix registry: every fix module of this package, checked against the rule catalog.

A fix module is any module of ``dpcheck.rules.fixes`` that defines ``FIX`` (see ``fix.py``).
``fix_registry()`` pairs each ``[[fixes]]`` entry of the catalog with its module one to one:
the module is named after the fix id in snake_case, and its ``FIX`` names that id and the rule
whose catalog entry declares it. A mismatch is a ``CatalogError`` naming the fix and the file to
add or rename, raised before any fix runs.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
from collections.abc import Iterable
from dataclasses import dataclass

from dpcheck.catalog import Catalog, load_catalog
from dpcheck.catalog.rule import Fix
from dpcheck.errors import CatalogError
from dpcheck.rules.fixes.fix import FixDefinition

#: The package whose modules are searched for fixes.
PACKAGE = __name__.rpartition(".")[0]


def module_name(fix_id: str) -> str:
    """The module of a fix: its kebab-case catalog id in snake_case."""
    return fix_id.replace("-", "_")


@dataclass(frozen=True)
class RegisteredFix:
    """One fix: its catalog entry, the rule that declares it and its definition."""

    rule: str
    entry: Fix
    definition: FixDefinition


@dataclass(frozen=True)
class FixRegistry:
    """The catalog's fixes with their definitions, by rule in catalog order."""

    fixes: tuple[RegisteredFix, ...]

    def of(self, rule_id: str) -> tuple[RegisteredFix, ...]:
        """The fixes of a rule, in the order its catalog entry lists them."""
        return tuple(f for f in self.fixes if f.rule == rule_id)


def discover(package: str) -> list[tuple[str, FixDefinition]]:
    """Every ``(module name, FIX)`` defined by a module of the package named ``package``."""
    found: list[tuple[str, FixDefinition]] = []
    for info in pkgutil.iter_modules(importlib.import_module(package).__path__):
        definition = getattr(importlib.import_module(f"{package}.{info.name}"), "FIX", None)
        if isinstance(definition, FixDefinition):
            found.append((info.name, definition))
    return found


def registered(catalog: Catalog, definitions: Iterable[tuple[str, FixDefinition]]) -> FixRegistry:
    """Pair the catalog's fixes with their modules, or raise ``CatalogError`` saying which fix
    has no module, which module defines a fix the catalog does not declare (or declares for
    another rule), or which module is misnamed."""
    by_id: dict[str, list[tuple[str, FixDefinition]]] = {}
    for module, definition in definitions:
        by_id.setdefault(definition.id, []).append((module, definition))
    declared = {fix.id: rule.id for rule in catalog.rules for fix in rule.fixes}
    problems = [
        f"dpcheck/rules/fixes/{module}.py defines the fix {fix_id!r}, which no rule declares "
        "(add it under [[fixes]] in its rule's TOML file)"
        for fix_id, modules in sorted(by_id.items()) if fix_id not in declared
        for module, _ in modules
    ]
    pairs: list[RegisteredFix] = []
    for rule in catalog.rules:
        for fix in rule.fixes:
            expected = module_name(fix.id)
            modules = by_id.get(fix.id, [])
            if len(modules) != 1:
                problems.append(f"{rule.id}'s fix {fix.id!r} needs exactly one module "
                                f"dpcheck/rules/fixes/{expected}.py defining FIX "
                                f"(found {len(modules)})")
            elif modules[0][0] != expected:
                problems.append(f"the fix {fix.id!r} is defined in dpcheck/rules/fixes/"
                                f"{modules[0][0]}.py: name the module {expected}.py")
            elif modules[0][1].rule != rule.id:
                problems.append(f"dpcheck/rules/fixes/{expected}.py says its fix is for "
                                f"{modules[0][1].rule}, but rules/{rule.id}.toml declares it")
            else:
                pairs.append(RegisteredFix(rule.id, fix, modules[0][1]))
    if problems:
        raise CatalogError("the rule catalog and the fix modules disagree: " + "; ".join(problems))
    return FixRegistry(tuple(pairs))


@functools.cache
def fix_registry() -> FixRegistry:
    """The shipped catalog's fixes with this package's modules, checked (cached per process)."""
    return registered(load_catalog(), discover(PACKAGE))
