"""DP001 unparsable-file: a Python file (or a notebook cell) could not be read or parsed, so it
was not analysed.

A file-level rule: it reads one file's own analysis (the decoding and syntax check made when the
file is first read), never a pipeline. Anchored at the problem's position; an undecodable file
has no line text, so the problem itself is the finding's context.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from dpcheck.model import Span
from dpcheck.parse.analysis import FileAnalysis
from dpcheck.rules.rule import FileRule, Hit


@dataclass(frozen=True)
class UnparsableFile(Hit):
    """The ``problem`` (the decoder's or parser's message) that stopped the analysis."""

    problem: str

    def message(self) -> str:
        return f"cannot analyse {self.span.path}: {self.problem}"

    def fallback_context(self) -> str:
        return self.problem


def check(analysis: FileAnalysis) -> Iterator[UnparsableFile]:
    """The file's problem, or, in a notebook whose other cells were analysed, each cell left
    out because it does not parse."""
    problems = (analysis.problem,) if analysis.problem is not None else analysis.skipped
    for problem in problems:
        yield UnparsableFile(Span(analysis.path, problem.line, problem.column), problem.message)


RULE = FileRule("DP001", check)
