"""The on-disk cache of a scan, ruff-style (``.dpcheck_cache/`` in the project root).

Six stores share one namespace made of a fingerprint of dpcheck's own code and data (so an
edit, an upgrade or a new version table can never serve a stale result) and the settings that
change per-file results:

* ``files`` — the light per-file record (DP001 problem, suppressions, candidate flag), keyed by
  the file's git blob id and path; read on every scan;
* ``summaries`` — the per-file summaries, same keys; read only when a pipeline must be linked,
  and then only those of the files linking reads;
* ``projects`` — the linked pipelines and raw findings (per-file ones such as DP001 included) of
  a whole project, keyed by a digest of every input of the linking stage, plus the bounds
  attached to its findings; a rescan of an unchanged project reads its entry and nothing else;
* ``bounds`` — what a corrected bound does to a finding, keyed by its parameter set
  (``dpcheck.bounds.attach.effect_key``): a project relinked after an edit recomputes only the
  bounds of new parameter sets;
* ``fixes`` — the verified fix (or why none) of each reported finding, keyed by the scan's
  inputs and findings: a rescan shows the fixable findings without re-verifying them;
* ``imports`` — the modules each summarised file imports, keyed like the summaries: finding
  the import neighbourhood of named files (the pre-commit hook) reads this small store instead
  of every summary.

The small stores are one JSON file each, read at most once and written atomically only when it
changed. The two large ones, summaries and projects, are shelves (``_Shelf``): one file per entry,
so a pre-commit run in a large project reads and writes the few summaries and the one project
entry it uses, not megabytes of the others'.
A cache without a directory (``--no-cache``) stores nothing, except within ``kept_in_memory``:
there the scans of one command (a fix's re-analysis after the scan it checks) share their stores
in memory, so a rescan re-reads only what an edit changed.

The cache directory may sit in an untrusted checkout, so nothing inside it is reached through a
symbolic link: the version folder and a shelf's folder must not be one, stores and marker files
are opened without following a link in their last component, and stores are replaced by rename
(which replaces a link, never writes through it). A cache that would need a link is simply not
used.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cache
from pathlib import Path
from collections.abc import Iterator, MutableMapping
from typing import Any

from dpcheck import __version__
from dpcheck.catalog.loader import default_catalog_dir
from dpcheck.discover.confine import read_regular
from dpcheck.parse.source import MAX_FILE_BYTES

_PROJECT_ENTRIES_KEPT = 16
_BOUND_EFFECTS_KEPT = 256
_FIX_PLANS_KEPT = 16
CACHE_SETTINGS = f"max={MAX_FILE_BYTES}"
"""The settings part of the namespace of a scan's cache (shared by ``dpcheck history``)."""


@cache
def code_fingerprint() -> str:
    """Changes whenever dpcheck's code or shipped data changes (file size or mtime), even
    between releases, so a development checkout never reads results of older code. The rule
    catalog counts as data: in a source checkout it lives beside the package, not inside."""
    package = Path(__file__).resolve().parents[1]
    catalog = Path(str(default_catalog_dir()))
    digest = hashlib.sha256(__version__.encode())
    roots = [package] if catalog.is_relative_to(package) else [package, catalog]
    for root in roots:
        for pattern in ("*.py", "*.json", "*.toml"):
            for source in sorted(root.rglob(pattern)):
                stat = source.stat()
                digest.update(f"{root.name}/{source.relative_to(root)}:{stat.st_size}:"
                              f"{stat.st_mtime_ns};".encode())
    return digest.hexdigest()[:16]


class _Store:
    """One JSON object persisted in one file, loaded on first use; without a file, the entries
    are dropped unless ``kept`` (the memory of ``kept_in_memory``)."""

    def __init__(self, path: Path | None, kept: bool = False) -> None:
        self._path = path
        self._kept = kept
        self._entries: dict[str, Any] | None = None if path is not None else {}
        self.dirty = False

    @property
    def entries(self) -> dict[str, Any]:
        if self._entries is None:
            assert self._path is not None
            try:
                loaded = json.loads(read_regular(self._path).decode("utf-8"))
                self._entries = loaded if isinstance(loaded, dict) else {}
            except (OSError, ValueError):
                self._entries = {}
        return self._entries

    def get(self, key: str) -> Any | None:
        return self.entries.get(key)

    def put(self, key: str, value: Any) -> None:
        if self._path is not None or self._kept:
            self.entries[key] = value
            self.dirty = True

    def save(self) -> None:
        if self._path is None or not self.dirty:
            return
        _replace(self._path, self._entries)
        self.dirty = False


