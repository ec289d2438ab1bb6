"""What the renderers read besides the model's plain data.

Protocols for the rule catalog's entries and for suppression notices (so the report package
depends on their shape, not on their modules), the bound's printable summary, and the links to
the rule pages.

The rule pages are the ``docs/rules/`` folder (``<ID>.md`` per rule, ``README.md`` the index),
published at :data:`DEFAULT_DOCS_URL`; a project that hosts them elsewhere (a fork, an internal
mirror) sets ``docs-url`` in ``[tool.dpcheck]`` or passes ``--docs-url``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol
from urllib.parse import urlsplit

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


DEFAULT_DOCS_URL = "https://github.com/dpcheck/dpcheck/blob/main/docs/rules"


def valid_docs_url(url: str) -> bool:
    """Whether ``url`` can be the base of the rule pages: an absolute http(s) URL."""
    parts = urlsplit(url)
    return parts.scheme in ("http", "https") and bool(parts.netloc)


def rule_page_url(rule: RuleMeta, docs_url: str = DEFAULT_DOCS_URL) -> str:
    """The page of ``rule``: its own ``help_uri`` if it has one, else ``<docs_url>/<ID>.md``."""
    return rule.help_uri or f"{docs_url.rstrip('/')}/{rule.id}.md"


def rules_index_url(docs_url: str = DEFAULT_DOCS_URL) -> str:
    """The index page of the rules, ``<docs_url>/README.md``."""
    return f"{docs_url.rstrip('/')}/README.md"


class SuppressionNotice(Protocol):
    """A suppression comment that is reported: misspelt or malformed (always), blanket or unused
    (with ``--strict``)."""

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


def bound_line(bound: Mapping[str, object] | None) -> str | None:
    """The bound's summary as one line (its lines joined by ``; ``), or None without one."""
    lines = bound_summary(bound)
    return "; ".join(lines) if lines else None
