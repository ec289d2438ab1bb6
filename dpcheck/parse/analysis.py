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
from dataclasses import dataclass, field, replace
from typing import Any

from dpcheck.locations import CellLayout
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


def _read_module(path: str, data: bytes, max_bytes: int) -> _Module | SourceProblem | None:
    """The module of a Python file or a notebook; a problem when it cannot be read; None for a
    notebook whose kernel is not Python (not Python source at all)."""
    if is_notebook(path):
        notebook = read_notebook(data, max_bytes)
        if not isinstance(notebook, NotebookSource):
            return notebook
        tree, skipped = parse_notebook(notebook, path)
        return _Module(notebook.module, tree, notebook_suppressions(notebook), notebook.layout,
                       skipped, run_imports(path, notebook.runs))
    decoded = decode_source(data, max_bytes)
    if isinstance(decoded, SourceProblem):
        return decoded
    return _Module(decoded, parse_python(decoded, path), find_suppressions(decoded))


def analyze_file(
    path: str, data: bytes, markers: tuple[str, ...], *, summarize: bool = False, max_bytes: int
) -> tuple[FileAnalysis, Summary | None]:
    """Analyse one file; ``summarize`` forces a summary even if the pre-filter would skip it."""
    from dpcheck.sites import summarize_tree

    module = _read_module(path, data, max_bytes)
    if module is None or isinstance(module, SourceProblem):
        return FileAnalysis(path, module, False, ()), None
    found = FileAnalysis(path, None, False, module.suppressions, layout=module.layout,
                         skipped=module.skipped)
    if isinstance(module.tree, SourceProblem):
        return replace(found, problem=module.tree), None
    candidate = is_candidate(module.text, markers)
    if not (candidate or summarize):
        return found, None
    try:
        summary = summarize_tree(module.tree, module.text, path)
    except Exception as exc:  # noqa: BLE001 - one file's analyser bug must not stop the scan
        return replace(found, candidate=candidate, internal_error=f"{type(exc).__name__}: {exc}"), None
    if module.runs:
        summary["runs"] = module.runs
    return replace(found, candidate=candidate, summarized=True), summary
