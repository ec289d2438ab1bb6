"""The scan: discover -> analyse files (parallel, cached) -> pipelines -> rules -> suppressions.

This module only orchestrates; every stage lives in its own package. Data flows one way, and a
problem in one file (unparsable, undecodable, an analyser bug) never stops the others.
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

from dpcheck.catalog import Catalog, load_catalog, select_rules
from dpcheck.config import Config, load_config
from dpcheck.discover.commit_pins import history_fingerprint
from dpcheck.discover.facts import ProjectFacts, collect_facts
from dpcheck.discover.files import discover_files, project_root, relative_path
from dpcheck.discover.installed import find_installed
from dpcheck.discover.pins import Pin
from dpcheck.discover.requirement import DP_LIBRARIES
from dpcheck.model import Finding, ParamValue, Pipeline, ScanError, ScanResult, Span
from dpcheck.parse.analysis import FileAnalysis, Summary, analyze_file
from dpcheck.parse.cache import AnalysisCache
from dpcheck.parse.source import MAX_FILE_BYTES, blob_id
from dpcheck.progress import ProgressCallback
from dpcheck.project import Project
from dpcheck.sites.modules import import_neighbourhood
from dpcheck.suppress import Suppression, apply_suppressions

CACHE_DIRNAME = ".dpcheck_cache"
_PARALLEL_THRESHOLD = 32
T = TypeVar("T")


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
    (flags win). Raises ``DpcheckError`` (from discovery or config) for a missing path or a bad config."""
    root = project_root(options.paths)
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


AnalysisJob = tuple[str, bytes, tuple[str, ...], bool, int]


def _analyze_job(job: AnalysisJob) -> tuple[dict[str, object], Summary | None]:
    path, data, markers, force, max_bytes = job
    analysis, summary = analyze_file(path, data, markers, summarize=force, max_bytes=max_bytes)
    return analysis.to_json(), summary


class _Analyzer:
    """Runs per-file analysis with the cache, serially or in a process pool, and serves
    summaries: fresh ones from memory, cached ones from the cache's summary store, and those of
    non-candidate files by analysing them on first request."""

    def __init__(self, cache: AnalysisCache, jobs: int, contents: Mapping[str, bytes]) -> None:
        from dpcheck.sites import CANDIDATE_MARKERS

        self.cache = cache
        self.jobs = jobs
        self.markers = tuple(CANDIDATE_MARKERS)
        self.contents = contents
        self.keys = {rel: cache.key(blob_id(data), rel) for rel, data in contents.items()}
        self.analyses: dict[str, FileAnalysis] = {}
        self._summaries: dict[str, Summary] = {}

    def restrict(self, paths: frozenset[str]) -> None:
        """Analyse and serve only ``paths`` from now on (a scan of named files links their
        import neighbourhood, not the whole project)."""
        self.contents = {rel: data for rel, data in self.contents.items() if rel in paths}
        self.keys = {rel: key for rel, key in self.keys.items() if rel in paths}
        self.analyses = {rel: a for rel, a in self.analyses.items() if rel in paths}

    def imports(self, rel: str) -> list[str]:
        """The dotted targets the file ``rel`` imports (from its summary, analysing it now)."""
        if rel not in self.analyses:
            job = (rel, self.contents[rel], self.markers, True, MAX_FILE_BYTES)
            self._store(rel, *_analyze_job(job))
        summary = self.summary(rel)
        return list(summary["imports"].values()) if summary else []

    def run(self, progress: ProgressCallback | None = None) -> dict[str, FileAnalysis]:
        """The light analysis of every file, from the cache where possible."""
        todo: list[str] = []
        for rel in sorted(self.contents):
            if rel in self.analyses:
                continue
            cached = self.cache.get(self.keys[rel])
            if cached is not None:
                self.analyses[rel] = FileAnalysis.from_json(cached)
            else:
                todo.append(rel)
        jobs = [(rel, self.contents[rel], self.markers, False, MAX_FILE_BYTES) for rel in todo]
        counted = _counted(len(self.contents) - len(jobs), len(self.contents), progress)
        if self.jobs > 1 and len(jobs) >= _PARALLEL_THRESHOLD:
            with ProcessPoolExecutor(max_workers=self.jobs) as pool:
                fresh = counted(pool.map(_analyze_job, jobs, chunksize=4))
        else:
            fresh = counted(map(_analyze_job, jobs))
        for rel, (record, summary) in zip(todo, fresh):
            self._store(rel, record, summary)
        return self.analyses

    def summary(self, rel: str) -> Summary | None:
        """The summary of a file, analysing a non-candidate one now (forced)."""
        analysis = self.analyses[rel]
        if analysis.problem is not None or analysis.internal_error:
            return None
        if rel not in self._summaries:
            summary = self.cache.summary(self.keys[rel]) if analysis.summarized else None
            if summary is None:
                job = (rel, self.contents[rel], self.markers, True, MAX_FILE_BYTES)
                self._store(rel, *_analyze_job(job))
            else:
                self._summaries[rel] = summary
        return self._summaries.get(rel)

    def _store(self, rel: str, record: dict[str, object], summary: Summary | None) -> None:
        self.cache.put(self.keys[rel], record)
        self.analyses[rel] = FileAnalysis.from_json(record)
        if summary is not None:
            self.cache.put_summary(self.keys[rel], summary)
            self._summaries[rel] = summary


