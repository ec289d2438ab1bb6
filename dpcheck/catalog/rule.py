"""The rule catalog's data types: a rule, its examples and references, and the catalog itself.

Plain frozen dataclasses: the loader builds them from the TOML files in ``rules/``, and the
docs, ``dpcheck explain``, the SARIF renderer and the example tests all read them, so a rule's
words and its examples come from one place.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any

from dpcheck.catalog.docs import rule_help_markdown
from dpcheck.errors import DpcheckError
from dpcheck.model import Severity

EXAMPLE_MAIN_FILE = "example.py"


@dataclass(frozen=True)
class Reference:
    """A document a rule cites (a paper section, an issue, a library page)."""

    title: str
    url: str

    def to_json(self) -> dict[str, str]:
        return {"title": self.title, "url": self.url}


@dataclass(frozen=True)
class Example:
    """A small project that shows a rule firing or not.

    ``code`` is the text of ``example.py``; ``files`` are the project's other files as
    ``(relative POSIX path, text)`` pairs (a requirements file, a helper module). ``expect`` is
    the exact set of rule ids a scan of the project must report (empty: it must pass).
    ``pending`` marks an example whose rule is not detected yet: tests skip it, never pass it.
    """

    name: str
    code: str
    expect: tuple[str, ...] = ()
    files: tuple[tuple[str, str], ...] = ()
    pending: bool = False

    def project_files(self) -> tuple[tuple[str, str], ...]:
        """Every file of the example project as ``(path, text)``, ``example.py`` first."""
        return ((EXAMPLE_MAIN_FILE, self.code), *self.files)

    def fires(self, rule_id: str) -> bool:
        """Whether a scan of this example must report ``rule_id``."""
        return rule_id in self.expect

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "code": self.code,
            "expect": list(self.expect),
            "files": dict(self.files),
            "pending": self.pending,
        }


@dataclass(frozen=True)
class Rule:
    """One catalog entry. ``help_text`` and ``help_uri`` are what SARIF's rule metadata needs."""

    id: str
    name: str
    severity: Severity
    summary: str
    rationale: str
    fix: str
    references: tuple[Reference, ...] = ()
    tags: tuple[str, ...] = ()
    examples: tuple[Example, ...] = ()
    help_uri: str | None = None

    @property
    def help_text(self) -> str:
        """Markdown help (rationale, fix, examples, references) built from the catalog entry."""
        return rule_help_markdown(self)

    @property
    def failing_examples(self) -> tuple[Example, ...]:
        """Examples on which this rule must fire."""
        return tuple(e for e in self.examples if e.fires(self.id))

    @property
    def passing_examples(self) -> tuple[Example, ...]:
        """Examples on which this rule must stay silent (other rules may fire)."""
        return tuple(e for e in self.examples if not e.fires(self.id))

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "severity": self.severity.value,
            "summary": self.summary,
            "rationale": self.rationale,
            "fix": self.fix,
            "references": [r.to_json() for r in self.references],
            "tags": list(self.tags),
            "examples": [e.to_json() for e in self.examples],
        }


@dataclass(frozen=True)
class Catalog:
    """All rules, sorted by id."""

    rules: tuple[Rule, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "rules", tuple(sorted(self.rules, key=lambda r: r.id)))

    def ids(self) -> tuple[str, ...]:
        """Every rule id, in order."""
        return tuple(r.id for r in self.rules)

    def get(self, rule_id: str) -> Rule:
        """The rule with this id (case-insensitive) or kebab-case name.

        Raises DpcheckError with a "did you mean" hint when there is no such rule.
        """
        wanted = rule_id.strip()
        for rule in self.rules:
            if wanted.upper() == rule.id or wanted.lower() == rule.name:
                return rule
        known = [r.id for r in self.rules] + [r.name for r in self.rules]
        close = difflib.get_close_matches(wanted.upper(), known, n=1) or difflib.get_close_matches(
            wanted.lower(), known, n=1
        )
        hint = f"; did you mean {close[0]}?" if close else ""
        raise DpcheckError(
            f"unknown rule {rule_id!r}{hint} (known rules: {', '.join(self.ids())})"
        )
