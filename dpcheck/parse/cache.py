"""The on-disk cache of per-file analyses, ruff-style (``.dpcheck_cache/`` in the project root).

Entries are keyed by the file's git blob id and path, inside a namespace made of the dpcheck
version, a fingerprint of the analyser's own code, and the settings that change per-file
results; so an edit, an upgrade or a config change can never serve a stale result. The whole
namespace is one JSON file, read once and written atomically only when it changed.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from dpcheck import __version__

_ANALYSER_PACKAGES = ("parse", "sites")


def analyser_fingerprint() -> str:
    """Changes whenever the per-file analyser's source changes (size or mtime), even between
    releases, so a development checkout never reads results of older code."""
    package = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256(__version__.encode())
    for sub in _ANALYSER_PACKAGES:
        for source in sorted((package / sub).rglob("*.py")):
            stat = source.stat()
            digest.update(f"{source.name}:{stat.st_size}:{stat.st_mtime_ns};".encode())
    return digest.hexdigest()[:16]


class AnalysisCache:
    """A key -> JSON mapping persisted under ``directory``; disabled caches store nothing."""

    def __init__(self, directory: Path | None, settings: str) -> None:
        self._file: Path | None = None
        self._entries: dict[str, Any] = {}
        self._dirty = False
        self.hits = 0
        self.misses = 0
        if directory is None:
            return
        namespace = hashlib.sha256(f"{analyser_fingerprint()}|{settings}".encode()).hexdigest()[:16]
        self._file = directory / f"v{__version__}" / f"{namespace}.json"
        try:
            self._entries = json.loads(self._file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            self._entries = {}

    @staticmethod
    def key(blob: str, path: str, variant: str = "") -> str:
        """The entry key of a file content at a path (``variant`` separates forced summaries)."""
        return f"{blob}:{path}:{variant}"

    def get(self, key: str) -> Any | None:
        value = self._entries.get(key)
        if value is None:
            self.misses += 1
        else:
            self.hits += 1
        return value

    def put(self, key: str, value: Any) -> None:
        if self._file is not None:
            self._entries[key] = value
            self._dirty = True

    def save(self) -> None:
        """Write the namespace atomically; a cache that cannot be written is silently skipped
        (a read-only checkout must still scan)."""
        if self._file is None or not self._dirty:
            return
        try:
            self._file.parent.mkdir(parents=True, exist_ok=True)
            root = self._file.parents[1]
            tag = root / "CACHEDIR.TAG"
            if not tag.exists():
                tag.write_text("Signature: 8a477f597d28d172789f06886806bc55\n# dpcheck cache\n")
                (root / ".gitignore").write_text("*\n")
            fd, tmp = tempfile.mkstemp(dir=self._file.parent, suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(self._entries, handle, separators=(",", ":"))
            os.replace(tmp, self._file)
            self._dirty = False
        except OSError:
            return
