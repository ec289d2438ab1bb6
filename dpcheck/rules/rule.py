"""What a rule module defines: its hit, its kind (what it reads) and its bound policy.

A rule module ``dpcheck/rules/<rule_name>.py`` (the catalog name in snake_case) ends with one
``RULE = PipelineRule(...)``, ``RULE = FileRule(...)`` or ``RULE = UnlinkedRule(...)``: the rule
id, the ``check`` function and,
for a pipeline rule that has one, the ``BoundPolicy``. ``check`` yields ``Hit`` objects: where the
rule fired and the message's parameters as typed fields; the evaluator turns them into findings.
The words of a rule (summary, rationale, fix, examples) stay in its TOML file in ``rules/``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from dpcheck.model import Evidence, Finding, Pipeline, Severity, Span, UnlinkedCode
from dpcheck.parse.analysis import FileAnalysis
from dpcheck.project import Project

if TYPE_CHECKING:
    from dpcheck.privacy.divisor import DivisorCheck


@dataclass(frozen=True)
class Hit(ABC):
    """Where a rule fired (``span``) and why; each rule subclasses it with the parameters of its
    message as fields, so tests and tools can read them without parsing the message."""

    span: Span

    @abstractmethod
    def message(self) -> str:
        """The finding's message, rendered from the hit's fields."""

    def fallback_context(self) -> str:
        """The finding's context when the anchor line has no text (an undecodable file)."""
        return ""

    def severity(self, catalog: Severity) -> Severity:
        """The finding's severity: the catalog's, unless the hit itself is milder (DP102 on a
        sampling scheme whose privacy is close to the accountant's assumption)."""
        return catalog

    def evidence(self) -> tuple[Evidence, ...]:
        """The sites the finding rests on, for a rule whose subject is not a pipeline (a
        pipeline finding's evidence is the pipeline's)."""
        return ()


@dataclass(frozen=True)
class BoundPolicy:
    """Whether and how a finding of a pipeline rule gets a corrected bound
    (``dpcheck.bounds.attach`` applies it).

    ``mechanism`` is the bound's mechanism (``dpcheck bound``'s names: ``sgm``, ``asgm``,
    ``easgm``, ``feasgm``, ``shuffle``) or a function of the pipeline giving it (None: no bound).
    ``claimed_by_accountant``: the claimed side is what the accountant was given (its q, steps
    and sigma) rather than the code's values. ``claim_only``: the pipeline's mechanism is
    undecided, so only the claimed side is stated, with this advice as the bound's note.
    ``downgrade``: given the finding and the divisor check of its parameters (the divisor at
    N-1, N, N+1), the finding to report instead (a lower severity when the divisor shows no
    leak at the code's numbers).
    """

    mechanism: str | Callable[[Pipeline], str | None]
    claimed_by_accountant: bool = False
    claim_only: str | None = None
    downgrade: Callable[[Finding, DivisorCheck], Finding] | None = None

    def mechanism_of(self, pipeline: Pipeline) -> str | None:
        """The bound mechanism for a finding of ``pipeline``."""
        return self.mechanism if isinstance(self.mechanism, str) else self.mechanism(pipeline)


@dataclass(frozen=True)
class PipelineRule:
    """A rule over one classified training pipeline. A ``fallback`` rule is evaluated on a
    pipeline only when no other pipeline rule fired on it (those already say what is wrong). A
    ``site_fact`` rule states a fact of the place it is anchored on, not of the pipeline (a
    library requirement that pins no release): several entries reaching that place make one
    finding (``evaluate.once_per_site``), where a pipeline fact (a loader's sampling judged
    with each entry's own parameters and bound) stays one finding per entry."""

    id: str
    check: Callable[[Pipeline, Project], Iterator[Hit]]
    bound: BoundPolicy | None = None
    fallback: bool = False
    site_fact: bool = False


@dataclass(frozen=True)
class FileRule:
    """A rule over one file's own analysis (parse problems), independent of any pipeline."""

    id: str
    check: Callable[[FileAnalysis], Iterator[Hit]]


@dataclass(frozen=True)
class UnlinkedRule:
    """A rule over the DP code of a project that no pipeline took (``UnlinkedCode``, one per
    entry that formed no pipeline), all of it at once: it may group what several entries
    left."""

    id: str
    check: Callable[[tuple[UnlinkedCode, ...], Project], Iterator[Hit]]


RuleDefinition = PipelineRule | FileRule | UnlinkedRule
