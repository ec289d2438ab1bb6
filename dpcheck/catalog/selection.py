"""Turn rule codes into rule ids: ``--select``/``--ignore``, ``per-file-ignores`` and the codes of
suppression comments all read codes the same way (ruff-style prefixes, plus rule names)."""

from __future__ import annotations

from collections.abc import Sequence

from dpcheck.catalog.rule import Catalog
from dpcheck.errors import DpcheckError

ALL = "ALL"


def rule_ids(catalog: Catalog, code: str) -> frozenset[str]:
    """The rule ids ``code`` names; empty when it names none.

    A code is ``ALL``, a prefix of rule ids (``DP1`` means DP101-DP199, ``DP101`` one rule,
    case-insensitive) or a rule's kebab-case name (``unpinned-dp-library``).
    """
    token = code.strip()
    if not token:
        return frozenset()
    if token.upper() == ALL:
        return frozenset(catalog.ids())
    by_name = {rule.name: rule.id for rule in catalog.rules}
    if token.lower() in by_name:
        return frozenset({by_name[token.lower()]})
    return frozenset(i for i in catalog.ids() if i.startswith(token.upper()))


def unknown_codes(catalog: Catalog, codes: Sequence[str]) -> list[str]:
    """The codes of ``codes`` that name no rule, in order."""
    return [code for code in codes if not rule_ids(catalog, code)]


def known_codes_hint(catalog: Catalog) -> str:
    """What a valid code looks like, for error and warning messages."""
    return f"known: ALL, {', '.join(catalog.ids())}, a prefix such as DP1, or a rule name"


def select_rules(catalog: Catalog, select: Sequence[str], ignore: Sequence[str]) -> frozenset[str]:
    """The rule ids that are selected and not ignored.

    An empty ``select`` means ``ALL``. A code that matches no rule is an error naming it, so a
    typo never silently disables a check.
    """
    chosen = _expand(catalog, select, "select") if select else frozenset(catalog.ids())
    return chosen - _expand(catalog, ignore, "ignore")


def _expand(catalog: Catalog, codes: Sequence[str], option: str) -> frozenset[str]:
    unknown = unknown_codes(catalog, codes)
    if unknown:
        raise DpcheckError(
            f"{option}: unknown rule code(s) {', '.join(repr(c) for c in unknown)} "
            f"({known_codes_hint(catalog)})"
        )
    return frozenset(i for code in codes for i in rule_ids(catalog, code))
