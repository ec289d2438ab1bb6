"""Per-file analysis: the cacheable unit of a scan.

Each Python file is decoded and parsed once by CPython's parser (the syntax check); files that
pass the cheap text pre-filter (or that a pipeline later follows an import into) are summarised
from that same tree by ``dpcheck.sites.summarize_tree``. Both results are plain JSON, cached by
content; the light record and the (larger) summary are cached apart, so a rescan that needs no
summary never reads them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dpcheck.parse.source import SourceProblem, decode_source, is_candidate, parse_python
from dpcheck.suppress import Suppression, find_suppressions

Summary = dict[str, Any]


@dataclass(frozen=True)
class FileAnalysis:
    """What one file contributes besides its summary: a problem (-> DP001), its suppressions,
    whether it is a candidate, and whether a summary exists. ``internal_error`` is set when the
    summariser itself failed on this file (reported as a scan error, never a crash)."""

    path: str
    problem: SourceProblem | None
    candidate: bool
    suppressions: tuple[Suppression, ...]
    summarized: bool = False
    internal_error: str | None = None

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
        )


def analyze_file(
    path: str, data: bytes, markers: tuple[str, ...], *, summarize: bool = False, max_bytes: int
) -> tuple[FileAnalysis, Summary | None]:
    """Analyse one file; ``summarize`` forces a summary even if the pre-filter would skip it."""
    from dpcheck.sites import summarize_tree

    decoded = decode_source(data, max_bytes)
    if isinstance(decoded, SourceProblem):
        return FileAnalysis(path, decoded, False, ()), None
    suppressions = find_suppressions(decoded)
    tree = parse_python(decoded, path)
    if isinstance(tree, SourceProblem):
        return FileAnalysis(path, tree, False, suppressions), None
    candidate = is_candidate(decoded, markers)
    if not (candidate or summarize):
        return FileAnalysis(path, None, False, suppressions), None
    try:
        summary = summarize_tree(tree, decoded, path)
    except Exception as exc:  # noqa: BLE001 - one file's analyser bug must not stop the scan
        return FileAnalysis(path, None, candidate, suppressions, False, f"{type(exc).__name__}: {exc}"), None
    return FileAnalysis(path, None, candidate, suppressions, True), summary
