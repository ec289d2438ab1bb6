"""Per-file analysis of a scan's files with the cache, serially or in a process pool.

Every file gets the light analysis (the syntax check, suppressions, the candidate flag); the
summaries that linking reads are served from memory when fresh, from the cache's summary store
when cached, and for a file the text pre-filter passed over by analysing it on first request.
A worker process that dies costs nothing: the files it had not answered for are analysed here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TypeVar

from dpcheck.parse.analysis import FileAnalysis, Summary
from dpcheck.parse.budget import FILE_TIME_BUDGET
from dpcheck.parse.cache import AnalysisCache
from dpcheck.parse.source import MAX_FILE_BYTES, blob_id
from dpcheck.progress import ProgressCallback

PARALLEL_THRESHOLD = 32
"""The fewest files to analyse for which a process pool pays for its start."""
T = TypeVar("T")


AnalysisJob = tuple[str, bytes, tuple[str, ...], bool, int, float | None]


def analyze_job(job: AnalysisJob) -> tuple[dict[str, object], Summary | None]:
    path, data, markers, force, max_bytes, budget = job
    from dpcheck.parse.analysis import analyze_file  # in a worker: the parser and summariser

    analysis, summary = analyze_file(
        path, data, markers, summarize=force, max_bytes=max_bytes, time_budget=budget
    )
    return analysis.to_json(), summary


class Analyzer:
    """Runs per-file analysis with the cache, serially or in a process pool, and serves
    summaries: fresh ones from memory, cached ones from the cache's summary store, and those of
    non-candidate files by analysing them on first request."""

    def __init__(
        self,
        cache: AnalysisCache,
        jobs: int,
        contents: Mapping[str, bytes],
        time_budget: float | None = FILE_TIME_BUDGET,
    ) -> None:
        from dpcheck.sites import CANDIDATE_MARKERS

        self.cache = cache
        self.jobs = jobs
        self.time_budget = time_budget
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
        """The dotted targets the file ``rel`` imports or, a notebook, ``%run``s (from the
        cache's record of them, made whenever a summary is stored; else from its summary,
        analysing it now)."""
        key = self.keys[rel]
        recorded = self.cache.imports(key)
        if recorded is not None:
            return recorded
        if rel not in self.analyses:
            self._store(rel, *analyze_job(self._job(rel, True)))
        summary = self.summary(rel)
        return _import_targets(summary) if summary is not None else []

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
        jobs = [self._job(rel, False) for rel in todo]
        collect = counted(len(self.contents) - len(jobs), len(self.contents), progress)
        fresh: list[tuple[dict[str, object], Summary | None]] = []
        if self.jobs > 1 and len(jobs) >= PARALLEL_THRESHOLD:
            from concurrent.futures import ProcessPoolExecutor  # only when there is work to share
            from concurrent.futures.process import BrokenProcessPool

            try:
                with ProcessPoolExecutor(max_workers=self.jobs) as pool:
                    collect(pool.map(analyze_job, jobs, chunksize=4), into=fresh)
            except BrokenProcessPool:
                pass  # a worker died: the files it had not answered for are analysed here
        collect(map(analyze_job, jobs[len(fresh) :]), into=fresh)
        for rel, (record, summary) in zip(todo, fresh):
            self._store(rel, record, summary)
        return self.analyses

    def _job(self, rel: str, force: bool) -> AnalysisJob:
        return (rel, self.contents[rel], self.markers, force, MAX_FILE_BYTES, self.time_budget)

    def summary(self, rel: str) -> Summary | None:
        """The summary of a file, analysing a non-candidate one now (forced)."""
        analysis = self.analyses[rel]
        if analysis.problem is not None or analysis.internal_error:
            return None
        if rel not in self._summaries:
            summary = self.cache.summary(self.keys[rel]) if analysis.summarized else None
            if summary is None:
                self._store(rel, *analyze_job(self._job(rel, True)))
            else:
                self._summaries[rel] = summary
        return self._summaries.get(rel)

    def _store(self, rel: str, record: dict[str, object], summary: Summary | None) -> None:
        analysis = FileAnalysis.from_json(record)
        if analysis.cacheable:
            self.cache.put(self.keys[rel], record)
        self.analyses[rel] = analysis
        if summary is not None:
            self.cache.put_summary(self.keys[rel], summary)
            self.cache.put_imports(self.keys[rel], _import_targets(summary))
            self._summaries[rel] = summary


def _import_targets(summary: Summary) -> list[str]:
    """The dotted targets a summarised file imports or, a notebook, ``%run``s."""
    runs = [run["module"] for run in summary.get("runs", ())]
    return [*summary["imports"].values(), *runs]


def counted(
    done: int, total: int, progress: ProgressCallback | None
) -> Callable[..., list[T]]:
    """Collects analysis results ``into`` a list, reporting ``done/total`` files after each
    (cached files count as done from the start)."""

    def collect(results: Iterable[T], into: list[T]) -> list[T]:
        if progress is not None and not into:
            progress("analysing files", done, total)
        for data in results:
            into.append(data)
            if progress is not None:
                progress("analysing files", done + len(into), total)
        return into

    return collect
