"""The scan: discover -> analyse files (parallel, cached) -> pipelines -> rules -> suppressions.

This module only orchestrates; every stage lives in its own package. Data flows one way, and a
problem in one file (unparsable, undecodable, an analyser bug) never stops the others.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path

from dpcheck.catalog import Catalog, load_catalog, select_rules
from dpcheck.config import Config, load_config
from dpcheck.discover.facts import ProjectFacts, collect_facts
from dpcheck.discover.files import discover_files
from dpcheck.discover.pins import Pin
from dpcheck.errors import DpcheckError
from dpcheck.model import Finding, ParamValue, Pipeline, ScanError, ScanResult, Severity, Span
from dpcheck.parse.analysis import FileAnalysis, analyze_file
from dpcheck.parse.cache import AnalysisCache
from dpcheck.parse.source import MAX_FILE_BYTES, blob_id
from dpcheck.progress import ProgressCallback
from dpcheck.project import Project
from dpcheck.suppress import Suppression, apply_suppressions

CACHE_DIRNAME = ".dpcheck_cache"
_PARALLEL_THRESHOLD = 32


@dataclass(frozen=True)
class ScanOptions:
    """What the user asked for (CLI flags); merged with the project config by ``settle``."""

    paths: Sequence[Path] = (Path("."),)
    select: Sequence[str] = ()
    ignore: Sequence[str] = ()
    params: Mapping[str, ParamValue] = field(default_factory=dict)
    config_path: Path | None = None
    jobs: int | None = None
    use_cache: bool = True
    cache_dir: Path | None = None
    strict: bool = False


@dataclass(frozen=True)
class Settings:
    """Options and config merged: the single source of truth for one scan."""

    options: ScanOptions
    config: Config
    root: Path
    catalog: Catalog
    active_rules: frozenset[str]
    params: Mapping[str, ParamValue]
    strict: bool


def settle(options: ScanOptions) -> Settings:
    """Validate the paths, load the config of the scanned project and merge it with the flags
    (flags win). Raises ``DpcheckError`` for a missing path or a bad config."""
    for path in options.paths:
        if not path.exists():
            raise DpcheckError(f"{path}: no such file or directory")
    root = discover_files(options.paths).root
    config = load_config(options.config_path, root)
    catalog = load_catalog()
    active = select_rules(
        catalog,
        list(options.select) or list(config.select),
        [*config.ignore, *options.ignore],
    )
    return Settings(
        options=options,
        config=config,
        root=root,
        catalog=catalog,
        active_rules=active,
        params={**config.params, **options.params},
        strict=options.strict or config.strict,
    )


def _read(path: Path) -> bytes | OSError:
    try:
        return path.read_bytes()
    except OSError as exc:
        return exc


def _analyze_job(job: tuple[str, bytes, tuple[str, ...], bool, int]) -> dict[str, object]:
    path, data, markers, force, max_bytes = job
    return analyze_file(path, data, markers, summarize=force, max_bytes=max_bytes).to_json()


class _Analyzer:
    """Runs per-file analysis with the cache, serially or in a process pool."""

    def __init__(self, cache: AnalysisCache, jobs: int) -> None:
        from dpcheck.sites import CANDIDATE_MARKERS

        self.cache = cache
        self.jobs = jobs
        self.markers = tuple(CANDIDATE_MARKERS)

    def run(
        self,
        items: Sequence[tuple[str, bytes]],
        force: bool = False,
        progress: ProgressCallback | None = None,
    ) -> list[FileAnalysis]:
        variant = "summary" if force else ""
        results: dict[str, FileAnalysis] = {}
        todo: list[tuple[str, bytes, str]] = []
        for rel, data in items:
            key = self.cache.key(blob_id(data), rel, variant)
            cached = self.cache.get(key)
            if cached is not None:
                results[rel] = FileAnalysis.from_json(cached)
            else:
                todo.append((rel, data, key))
        jobs = [(rel, data, self.markers, force, MAX_FILE_BYTES) for rel, data, _ in todo]
        counted = _counted(len(items) - len(jobs), len(items), progress)
        if self.jobs > 1 and len(jobs) >= _PARALLEL_THRESHOLD:
            with ProcessPoolExecutor(max_workers=self.jobs) as pool:
                fresh = counted(pool.map(_analyze_job, jobs, chunksize=4))
        else:
            fresh = counted(map(_analyze_job, jobs))
        for (rel, _, key), data in zip(todo, fresh):
            self.cache.put(key, data)
            results[rel] = FileAnalysis.from_json(data)
        return [results[rel] for rel, _ in items]


def _counted(
    done: int, total: int, progress: ProgressCallback | None
) -> Callable[[Iterable[dict[str, object]]], list[dict[str, object]]]:
    """Collects analysis results, reporting ``done/total`` files after each (cached files
    count as done from the start)."""

    def collect(results: Iterable[dict[str, object]]) -> list[dict[str, object]]:
        collected: list[dict[str, object]] = []
        if progress is not None:
            progress("analysing files", done, total)
        for data in results:
            collected.append(data)
            if progress is not None:
                progress("analysing files", done + len(collected), total)
        return collected

    return collect


def _relative(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.resolve().as_posix()


def _facts_with_overrides(facts: ProjectFacts, versions: Mapping[str, str], where: str) -> ProjectFacts:
    """Config ``dp-library-versions`` replace the pins read from dependency files."""
    if not versions:
        return facts
    overridden = {
        lib: Pin(lib, f"=={ver}", ver, Span(where, 1), f"{lib}=={ver} (dp-library-versions)")
        for lib, ver in versions.items()
    }
    kept = tuple(p for p in facts.pins if p.library not in overridden)
    return replace(facts, pins=kept + tuple(overridden.values()))


def _dp001(analysis: FileAnalysis, severity: Severity, source_line: str) -> Finding:
    assert analysis.problem is not None
    problem = analysis.problem
    return Finding(
        rule="DP001",
        severity=severity,
        span=Span(analysis.path, problem.line, problem.column),
        message=f"cannot analyse {analysis.path}: {problem.message}",
        context=source_line.strip() or problem.message,
    )


def _per_file_ignored(finding: Finding, config: Config) -> bool:
    return any(
        fnmatch.fnmatchcase(finding.span.path, glob)
        and any(finding.rule.startswith(code) for code in codes)
        for glob, codes in config.per_file_ignores.items()
    )


def attach_bounds(findings: Sequence[Finding], pipelines: Sequence[Pipeline]) -> list[Finding]:
    """Corrected bounds on the DP101-DP105 findings; the numeric engine is imported only when
    there is a finding to attach to, so a clean scan pays nothing for it."""
    if not findings:
        return []
    from dpcheck.bounds.attach import attach_bounds as attach

    return attach(findings, pipelines)


def run(settings: Settings, progress: ProgressCallback | None = None) -> ScanResult:
    """Scan with settled settings and return everything found; ``progress``, if given, hears
    ``("analysing files", done, total)`` as files are analysed."""
    options, config, root = settings.options, settings.config, settings.root
    discovered = discover_files(options.paths, include=config.include, exclude=config.exclude)
    explicit_files = all(p.is_file() for p in options.paths)
    if explicit_files:
        # pre-commit passes a few files: resolve pipelines across the whole project, report on those
        project_files = discover_files([root], include=config.include, exclude=config.exclude)
        reported = frozenset(_relative(p, root) for p in discovered.files)
    else:
        project_files, reported = discovered, None

    result = ScanResult()
    result.errors.extend(ScanError(_relative(p, root), msg) for p, msg in discovered.problems)
    facts = collect_facts(root, project_files.dependency_files)
    facts = _facts_with_overrides(facts, config.dp_library_versions, config.source or "config")
    result.errors.extend(ScanError(_relative(p, root), msg) for p, msg in facts.problems)

    contents: dict[str, bytes] = {}
    for path in project_files.files:
        rel = _relative(path, root)
        data = _read(path)
        if isinstance(data, OSError):
            result.errors.append(ScanError(rel, f"cannot read file: {data.strerror or data}"))
        else:
            contents[rel] = data

    cache_dir = options.cache_dir or root / CACHE_DIRNAME
    cache = AnalysisCache(cache_dir if options.use_cache else None, f"max={MAX_FILE_BYTES}")
    analyzer = _Analyzer(cache, options.jobs or os.cpu_count() or 1)
    analyses = {a.path: a for a in analyzer.run(sorted(contents.items()), progress=progress)}

    def load_summary(rel: str) -> dict | None:
        analysis = analyses[rel]
        if analysis.summary is None and analysis.problem is None and not analysis.candidate:
            analysis = analyses[rel] = analyzer.run([(rel, contents[rel])], force=True)[0]
        return analysis.summary

    def load_source(rel: str) -> str | None:
        data = contents.get(rel)
        return None if data is None else data.decode("utf-8", errors="replace")

    project = Project(
        root=root,
        facts=facts,
        paths=tuple(sorted(contents)),
        overrides=settings.params,
        _summaries={p: a.summary for p, a in analyses.items() if a.candidate},
        _load=load_summary,
        _sources=load_source,
        reported=reported,
    )

    from dpcheck.pipelines import build_pipelines
    from dpcheck.rules import evaluate

    findings: list[Finding] = []
    dp001 = settings.catalog.get("DP001").severity
    for analysis in analyses.values():
        if analysis.internal_error:
            result.errors.append(ScanError(analysis.path, f"internal error: {analysis.internal_error}"))
        if analysis.problem is not None and project.is_reported(analysis.path):
            findings.append(_dp001(analysis, Severity(dp001), project.source_line(analysis.path, analysis.problem.line)))
    try:
        pipelines = build_pipelines(project)
        findings.extend(evaluate(pipelines, project))
    except Exception as exc:  # noqa: BLE001 - keep per-file results even if linking fails
        result.errors.append(ScanError(".", f"internal error while linking pipelines: {type(exc).__name__}: {exc}"))
        pipelines = []
    cache.save()

    findings = [
        f
        for f in findings
        if f.rule in settings.active_rules and not _per_file_ignored(f, config)
    ]
    suppressions: dict[str, Sequence[Suppression]] = {
        p: a.suppressions for p, a in analyses.items() if a.suppressions
    }
    outcome = apply_suppressions(findings, suppressions, settings.active_rules)
    result.pipelines = sorted(
        (p for p in pipelines if project.is_reported(p.path)), key=lambda p: (p.path, p.line, p.entry)
    )
    result.findings = sorted(attach_bounds(outcome.kept, pipelines), key=Finding.sort_key)
    result.suppressed = outcome.suppressed
    if settings.strict:
        result.suppression_issues = [
            i for i in outcome.issues if project.is_reported(i.span.path)
        ]
    result.files_scanned = len(reported) if reported is not None else len(contents)
    result.errors.sort(key=lambda e: (e.path, e.message))
    return result


def scan(options: ScanOptions) -> ScanResult:
    """Settle the options and run the scan (the programmatic entry point)."""
    return run(settle(options))
