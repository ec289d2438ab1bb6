"""What the renderers read besides the model's plain data.

Protocols for the rule catalog's entries and for ``--strict`` suppression notices (so the report
package depends on their shape, not on their modules), and the bound's printable summary.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from dpcheck.model import Severity, Span


class RuleMeta(Protocol):
    """What a renderer needs to know about a catalog rule.

    ``help_text`` is markdown (rationale and fix); ``help_uri`` links to the rule's page, if any.
    Read-only properties, so frozen dataclasses and plain objects both conform.
    """

    @property
    def id(self) -> str: ...

    @property
    def name(self) -> str: ...

    @property
    def severity(self) -> Severity | str: ...

    @property
    def summary(self) -> str: ...

    @property
    def help_text(self) -> str: ...

    @property
    def help_uri(self) -> str | None: ...


def rules_by_id(rules: Sequence[RuleMeta]) -> dict[str, RuleMeta]:
    """Index the catalog by rule id."""
    return {rule.id: rule for rule in rules}


class SuppressionNotice(Protocol):
    """A suppression comment ``--strict`` reports (blanket or unused); it fails the scan there."""

    @property
    def span(self) -> Span: ...

    @property
    def kind(self) -> str: ...

    @property
    def message(self) -> str: ...


def bound_summary(bound: Mapping[str, object] | None) -> list[str]:
    """The bound's ``summary`` lines when it holds a list of strings there, else nothing."""
    lines = bound.get("summary") if bound else None
    if isinstance(lines, (list, tuple)) and all(isinstance(line, str) for line in lines):
        return [str(line) for line in lines]
    return []
