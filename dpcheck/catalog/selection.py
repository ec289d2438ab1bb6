"""Turn ``--select``/``--ignore`` codes into the set of active rule ids (ruff-style prefixes)."""

from __future__ import annotations

from collections.abc import Sequence

from dpcheck.catalog.rule import Catalog
from dpcheck.errors import DpcheckError

ALL = "ALL"


def select_rules(catalog: Catalog, select: Sequence[str], ignore: Sequence[str]) -> frozenset[str]:
    """The rule ids that are selected and not ignored.

    Each code is ``ALL`` or a prefix of rule ids (``DP1`` means DP101-DP199, ``DP101`` one
    rule), case-insensitive. An empty ``select`` means ``ALL``. A code that matches no rule is an
    error naming it, so a typo never silently disables a check.
    """
    chosen = _expand(catalog, select, "select") if select else frozenset(catalog.ids())
    return chosen - _expand(catalog, ignore, "ignore")


def _expand(catalog: Catalog, codes: Sequence[str], option: str) -> frozenset[str]:
    ids: set[str] = set()
    unknown: list[str] = []
    for code in codes:
        prefix = code.strip().upper()
        if prefix == ALL:
            matched = list(catalog.ids())
        else:
            matched = [i for i in catalog.ids() if prefix and i.startswith(prefix)]
        if not matched:
            unknown.append(code)
        ids.update(matched)
    if unknown:
        raise DpcheckError(
            f"{option}: unknown rule code(s) {', '.join(repr(c) for c in unknown)} "
            f"(known: ALL, {', '.join(catalog.ids())} or a prefix such as DP1)"
        )
    return frozenset(ids)
