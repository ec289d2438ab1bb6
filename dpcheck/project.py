"""What the pipeline stage sees of a scanned project: its files, their summaries, its facts.

The engine builds one ``Project`` per scan. Candidate files (those a cheap text pre-filter marks as
possibly DP-relevant) are summarised eagerly, in parallel and cached; any other Python file of
the project is summarised lazily, the first time a pipeline follows an import into it (a config
module holding ``SIGMA = 1.1``, say). Summaries are the JSON-serialisable output of
``dpcheck.sites.summarize_tree``; they are loaded through ``_load`` only when first asked for.

A notebook's ``%run script.py`` runs the script in the notebook's namespace: every name the
script defines or imports is then a name of the notebook. Its summary lists such scripts
(``runs``); ``Project.summary`` turns each into imports of the script's names, so name
resolution follows them like any ``from script import name``.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dpcheck.discover.confine import read_inside
from dpcheck.discover.facts import ProjectFacts
from dpcheck.errors import internal_message
from dpcheck.model import ParamValue
from dpcheck.parse.source import MAX_FILE_BYTES

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
    _data: dict[str, bytes | None] = field(default_factory=dict)

    def failed(self, path: str, stage: str, exc: Exception) -> None:
        """Record a dpcheck bug met on ``path`` while doing ``stage`` (linking one pipeline,
        say): the scan reports it as an internal error of that file and goes on."""
        self.failures.append((path, internal_message(stage, exc)))

    def summary(self, path: str) -> Summary | None:
        """The summary of a project file (None if it is unparsable or not a project file)."""
        if path not in self._summaries:
            summary = self._load(path) if path in self.paths else None
            self._summaries[path] = _with_runs(summary, self.summary) if summary else summary
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

    def data_file(self, rel: str) -> bytes | None:
        """The bytes of the project file ``rel`` (a POSIX path relative to the root: a
        configuration file the code loads), read only inside the project and only a regular file
        of at most ``MAX_FILE_BYTES`` (``dpcheck.discover.confine``); None when it is missing,
        refused, unreadable or too large. Every file asked for is an input of linking
        (``data_read``), so a cached result is reused only while it is unchanged."""
        if rel not in self._data:
            try:
                data: bytes | None = read_inside(self.root / rel, self.root, MAX_FILE_BYTES)
            except OSError:
                data = None
            self._data[rel] = data if data is None or len(data) <= MAX_FILE_BYTES else None
        return self._data[rel]

    def data_read(self) -> frozenset[str]:
        """The data files (not Python sources) linking asked for so far (``data_file``)."""
        return frozenset(self._data)

    def files_read(self) -> frozenset[str]:
        """The files whose summaries or source lines were asked for so far: what linking read
        of the project beyond its list of paths."""
        return frozenset(self._summaries) | frozenset(self._lines)

    def is_reported(self, path: str) -> bool:
        """Whether findings anchored in ``path`` are reported in this scan."""
        return self.reported is None or path in self.reported


def _with_runs(summary: Summary, load: Callable[[str], Summary | None]) -> Summary:
    """``summary`` with the names of every script it ``%run``s added to its imports (a name the
    module imports itself keeps its own meaning): what the script defines at module level as
    ``<script module>.<name>``, what the script imports as the script imports it (a relative
    import only when the script sits in the same folder, where it means the same)."""
    runs = summary.get("runs")
    if not runs:
        return summary
    imports = dict(summary["imports"])
    for run in runs:
        script = load(run["path"])
        if not script:
            continue
        for name in _defined_names(script):
            imports.setdefault(name, f"{run['module']}.{name}")
        beside = posixpath.dirname(run["path"]) == posixpath.dirname(summary["path"])
        for name, target in script["imports"].items():
            if beside or not target.startswith("."):
                imports.setdefault(name, target)
    return {**summary, "imports": imports}


def _defined_names(summary: Summary) -> list[str]:
    """The names a module binds at module level: its functions and classes, and the plain
    names (and names unpacked) its module-level statements assign."""
    names = [q for q in summary["scopes"] if q != "<module>" and "." not in q]
    pending = [s["t"] for s in summary["scopes"]["<module>"]["stmts"]
               if s["k"] in ("assign", "for", "with")]
    while pending:
        target = pending.pop()
        if isinstance(target, list):
            pending.extend(target)
        elif isinstance(target, str) and target.isidentifier():
            names.append(target)
    return names
