"""--select / --ignore codes: ruff-style prefixes over the shipped catalog's rules (restricted
to the seven below, so that a rule added later does not change the expected sets)."""

from __future__ import annotations

import pytest

from dpcheck.catalog import Catalog, load_catalog, select_rules
from dpcheck.errors import DpcheckError

ALL_IDS = frozenset({"DP001", "DP101", "DP102", "DP103", "DP104", "DP105", "DP106"})


def _catalog() -> Catalog:
    return Catalog(tuple(r for r in load_catalog().rules if r.id in ALL_IDS))


@pytest.mark.parametrize(
    ("select", "ignore", "expected"),
    [
        ((), (), ALL_IDS),
        (("ALL",), (), ALL_IDS),
        (("DP1",), (), ALL_IDS - {"DP001"}),
        (("DP10",), ("DP103", "DP105"), frozenset({"DP101", "DP102", "DP104", "DP106"})),
        (("dp001", " DP104 "), (), frozenset({"DP001", "DP104"})),
        (("DP101",), ("DP1",), frozenset()),
        (("all",), ("DP0",), ALL_IDS - {"DP001"}),
    ],
)
def test_prefixes_select_and_ignore(
    select: tuple[str, ...], ignore: tuple[str, ...], expected: frozenset[str]
) -> None:
    assert select_rules(_catalog(), select, ignore) == expected


@pytest.mark.parametrize(
    ("select", "ignore", "named"),
    [
        (("DP9", "DP1"), (), "select: unknown rule code(s) 'DP9'"),
        ((), ("DP1", "XYZ", "DP2"), "ignore: unknown rule code(s) 'XYZ', 'DP2'"),
        (("",), (), "select: unknown rule code(s) ''"),
    ],
)
def test_unknown_codes_are_errors_naming_them(
    select: tuple[str, ...], ignore: tuple[str, ...], named: str
) -> None:
    with pytest.raises(DpcheckError) as excinfo:
        select_rules(_catalog(), select, ignore)
    assert named in str(excinfo.value)
