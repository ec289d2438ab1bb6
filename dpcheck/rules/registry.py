"""The rule registry: every rule module of this package, checked against the rule catalog.

A rule module is any module of ``dpcheck.rules`` that defines ``RULE`` (see ``rule.py``); the
others (this one, the evaluator, shared helpers) define none. ``registry()`` loads the shipped
catalog, collects the modules and checks that they match one to one: every catalog id has
exactly one module, named after the rule's kebab name in snake_case, and every module checks an
id the catalog defines. A mismatch is a ``CatalogError`` naming the rule and the file to add or
rename, raised before any rule runs.

Rules come in kinds by what they read: ``PipelineRule`` (a classified pipeline), ``FileRule``
(one file's own analysis) and ``UnlinkedRule`` (the DP code no pipeline took). A rule over
another subject is a new kind in ``rule.py`` plus its evaluation in ``evaluate.py``.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from dpcheck.catalog import Catalog, load_catalog
from dpcheck.errors import CatalogError
from dpcheck.model import Severity
from dpcheck.rules.rule import BoundPolicy, FileRule, PipelineRule, RuleDefinition, UnlinkedRule

#: The package whose modules are searched for rules.
PACKAGE = __name__.rpartition(".")[0]


def module_name(rule_name: str) -> str:
    """The module of a rule: its kebab-case catalog name in snake_case."""
    return rule_name.replace("-", "_")


@dataclass(frozen=True)
class Registered:
    """One rule: its definition and the module (last dotted part) that defines it."""

    module: str
    definition: RuleDefinition
    severity: Severity


@dataclass(frozen=True)
class Registry:
    """The catalog's rules with their definitions, sorted by id."""

    catalog: Catalog
    rules: tuple[Registered, ...]

    def severity(self, rule_id: str) -> Severity:
        """The catalog severity of a rule."""
        return next(r.severity for r in self.rules if r.definition.id == rule_id)

    @property
    def pipeline_rules(self) -> tuple[PipelineRule, ...]:
        return tuple(r.definition for r in self.rules if isinstance(r.definition, PipelineRule))

    @property
    def file_rules(self) -> tuple[FileRule, ...]:
        return tuple(r.definition for r in self.rules if isinstance(r.definition, FileRule))

    @property
    def unlinked_rules(self) -> tuple[UnlinkedRule, ...]:
        return tuple(r.definition for r in self.rules if isinstance(r.definition, UnlinkedRule))

    def bound_policy(self, rule_id: str) -> BoundPolicy | None:
        """The bound policy of a rule (None for a rule without a bound or an unknown id)."""
        return next((r.bound for r in self.pipeline_rules if r.id == rule_id), None)


def discover(package: str) -> list[tuple[str, RuleDefinition]]:
    """Every ``(module name, RULE)`` defined by a module of the package named ``package``."""
    found: list[tuple[str, RuleDefinition]] = []
    for info in pkgutil.iter_modules(importlib.import_module(package).__path__):
        module = importlib.import_module(f"{package}.{info.name}")
        definition = getattr(module, "RULE", None)
        if isinstance(definition, (PipelineRule, FileRule, UnlinkedRule)):
            found.append((info.name, definition))
    return found


def registered(catalog: Catalog, definitions: Iterable[tuple[str, RuleDefinition]]) -> Registry:
    """Pair the catalog's rules with their definitions, or raise ``CatalogError`` saying which
    id lacks a module, which module checks an unknown id, which id two modules check, or which
    module is misnamed."""
    by_id: dict[str, list[tuple[str, RuleDefinition]]] = {}
    for module, definition in definitions:
        by_id.setdefault(definition.id, []).append((module, definition))
    problems: list[str] = []
    for rule_id, modules in sorted(by_id.items()):
        if rule_id not in catalog.ids():
            problems.append(f"{_modules(modules)} checks {rule_id}, which the catalog does not "
                            f"define (add rules/{rule_id}.toml)")
        elif len(modules) > 1:
            problems.append(f"{rule_id} is checked by more than one module: {_modules(modules)}")
    pairs: list[Registered] = []
    for rule in catalog.rules:
        expected = module_name(rule.name)
        modules = by_id.get(rule.id, [])
        if not modules:
            problems.append(f"{rule.id} ({rule.name}) has no check: add dpcheck/rules/"
                            f"{expected}.py defining RULE")
        elif len(modules) == 1 and modules[0][0] != expected:
            problems.append(f"{rule.id} is checked in dpcheck/rules/{modules[0][0]}.py: name the "
                            f"module after the rule, dpcheck/rules/{expected}.py")
        elif len(modules) == 1:
            pairs.append(Registered(expected, modules[0][1], rule.severity))
    if problems:
        raise CatalogError("the rule catalog and the rule modules disagree: " + "; ".join(problems))
    return Registry(catalog, tuple(pairs))


def _modules(modules: Sequence[tuple[str, RuleDefinition]]) -> str:
    return ", ".join(f"dpcheck/rules/{name}.py" for name, _ in modules)


@functools.cache
def registry() -> Registry:
    """The shipped catalog with this package's rule modules, checked (cached per process)."""
    return registered(load_catalog(), discover(PACKAGE))