class _Shelf:
    """Entries persisted one per file in one folder (the file named by a digest of the key, the
    key stored beside the value), each read on first use and written only when put; without a
    folder, the entries are dropped unless ``kept`` (the memory of ``kept_in_memory``). An
    ``ordered`` shelf also keeps an ``index`` file listing its keys in the order written (oldest
    first) with a tag each: it keeps only its newest entries and is searched by tag
    (``recent``)."""

    def __init__(self, folder: Path | None, kept: bool = False, ordered: bool = False) -> None:
        self._folder = folder
        self._kept = kept
        self._ordered = ordered
        self._entries: dict[str, Any] = {}
        self._dirty: set[str] = set()
        self._index: dict[str, str] | None = None if folder is not None else {}
        self._dropped: set[str] = set()

    @property
    def dirty(self) -> bool:
        return bool(self._dirty or self._dropped)

    def _file(self, key: str) -> Path:
        assert self._folder is not None
        digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()
        return self._folder / f"{digest[:32]}.json"

    def _load(self, name: str) -> Any | None:
        """The JSON in the folder's file ``name`` (None: absent, unreadable or not JSON; the
        folder is not read through a symbolic link)."""
        assert self._folder is not None
        if self._folder.is_symlink():
            return None
        try:
            return json.loads(read_regular(self._folder / name).decode("utf-8"))
        except (OSError, ValueError):
            return None

    def get(self, key: str) -> Any | None:
        if key not in self._entries and self._folder is not None and key not in self._dropped:
            stored = self._load(self._file(key).name)
            if isinstance(stored, dict) and stored.get("key") == key:
                self._entries[key] = stored.get("value")
        return self._entries.get(key)

    def put(self, key: str, value: Any, tag: str = "") -> None:
        if self._folder is not None or self._kept:
            self._entries[key] = value
            self._dirty.add(key)
            self._dropped.discard(key)
            if self._ordered:
                self.index.pop(key, None)
                self.index[key] = tag

    @property
    def index(self) -> dict[str, str]:
        """The keys written, oldest first, with their tags."""
        if self._index is None:
            loaded = self._load("index.json")
            self._index = {str(k): str(t) for k, t in loaded} if isinstance(loaded, list) and \
                all(isinstance(i, list) and len(i) == 2 for i in loaded) else {}
        return self._index

    def drop(self, key: str) -> None:
        """Forget the entry ``key`` (its file is removed on ``save``)."""
        self._entries.pop(key, None)
        self._dirty.discard(key)
        self.index.pop(key, None)
        self._dropped.add(key)

    def recent(self, tag: str) -> Iterator[Any]:
        """The entries tagged ``tag``, the most recently written first, each read when reached."""
        for key, written in reversed(list(self.index.items())):
            if written == tag and (value := self.get(key)) is not None:
                yield value

    def save(self) -> None:
        if self._folder is None or not self.dirty:
            return
        self._folder.mkdir(exist_ok=True)
        if self._folder.is_symlink():
            return
        for key in sorted(self._dirty):
            _replace(self._file(key), {"key": key, "value": self._entries[key]})
        for key in sorted(self._dropped):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self._file(key))
        if self._ordered and self._index is not None:
            _replace(self._folder / "index.json", [[k, t] for k, t in self._index.items()])
        self._dirty.clear()
        self._dropped.clear()


