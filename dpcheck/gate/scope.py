"""Which findings a scan of explicitly named files reports, when a dependency file is among them.

pre-commit passes the changed files only. For Python files the engine already resolves pipelines
across the whole project and reports on the named files. A changed dependency file
(``requirements.txt``, ``pyproject.toml``...) holds no code, yet a new version pin can change the
update rule every pipeline runs; so when one is named, the whole project is scanned and the
findings reported are those anchored in a named file *or* citing a named dependency file in their
evidence (DP101 citing ``opacus==1.4.0``, DP105 on an unpinned line).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath

from dpcheck.discover.files import is_dependency_file, relative_path
from dpcheck.engine import Settings
from dpcheck.model import Finding, Pipeline, ScanResult


@dataclass(frozen=True)
class NamedFiles:
    """Files named on the command line, as root-relative POSIX paths."""

    files: frozenset[str]
    dependency_files: frozenset[str]

    def cites(self, evidence_paths: Sequence[str]) -> bool:
        return any(p in self.dependency_files for p in evidence_paths)

    def covers_finding(self, finding: Finding) -> bool:
        return finding.span.path in self.files or self.cites([e.span.path for e in finding.evidence])

    def covers_pipeline(self, pipeline: Pipeline) -> bool:
        return pipeline.path in self.files or self.cites([e.span.path for e in pipeline.evidence])


def named_dependency_files(paths: Sequence[Path], root: Path) -> NamedFiles | None:
    """The named files when every path is a file and at least one is a dependency file inside
    ``root``; else None (the engine's own handling applies)."""
    if not paths or not all(p.is_file() for p in paths):
        return None
    relative = {relative_path(p, root) for p in paths}
    named = frozenset(r for r in relative if r is not None)
    dependencies = frozenset(r for r in named if is_dependency_file(PurePosixPath(r)))
    return NamedFiles(named, dependencies) if dependencies else None


def whole_project(settings: Settings) -> Settings:
    """``settings`` scanning the project root instead of the named files."""
    return replace(settings, options=replace(settings.options, paths=(settings.root,)))


def restrict(result: ScanResult, named: NamedFiles) -> ScanResult:
    """Keep what concerns the named files: findings and pipelines they anchor or whose evidence
    cites a named dependency file, errors and suppression issues in them, and every internal
    error (it may have cost a finding anywhere, so it must still be seen)."""
    return replace(
        result,
        findings=[f for f in result.findings if named.covers_finding(f)],
        pipelines=[p for p in result.pipelines if named.covers_pipeline(p)],
        errors=[e for e in result.errors if e.path in named.files or e.internal],
        suppression_issues=[i for i in result.suppression_issues if i.span.path in named.files],
        files_scanned=len(named.files),
    )
