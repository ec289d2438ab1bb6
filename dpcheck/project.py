"""What the pipeline stage sees of a scanned project: its files, their summaries, its facts.

The engine builds one ``Project`` per scan. Candidate files (those a cheap text pre-filter marks as
possibly DP-relevant) are summarised eagerly, in parallel and cached; any other Python file of
the project is summarised lazily, the first time a pipeline follows an import into it (a config
module holding ``SIGMA = 1.1``, say). Summaries are the JSON-serialisable output of
``dpcheck.sites.summarize_tree``; they are loaded through ``_load`` only when first asked for.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dpcheck.discover.facts import ProjectFacts
from dpcheck.errors import internal_message
from dpcheck.model import ParamValue

Summary = dict[str, Any]


@dataclass
class Project:
    """A scanned project as the pipeline stage and the rules see it.

    ``paths`` are POSIX paths relative to ``root`` of every Python file in scope; ``reported``
    limits which of them findings may be reported on (pre-commit passes a subset of files, but
    pipelines are still resolved across the whole project). ``overrides`` are the ``--param`` /
    config ``params`` values (source ``override``), which win over statically found values.
    ``failures`` collects ``(path, message)`` of the internal errors the pipeline stage met and
    isolated.
    """

    root: Path
    facts: ProjectFacts
    paths: tuple[str, ...]
    overrides: Mapping[str, ParamValue]
    candidates: frozenset[str]
    _load: Callable[[str], Summary | None]
    _sources: Callable[[str], str | None]
    reported: frozenset[str] | None = None
    failures: list[tuple[str, str]] = field(default_factory=list)
    _summaries: dict[str, Summary | None] = field(default_factory=dict)
    _lines: dict[str, list[str]] = field(default_factory=dict)

    def failed(self, path: str, stage: str, exc: Exception) -> None:
        """Record a dpcheck bug met on ``path`` while doing ``stage`` (linking one pipeline,
        say): the scan reports it as an internal error of that file and goes on."""
        self.failures.append((path, internal_message(stage, exc)))

    def summary(self, path: str) -> Summary | None:
        """The summary of a project file (None if it is unparsable or not a project file)."""
        if path not in self._summaries:
            self._summaries[path] = self._load(path) if path in self.paths else None
        return self._summaries[path]

    def candidate_paths(self) -> tuple[str, ...]:
        """Files that may hold DP sites (the pre-filter's choice) and have a summary."""
        return tuple(p for p in sorted(self.candidates) if self.summary(p) is not None)

    def source_line(self, path: str, line: int) -> str:
        """The text of a 1-based source line (empty if unavailable); used for fingerprints."""
        if path not in self._lines:
            text = self._sources(path)
            self._lines[path] = text.splitlines() if text is not None else []
        lines = self._lines[path]
        return lines[line - 1] if 0 < line <= len(lines) else ""

    def is_reported(self, path: str) -> bool:
        """Whether findings anchored in ``path`` are reported in this scan."""
        return self.reported is None or path in self.reported
