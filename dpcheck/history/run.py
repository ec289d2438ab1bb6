"""Run the history: open the repository, select tags, classify each tag through the blob cache
(the cache directory rule is in the package docstring)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from dpcheck.history.blobs import CACHE_SETTINGS, BlobSummaries
from dpcheck.history.repository import open_repository, release_tags
from dpcheck.history.rows import HistoryRow, build_rows
from dpcheck.parse.cache import AnalysisCache
from dpcheck.progress import ProgressCallback


@dataclass(frozen=True)
class HistoryOptions:
    """What ``dpcheck history`` was asked for."""

    repository: Path
    tags: str = "*"
    rev: str | None = None
    pre: bool = False
    package: str | None = None
    cache_dir: Path | None = None
    use_cache: bool = True


@dataclass(frozen=True)
class HistoryResult:
    """The rows, and how many blobs this run parsed (0 on a warm rerun)."""

    rows: list[HistoryRow]
    parsed: int


def default_cache_dir(work_tree: Path | None) -> Path:
    """The work tree's ``.dpcheck_cache`` if writable (and not a symbolic link, which would
    make dpcheck write wherever it points), else the user cache directory."""
    if work_tree is not None and os.access(work_tree, os.W_OK) \
            and not (work_tree / ".dpcheck_cache").is_symlink():
        return work_tree / ".dpcheck_cache"
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "dpcheck"


def run_history(options: HistoryOptions,
                progress: ProgressCallback | None = None) -> HistoryResult:
    """Classify the library at every selected tag of ``options.repository``."""
    repo = open_repository(options.repository)
    releases = release_tags(repo, options.tags, options.rev, options.pre)
    work_tree = None if repo.bare or Path(repo.git_dir) == options.repository.resolve() \
        else Path(repo.working_tree_dir or options.repository)
    directory = options.cache_dir or default_cache_dir(work_tree)
    cache = AnalysisCache(directory if options.use_cache else None, CACHE_SETTINGS)
    summaries = BlobSummaries(cache)
    rows = build_rows(releases, options.package, summaries, progress)
    cache.save()
    return HistoryResult(rows, summaries.parsed)