def _counted(
    done: int, total: int, progress: ProgressCallback | None
) -> Callable[[Iterable[T]], list[T]]:
    """Collects analysis results, reporting ``done/total`` files after each (cached files
    count as done from the start)."""

    def collect(results: Iterable[T]) -> list[T]:
        collected: list[T] = []
        if progress is not None:
            progress("analysing files", done, total)
        for data in results:
            collected.append(data)
            if progress is not None:
                progress("analysing files", done + len(collected), total)
        return collected

    return collect


def _relative(path: Path, root: Path) -> str:
    """The report path of ``path``: relative to the root, absolute when outside it."""
    return relative_path(path, root) or path.resolve().as_posix()


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


def _per_file_ignored(finding: Finding, config: Config) -> bool:
    return any(
        fnmatch.fnmatchcase(finding.span.path, glob)
        and any(finding.rule.startswith(code) for code in codes)
        for glob, codes in config.per_file_ignores.items()
    )


@dataclass(frozen=True)
class _Linked:
    """What the linking stage produced for a whole project (cached as JSON by project key)."""

    pipelines: tuple[Pipeline, ...]
    findings: tuple[Finding, ...]
    errors: tuple[ScanError, ...]

    def to_json(self) -> dict[str, object]:
        return {
            "pipelines": [p.to_json() for p in self.pipelines],
            "findings": [f.to_json() for f in self.findings],
            "errors": [e.to_json() for e in self.errors],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> _Linked:
        return cls(
            tuple(Pipeline.from_json(p) for p in data["pipelines"]),
            tuple(Finding.from_json(f) for f in data["findings"]),
            tuple(ScanError(e["path"], e["message"], e["internal"]) for e in data["errors"]),
        )


def _project_key(
    settings: Settings,
    analyzer: _Analyzer,
    dependency_files: Sequence[Path],
    reported: frozenset[str] | None,
) -> str:
    """A digest of every input of the linking stage: the files' contents, the dependency files,
    the DP libraries installed, the parameter overrides, the Opacus history clone used to place
    commit pins, and the reported subset (the code itself is part of the cache namespace)."""
    root = settings.root
    digest = hashlib.sha256()
    for rel in sorted(analyzer.keys):
        digest.update(f"py:{analyzer.keys[rel]}\n".encode())
    for path in dependency_files:
        data = _read(path)
        blob = blob_id(data) if isinstance(data, bytes) else f"unreadable:{data}"
        digest.update(f"dep:{_relative(path, root)}:{blob}\n".encode())
    for library in sorted(DP_LIBRARIES):
        installed = find_installed(root, library)
        digest.update(f"lib:{library}:{installed}\n".encode())
    for name, value in sorted(settings.params.items()):
        digest.update(f"param:{name}:{value.value}\n".encode())
    for library, version in sorted(settings.config.dp_library_versions.items()):
        digest.update(f"pin:{library}:{version}\n".encode())
    digest.update(f"opacus-history:{history_fingerprint()}\n".encode())
    digest.update(f"reported:{sorted(reported) if reported is not None else None}".encode())
    return digest.hexdigest()


def _link(
    settings: Settings,
    analyzer: _Analyzer,
    dependency_files: Sequence[Path],
    reported: frozenset[str] | None,
    load_source: Callable[[str], str | None],
) -> _Linked:
    """Facts -> project view -> file rules, pipelines -> rule findings; an internal error in
    linking is reported, never raised, and the per-file results survive it."""
    from dpcheck.pipelines import link_project
    from dpcheck.rules import check_files, check_unlinked, evaluate

    config = settings.config
    facts = collect_facts(settings.root, dependency_files)
    facts = _facts_with_overrides(facts, config.dp_library_versions, config.source or "config")
    errors = [ScanError(_relative(p, settings.root), msg) for p, msg in facts.problems]
    project = Project(
        root=settings.root,
        facts=facts,
        paths=tuple(sorted(analyzer.contents)),
        overrides=settings.params,
        candidates=frozenset(p for p, a in analyzer.analyses.items() if a.candidate),
        _load=analyzer.summary,
        _sources=load_source,
        reported=reported,
    )
    per_file = tuple(check_files(analyzer.analyses.values(), project))
    try:
        linking = link_project(project)
        pipelines = linking.pipelines
        findings = [*evaluate(pipelines, project), *check_unlinked(linking.unlinked, project)]
    except Exception as exc:  # noqa: BLE001 - keep per-file results even if linking fails
        message = f"internal error while linking pipelines: {type(exc).__name__}: {exc}"
        return _Linked((), per_file, (*errors, ScanError(".", message, internal=True)))
    shown = tuple(p for p in pipelines if project.is_reported(p.path))
    return _Linked(shown, (*per_file, *findings), tuple(errors))


def _with_bounds(findings: Sequence[Finding], pipelines: Sequence[Pipeline], stored: dict[str, Any]) -> list[Finding]:
    """Findings with their corrected bounds, reusing those ``stored`` with the project's cache
    entry (by fingerprint) and storing the new ones there. The numeric engine is imported only
    when a finding needs a bound computed, so a clean or cached scan pays nothing for it."""
    missing = [f for f in findings if _bound_key(f) not in stored]
    if missing:
        from dpcheck.bounds.attach import attach_bounds

        for finding in attach_bounds(missing, pipelines):
            stored[_bound_key(finding)] = finding.to_json()
    return [Finding.from_json(stored[_bound_key(f)]) for f in findings]


def _bound_key(finding: Finding) -> str:
    return f"{finding.fingerprint}:{finding.span.line}:{finding.span.column}"


def run(settings: Settings, progress: ProgressCallback | None = None) -> ScanResult:
    """Scan with settled settings and return everything found; ``progress``, if given, hears
    ``("analysing files", done, total)`` as files are analysed."""
    options, config, root = settings.options, settings.config, settings.root
    discovered = discover_files(options.paths, include=config.include, exclude=config.exclude)
    if all(p.is_file() for p in options.paths):
        # pre-commit passes a few files: resolve pipelines across the whole project, report on those
        project_files = discover_files([root], include=config.include, exclude=config.exclude)
        reported: frozenset[str] | None = frozenset(_relative(p, root) for p in discovered.files)
    else:
        project_files, reported = discovered, None

    result = ScanResult()
    result.errors.extend(ScanError(_relative(p, root), msg) for p, msg in discovered.problems)
    contents: dict[str, bytes] = {}
    for path in project_files.files:
        rel = _relative(path, root)
        data = _read(path)
        if isinstance(data, OSError):
            result.errors.append(ScanError(rel, f"cannot read file: {data.strerror or data}"))
        else:
            contents[rel] = data

    def is_reported(rel: str) -> bool:
        return reported is None or rel in reported

    def load_source(rel: str) -> str | None:
        data = contents.get(rel)
        return None if data is None else data.decode("utf-8", errors="replace")

    cache_dir = options.cache_dir or root / CACHE_DIRNAME
    cache = AnalysisCache(cache_dir if options.use_cache else None, f"max={MAX_FILE_BYTES}")
    analyzer = _Analyzer(cache, options.jobs or os.cpu_count() or 1, contents)
    if reported is not None:
        analyzer.restrict(import_neighbourhood(sorted(reported), contents, analyzer.imports))
    analyses = analyzer.run(progress)

    key = _project_key(settings, analyzer, project_files.dependency_files, reported)
    entry = cache.project(key)
    if entry is None:
        linked = _link(settings, analyzer, project_files.dependency_files, reported, load_source)
        entry = {"linked": linked.to_json(), "bounds": {}}
    else:
        linked = _Linked.from_json(entry["linked"])
    result.errors.extend(linked.errors)

    for analysis in analyses.values():
        if analysis.internal_error:
            result.errors.append(
                ScanError(analysis.path, f"internal error: {analysis.internal_error}", internal=True)
            )
    findings = [
        f for f in linked.findings
        if f.rule in settings.active_rules and not _per_file_ignored(f, config)
    ]
    suppressions: dict[str, Sequence[Suppression]] = {
        p: a.suppressions for p, a in analyses.items() if a.suppressions
    }
    outcome = apply_suppressions(
        findings, suppressions, settings.active_rules, frozenset(settings.catalog.ids())
    )
    result.pipelines = sorted(linked.pipelines, key=lambda p: (p.path, p.line, p.entry))
    result.findings = sorted(
        _with_bounds(outcome.kept, linked.pipelines, entry["bounds"]), key=Finding.sort_key
    )
    cache.put_project(key, entry)
    cache.save()
    result.suppressed = outcome.suppressed
    if settings.strict:
        result.suppression_issues = [i for i in outcome.issues if is_reported(i.span.path)]
    result.files_scanned = len(reported) if reported is not None else len(contents)
    result.errors.sort(key=lambda e: (e.path, e.message))
    return result


def scan(options: ScanOptions) -> ScanResult:
    """Settle the options and run the scan (the programmatic entry point)."""
    return run(settle(options))
