"""What a fix module defines: ``FIX = FixDefinition(fix_id, rule_id, propose)``.

``propose(site)`` reads one finding (its pipeline, the project's files) and returns either
``NoFix(reason)`` — no fix is offered, and the reason says why in the user's terms — or the
``Proposal``s to try, in order: the text edits, what they do, and what the re-analysed project
must show for the fix to count (``check``). The fix stage (``dpcheck.fixing``) re-analyses the
project with the edits in memory and applies a proposal only when the finding is gone, nothing
at or above its severity is new and ``check`` holds; the first such proposal is the fix.

A proposal is pure text: ``Edit``s of a file's text as read (no BOM), computed by
``edit_between`` from the file and its rewritten text, so what lies outside an edit is the
file's own bytes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from dpcheck.discover.installed import InstalledLibrary
from dpcheck.model import Finding, Pipeline, Span, TextEdit


@dataclass(frozen=True)
class Edit:
    """Replace the characters ``start:end`` of the file ``path`` (its text as read) by
    ``content``. ``span`` is the same range in 1-based lines and character columns, the end
    exclusive, for reports."""

    path: str
    start: int
    end: int
    content: str
    span: Span

    @property
    def text_edit(self) -> TextEdit:
        """The edit as reports carry it (span and content)."""
        return TextEdit(self.span, self.content)


def position(text: str, offset: int) -> tuple[int, int]:
    """The 1-based line and character column of ``offset`` in ``text``."""
    line_start = text.rfind("\n", 0, offset) + 1
    return text.count("\n", 0, offset) + 1, offset - line_start + 1


def edit_between(path: str, old: str, new: str) -> tuple[Edit, ...]:
    """The one edit that turns ``old`` into ``new`` (none when they are equal): the text between
    their common beginning and their common end."""
    if old == new:
        return ()
    start = 0
    limit = min(len(old), len(new))
    while start < limit and old[start] == new[start]:
        start += 1
    end_old, end_new = len(old), len(new)
    while end_old > start and end_new > start and old[end_old - 1] == new[end_new - 1]:
        end_old -= 1
        end_new -= 1
    line, column = position(old, start)
    end_line, end_column = position(old, end_old)
    return (Edit(path, start, end_old, new[start:end_new],
                 Span(path, line, column, end_line, end_column)),)


def apply_edits(text: str, edits: Sequence[Edit]) -> str:
    """``text`` with ``edits`` (of this one file, not overlapping) applied."""
    for edit in sorted(edits, key=lambda e: e.start, reverse=True):
        text = text[: edit.start] + edit.content + text[edit.end:]
    return text


@dataclass(frozen=True)
class Outcome:
    """The re-analysed project as a fix's ``check`` sees it: the finding's pipeline after the
    edits (None when that entry forms no pipeline any more) and the findings reported on it."""

    pipeline: Pipeline | None
    findings: tuple[Finding, ...] = ()


def _holds(outcome: Outcome) -> str | None:
    return None


@dataclass(frozen=True)
class Proposal:
    """Edits that should make a finding go away. ``message`` says what they do (one line).
    ``check`` says why the re-analysed project does not show what the fix promises (None: it
    does), beyond the finding being gone; ``consequence`` gives a note on the re-analysed
    project that the user must hear (None: none)."""

    edits: tuple[Edit, ...]
    message: str
    check: Callable[[Outcome], str | None] = _holds
    consequence: Callable[[Outcome], str | None] = _holds


@dataclass(frozen=True)
class NoFix:
    """Why a fix is not offered for a finding."""

    reason: str


@dataclass(frozen=True)
class FixSite:
    """What a fix reads: the finding, its pipeline (None for a file rule's finding or when the
    pipeline is not in the scan), the text of a project file by its root-relative path (None
    when it cannot be read as UTF-8 text), the project's root and the installed copy of a DP
    library (``dpcheck.discover.installed``)."""

    finding: Finding
    pipeline: Pipeline | None
    text: Callable[[str], str | None]
    root: Path = Path(".")
    installed: Callable[[str], InstalledLibrary | None] = field(default=lambda library: None)


Propose = Callable[[FixSite], Sequence[Proposal] | NoFix]


@dataclass(frozen=True)
class FixDefinition:
    """A fix of the rule ``rule``, declared in the catalog under ``[[fixes]]`` with ``id``."""

    id: str
    rule: str
    propose: Propose