def _replace(path: Path, value: Any) -> None:
    """Write ``value`` as JSON to ``path`` atomically, by rename (a link at ``path`` is replaced,
    never written through)."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(json.dumps(value, separators=(",", ":")))  # dumps: the C encoder
    os.replace(tmp, path)


class _Newest(MutableMapping[str, Any]):
    """A store seen as a mapping that keeps its ``limit`` most recently written entries."""

    def __init__(self, store: _Store, limit: int) -> None:
        self._store = store
        self._limit = limit

    def __getitem__(self, key: str) -> Any:
        return self._store.entries[key]

    def __setitem__(self, key: str, value: Any) -> None:
        entries = self._store.entries
        entries.pop(key, None)
        while len(entries) >= self._limit:
            entries.pop(next(iter(entries)))
        self._store.put(key, value)

    def __delitem__(self, key: str) -> None:
        del self._store.entries[key]
        self._store.dirty = True

    def __iter__(self) -> Iterator[str]:
        return iter(self._store.entries)

    def __len__(self) -> int:
        return len(self._store.entries)


_MEMORY: ContextVar[dict[str, _Store | _Shelf] | None] = ContextVar("dpcheck_cache_memory", default=None)


@contextmanager
def kept_in_memory() -> Iterator[None]:
    """Within the context, every cache without a directory keeps its entries in one memory
    shared by the caches made in the context (one per settings namespace and store)."""
    token = _MEMORY.set({})
    try:
        yield
    finally:
        _MEMORY.reset(token)


class AnalysisCache:
    """The scan cache under ``directory``; a cache without a directory stores nothing."""

    def __init__(self, directory: Path | None, settings: str) -> None:
        if directory is not None and (directory / f"v{__version__}").is_symlink():
            directory = None
        self._root = directory
        base: Path | None = None
        if directory is not None:
            namespace = hashlib.sha256(f"{code_fingerprint()}|{settings}".encode()).hexdigest()[:16]
            base = directory / f"v{__version__}" / namespace
        memory = _MEMORY.get() if base is None else None

        def store(suffix: str) -> _Store:
            if base is not None:
                return _Store(base.with_suffix(suffix))
            if memory is None:
                return _Store(None)
            return memory.setdefault(f"{settings}{suffix}", _Store(None, kept=True))  # type: ignore[return-value]

        def shelf(suffix: str, ordered: bool = False) -> _Shelf:
            if base is not None:
                return _Shelf(base.with_suffix(suffix), ordered=ordered)
            if memory is None:
                return _Shelf(None, ordered=ordered)
            return memory.setdefault(f"{settings}{suffix}",  # type: ignore[return-value]
                                     _Shelf(None, kept=True, ordered=ordered))

        self._files = store(".files.json")
        self._summaries = shelf(".summaries")
        self._projects = shelf(".projects", ordered=True)
        self._bounds = store(".bounds.json")
        self.bound_effects: MutableMapping[str, Any] = _Newest(self._bounds, _BOUND_EFFECTS_KEPT)
        """What bounds do to findings, by parameter set (``bounds.attach.effect_key``)."""
        self._fixes = store(".fixes.json")
        self._imports = store(".imports.json")
        self.fix_plans: MutableMapping[str, Any] = _Newest(self._fixes, _FIX_PLANS_KEPT)
        """The fixes of a scan's findings, by the scan's inputs and findings."""
        self.hits = 0
        self.misses = 0

    @staticmethod
    def key(blob: str, path: str, variant: str = "") -> str:
        """The entry key of a file content at a path (``variant`` separates forced summaries)."""
        return f"{blob}:{path}:{variant}"

    def get(self, key: str) -> Any | None:
        """The light per-file record stored under ``key``."""
        value = self._files.get(key)
        if value is None:
            self.misses += 1
        else:
            self.hits += 1
        return value

    def put(self, key: str, value: Any) -> None:
        self._files.put(key, value)

    def summary(self, key: str) -> Any | None:
        return self._summaries.get(key)

    def put_summary(self, key: str, summary: Any) -> None:
        self._summaries.put(key, summary)

    def imports(self, key: str) -> list[str] | None:
        """The dotted targets the file stored under ``key`` imports, if recorded."""
        found = self._imports.get(key)
        return list(found) if isinstance(found, list) else None

    def put_imports(self, key: str, targets: list[str]) -> None:
        self._imports.put(key, targets)

    def project(self, key: str) -> Any | None:
        """The linked result of a project whose inputs digest to ``key``."""
        return self._projects.get(key)

    def recent_projects(self, context: str) -> Iterator[Any]:
        """The stored linked results of projects with the linking context ``context``
        (``LinkInputs.context``), the most recently written first, each read when reached."""
        return self._projects.recent(context)

    def put_project(self, key: str, value: Any, context: str) -> None:
        """Store a project's linked result under its linking context, keeping only the most
        recent few projects."""
        self._projects.put(key, value, context)
        for old in list(self._projects.index)[:-_PROJECT_ENTRIES_KEPT]:
            self._projects.drop(old)

    def save(self) -> None:
        """Write what changed; a cache that cannot be written is silently skipped (a read-only
        checkout must still scan)."""
        if self._root is None:
            return
        stores: tuple[_Store | _Shelf, ...] = (self._files, self._summaries, self._projects,
                                               self._bounds, self._fixes, self._imports)
        if not any(store.dirty for store in stores):
            return
        try:
            folder = self._root / f"v{__version__}"
            folder.mkdir(parents=True, exist_ok=True)
            if folder.is_symlink():
                return
            tag = self._root / "CACHEDIR.TAG"
            if not tag.exists():
                _write_new(tag, "Signature: 8a477f597d28d172789f06886806bc55\n# dpcheck cache\n")
                _write_new(self._root / ".gitignore", "*\n")
            for store in stores:
                store.save()
        except OSError:
            return


def _write_new(path: Path, text: str) -> None:
    """Write ``text`` to ``path``, refusing (``OSError``) to write through a symbolic link."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags, 0o644)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
