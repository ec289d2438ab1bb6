"""Strict checks shared by the catalogs dpcheck ships as data (the rule catalog, the DP library
API catalog): every problem is a ``CatalogError`` naming the file and the key, so a broken data
file fails when it is loaded and never half-works."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from dpcheck.errors import CatalogError

T = TypeVar("T")


def check_keys(
    file: object,
    prefix: str,
    table: dict[str, Any],
    allowed: frozenset[str],
    required: tuple[str, ...],
) -> None:
    """``table`` has only ``allowed`` keys and every ``required`` one."""
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise CatalogError(
            f"{file}: {prefix}{unknown[0]}: unknown key (allowed: {', '.join(sorted(allowed))})"
        )
    for key in required:
        if key not in table:
            raise CatalogError(f"{file}: {prefix}{key}: missing required key")


def string(file: object, key: str, value: Any) -> str:
    """A non-empty string."""
    if not isinstance(value, str) or not value.strip():
        raise CatalogError(f"{file}: {key}: must be a non-empty string")
    return value


def table(file: object, key: str, value: Any) -> dict[str, Any]:
    """A TOML table."""
    if not isinstance(value, dict):
        raise CatalogError(f"{file}: {key}: must be a table")
    return value


def listed(
    file: object, key: str, value: Any, parse: Callable[[Any, str, Any], T]
) -> tuple[T, ...]:
    """A list, each item parsed by ``parse(file, "key[i]", item)``."""
    if not isinstance(value, list):
        raise CatalogError(f"{file}: {key}: must be a list")
    return tuple(parse(file, f"{key}[{index}]", item) for index, item in enumerate(value))
