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
from dpcheck.catalog.examples import EXAMPLE_MAIN_FILE, FLAGGED_MARKER
from dpcheck.errors import DpcheckError
from dpcheck.model import Severity

__all__ = ["EXAMPLE_MAIN_FILE", "FIX_SAFETIES", "Catalog", "Example", "Fix", "FixExample",
           "MinimalExample", "Reference", "Rule"]

#: How much a fix may change: ``safe`` keeps what training does (it changes what is computed
#: about it, or pins what already runs); ``unsafe`` changes how training behaves (the sampling
#: scheme), so ``dpcheck scan --fix`` applies it only with ``--unsafe-fixes``.
FIX_SAFETIES: tuple[str, ...] = ("safe", "unsafe")


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

    def marked_lines(self) -> tuple[tuple[str, int], ...]:
        """``(path, 1-based line)`` of every line carrying the ``# flagged`` marker comment."""
        return tuple(
            (path, number)
            for path, text in self.project_files()
            for number, line in enumerate(text.splitlines(), start=1)
            if FLAGGED_MARKER.search(line)
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "code": self.code,
            "expect": list(self.expect),
            "files": dict(self.files),
            "pending": self.pending,
        }


@dataclass(frozen=True)
class MinimalExample:
    """The shortest project that shows the rule (``flagged``, one line marked ``# flagged``) and
    the smallest change that passes (``use_instead``): the "Example" section of the rule page.
    Both are scanned by the tests like every example."""

    flagged: Example
    use_instead: Example

    def to_json(self) -> dict[str, Any]:
        return {"flagged": self.flagged.to_json(), "use-instead": self.use_instead.to_json()}


@dataclass(frozen=True)
class FixExample:
    """A project before a fix and the edited file after it, run as a test.

    ``path`` is the file the fix edits (``example.py`` unless a dependency file), ``before`` its
    text and ``files`` the project's other files. ``after`` is the file's exact text after
    ``dpcheck scan --fix --unsafe-fixes``; or, for an example the fix must leave alone,
    ``unfixed`` is part of the reason dpcheck gives (``after`` is then None).
    """

    name: str
    before: str
    after: str | None = None
    unfixed: str | None = None
    path: str = EXAMPLE_MAIN_FILE
    files: tuple[tuple[str, str], ...] = ()

    def project_files(self) -> tuple[tuple[str, str], ...]:
        """Every file of the project before the fix as ``(path, text)``, the edited one first."""
        return ((self.path, self.before), *self.files)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "path": self.path, "before": self.before,
                "after": self.after, "unfixed": self.unfixed, "files": dict(self.files)}


@dataclass(frozen=True)
class Fix:
    """An automatic fix a rule offers: ``id`` (kebab-case; its module is
    ``dpcheck/rules/fixes/<id in snake_case>.py``), a one-line ``title``, ``when`` it is offered
    (Markdown), its ``safety`` (one of ``FIX_SAFETIES``) and its before/after ``examples``."""

    id: str
    title: str
    when: str
    safety: str
    examples: tuple[FixExample, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "when": self.when, "safety": self.safety,
                "examples": [e.to_json() for e in self.examples]}


@dataclass(frozen=True)
class Rule:
    """One catalog entry. ``help_text`` and ``help_uri`` are what SARIF's rule metadata needs.

    ``summary`` is one line; ``what`` says what the rule checks beyond it (where it anchors, what
    it does not flag); ``rationale`` why it matters; ``fix`` how to fix it; ``configuration``
    the settings that change what it reports (Markdown, may be empty); ``minimal`` the minimal
    flagged / use-instead pair; ``examples`` the full example projects; ``fixes`` the automatic
    fixes ``dpcheck scan --fix`` may apply to its findings, in the order they are tried.
    """

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
    what: str = ""
    configuration: str = ""
    minimal: MinimalExample | None = None
    fixes: tuple[Fix, ...] = ()

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
            "what": self.what,
            "rationale": self.rationale,
            "fix": self.fix,
            "configuration": self.configuration,
            "references": [r.to_json() for r in self.references],
            "tags": list(self.tags),
            "minimal": self.minimal.to_json() if self.minimal else None,
            "examples": [e.to_json() for e in self.examples],
            "fixes": [f.to_json() for f in self.fixes],
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
