"""Per-file analysis: the cacheable unit of a scan.

Each Python file is decoded and parsed once by CPython's parser (the syntax check); a Jupyter
notebook is read as the module its code cells make (``dpcheck.parse.notebook``) and parsed once
the same way. Files that pass the cheap text pre-filter (or that a pipeline later follows an
import into) are summarised from that same tree by ``dpcheck.sites.summarize_tree``. Both
results are plain JSON, cached by content; the light record and the (larger) summary are cached
apart, so a rescan that needs no summary never reads them.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from dpcheck.errors import internal_message
from dpcheck.locations import CellLayout
from dpcheck.parse.budget import (
    FILE_TIME_BUDGET,
    TIME_BUDGET_REASON,
    BudgetExceeded,
    Deadline,
    file_budget,
)
from dpcheck.parse.notebook import (
    NotebookSource,
    is_notebook,
    notebook_suppressions,
    parse_notebook,
    read_notebook,
    run_imports,
)
from dpcheck.parse.source import SourceProblem, decode_source, is_candidate, parse_python
from dpcheck.suppress import Suppression, find_suppressions

Summary = dict[str, Any]
T = TypeVar("T")


@dataclass(frozen=True)
class FileAnalysis:
    """What one file contributes besides its summary: a problem (-> DP001), its suppressions,
    whether it is a candidate, and whether a summary exists. ``internal_error`` is set when the
    summariser itself failed on this file (reported as a scan error, never a crash). A notebook
    also has its ``layout`` (where its cells lie in its module) and the cells ``skipped``
    because they do not parse (a DP001 each, while the rest of it is analysed)."""

    path: str
    problem: SourceProblem | None
    candidate: bool
    suppressions: tuple[Suppression, ...]
    summarized: bool = False
    internal_error: str | None = None
    layout: CellLayout | None = None
    skipped: tuple[SourceProblem, ...] = ()

    @property
    def cacheable(self) -> bool:
        """False for a file skipped for its time budget: that depends on the machine's load, so
        a later scan tries the file again."""
        return self.problem is None or TIME_BUDGET_REASON not in self.problem.message

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "problem": None
            if self.problem is None
            else [self.problem.message, self.problem.line, self.problem.column],
            "candidate": self.candidate,
            "suppressions": [s.to_json() for s in self.suppressions],
            "summarized": self.summarized,
            "internal_error": self.internal_error,
            "layout": None if self.layout is None else self.layout.to_json(),
            "skipped": [[p.message, p.line, p.column] for p in self.skipped],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> FileAnalysis:
        problem = data["problem"]
        return cls(
            path=data["path"],
            problem=None if problem is None else SourceProblem(*problem),
            candidate=data["candidate"],
            suppressions=tuple(Suppression.from_json(s) for s in data["suppressions"]),
            summarized=data["summarized"],
            internal_error=data.get("internal_error"),
            layout=None if data.get("layout") is None else CellLayout.from_json(data["layout"]),
            skipped=tuple(SourceProblem(*p) for p in data.get("skipped", ())),
        )


@dataclass(frozen=True)
class _Module:
    """A file read as one Python module: its text, its tree (or why there is none), its
    suppressions and, for a notebook, the notebook's own parts."""

    text: str
    tree: ast.Module | SourceProblem
    suppressions: tuple[Suppression, ...]
    layout: CellLayout | None = None
    skipped: tuple[SourceProblem, ...] = ()
    runs: list[dict[str, Any]] = field(default_factory=list)


def _read_module(path: str, data: bytes, max_bytes: int,
                 stage: Callable[[str, Callable[[], Any]], Any]) -> _Module | SourceProblem | None:
    """The module of a Python file or a notebook; a problem when it cannot be read; None for a
    notebook whose kernel is not Python (not Python source at all). Each step runs as a named
    ``stage`` of the file's analysis."""
    if is_notebook(path):
        notebook = stage("reading the notebook", lambda: read_notebook(data, max_bytes))
        if not isinstance(notebook, NotebookSource):
            return notebook  # type: ignore[no-any-return]
        tree, skipped = stage("parsing", lambda: parse_notebook(notebook, path))
        return _Module(notebook.module, tree, notebook_suppressions(notebook), notebook.layout,
                       skipped, run_imports(path, notebook.runs))
    decoded = stage("decoding", lambda: decode_source(data, max_bytes))
    if isinstance(decoded, SourceProblem):
        return decoded
    suppressions = stage("reading suppressions", lambda: find_suppressions(decoded))
    tree = stage("parsing", lambda: parse_python(decoded, path))
    return _Module(decoded, tree, suppressions)


def analyze_file(
    path: str,
    data: bytes,
    markers: tuple[str, ...],
    *,
    summarize: bool = False,
    max_bytes: int,
    time_budget: float | None = FILE_TIME_BUDGET,
) -> tuple[FileAnalysis, Summary | None]:
    """Analyse one file; ``summarize`` forces a summary even if the pre-filter would skip it.

    Never raises: a file over its budgets (``dpcheck.parse.budget``) is skipped with the reason
    as its problem (DP001), and an unexpected exception in any stage (decode, parse,
    suppressions, pre-filter, summarise) is this file's ``internal_error``, naming the stage."""
    try:
        with file_budget(time_budget) as deadline:
            outcome = _analyze(path, data, markers, summarize, max_bytes, deadline)
            if deadline.expired:  # the timer's exception was swallowed on the way: no result
                raise BudgetExceeded(deadline.reason)
            return outcome
    except BudgetExceeded as exc:
        return FileAnalysis(path, SourceProblem(f"skipped: {exc}"), False, ()), None
    except _StageFailed as failed:
        return FileAnalysis(path, None, False, (), False, failed.message), None


class _StageFailed(Exception):
    """An unexpected exception in one stage of one file's analysis (a dpcheck bug)."""

    def __init__(self, stage: str, exc: Exception) -> None:
        super().__init__(stage)
        self.message = internal_message(stage, exc)


def _analyze(
    path: str,
    data: bytes,
    markers: tuple[str, ...],
    summarize: bool,
    max_bytes: int,
    deadline: Deadline,
) -> tuple[FileAnalysis, Summary | None]:
    from dpcheck.sites import summarize_tree

    def _stage(stage: str, work: Callable[[], T]) -> T:
        try:
            return work()
        except Exception as exc:  # noqa: BLE001 - one file's analyser bug must not stop the scan
            if deadline.expired:  # C code interrupted by the timer raised its own error
                raise BudgetExceeded(deadline.reason) from exc
            raise _StageFailed(stage, exc) from exc

    module = _read_module(path, data, max_bytes, _stage)
    if module is None or isinstance(module, SourceProblem):
        return FileAnalysis(path, module, False, ()), None
    found = FileAnalysis(path, None, False, module.suppressions, layout=module.layout,
                         skipped=module.skipped)
    if isinstance(module.tree, SourceProblem):
        return replace(found, problem=module.tree), None
    candidate = _stage("pre-filtering", lambda: is_candidate(module.text, markers))
    if not (candidate or summarize):
        return found, None
    try:
        summary = _stage("summarising", lambda: summarize_tree(module.tree, module.text, path))
    except _StageFailed as failed:
        return replace(found, candidate=candidate, internal_error=failed.message), None
    if module.runs:
        summary["runs"] = module.runs
    return replace(found, candidate=candidate, summarized=True), summary
