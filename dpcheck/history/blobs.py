"""The library's files at one tag, read as git blobs, and their summaries through the scan cache.

A summary is stored under the scan cache's key (git blob id + path) and in the same stores the
engine uses, so ``dpcheck history`` and ``dpcheck scan`` share entries, and a file version that
many tags share is parsed once, ever.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import git

from dpcheck.parse.analysis import analyze_file
from dpcheck.parse.cache import CACHE_SETTINGS, AnalysisCache
from dpcheck.parse.source import MAX_FILE_BYTES
from dpcheck.pipelines.library import is_library_path
from dpcheck.sites import CANDIDATE_MARKERS
from dpcheck.sites.summary import empty_summary

__all__ = ["CACHE_SETTINGS", "BlobSummaries", "library_blobs"]

_REGULAR_FILE_MODES = frozenset({0o100644, 0o100755})


def library_blobs(tree: git.Tree, package: str | None) -> dict[str, git.Blob]:
    """The library's Python files in ``tree`` (path -> blob): those under ``package``, or,
    without one, under every top-level directory holding an ``__init__.py``. Only regular
    files: a symbolic link's blob holds its target's name, not code."""
    roots = [package] if package else [
        item.name for item in tree.trees if "__init__.py" in {b.name for b in item.blobs}]
    found: dict[str, git.Blob] = {}
    for root in roots:
        try:
            sub = tree / root
        except KeyError:
            continue
        for item in sub.traverse():
            if item.type == "blob" and item.mode in _REGULAR_FILE_MODES \
                    and is_library_path(item.path):
                found[item.path] = item
    return found


class BlobSummaries:
    """Per-blob summaries, from the cache or parsed now (counted in ``parsed``)."""

    def __init__(self, cache: AnalysisCache) -> None:
        self.cache = cache
        self.parsed = 0
        self._memory: dict[str, dict[str, Any]] = {}

    def source(self, blobs: dict[str, git.Blob]) -> Callable[[str], dict[str, Any] | None]:
        """The summary source ``classify_library`` reads for one tag's files."""
        def summary(path: str) -> dict[str, Any] | None:
            blob = blobs.get(path)
            return None if blob is None else self.get(path, blob)
        return summary

    def get(self, path: str, blob: git.Blob) -> dict[str, Any]:
        key = self.cache.key(blob.hexsha, path)
        if key in self._memory:
            return self._memory[key]
        summary = self.cache.summary(key)
        if summary is None:
            record = self.cache.get(key)
            if record is not None and record.get("problem"):
                summary = empty_summary(path, record["problem"][0])
            else:
                summary = self._parse(path, blob, key)
        self._memory[key] = summary
        return summary

    def _parse(self, path: str, blob: git.Blob, key: str) -> dict[str, Any]:
        self.parsed += 1
        data = blob.data_stream.read(MAX_FILE_BYTES + 1)  # more is too large anyway
        analysis, summary = analyze_file(path, data, tuple(CANDIDATE_MARKERS),
                                         summarize=True, max_bytes=MAX_FILE_BYTES)
        if analysis.cacheable:
            self.cache.put(key, analysis.to_json())
        if summary is not None:
            self.cache.put_summary(key, summary)
            return summary
        why = analysis.problem.message if analysis.problem else analysis.internal_error
        return empty_summary(path, why or "not summarised")
