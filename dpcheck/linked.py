"""What the linking stage produced for a project, and when a cached result still holds for it.

Linking reads what it needs of a project: the summaries of every candidate file (those the text
pre-filter marks as possibly DP-relevant), of the files it follows imports and calls into, and
the source lines it quotes. A project's cache entry records those inputs (``LinkInputs``): a
digest of the context (dependency files, installed DP libraries, parameters, pinned versions,
the Opacus history used to place commit pins, the reported subset, the list of paths), the
content key of every file, the candidate files and the files linking read. A file that linking
never read, that is no candidate and was none, cannot change what linking produced, so an edit
of such files (a utility module, a test, a plotting script) reuses the cached result; only the
file rules (DP001) are run again on the edited files.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from dpcheck.model import Finding, Pipeline, ScanError


@dataclass(frozen=True)
class Linked:
    """The pipelines, the findings of the pipeline and unlinked-code rules (``findings``),
    the file-rule findings (``per_file``) and the internal errors of one linking."""

    pipelines: tuple[Pipeline, ...]
    findings: tuple[Finding, ...]
    per_file: tuple[Finding, ...]
    errors: tuple[ScanError, ...]

    @property
    def all_findings(self) -> tuple[Finding, ...]:
        """Every finding, sorted as reported."""
        return tuple(sorted((*self.per_file, *self.findings), key=Finding.sort_key))

    def to_json(self) -> dict[str, object]:
        return {
            "pipelines": [p.to_json() for p in self.pipelines],
            "findings": [f.to_json() for f in self.findings],
            "per_file": [f.to_json() for f in self.per_file],
            "errors": [e.to_json() for e in self.errors],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Linked:
        return cls(
            tuple(Pipeline.from_json(p) for p in data["pipelines"]),
            tuple(Finding.from_json(f) for f in data["findings"]),
            tuple(Finding.from_json(f) for f in data["per_file"]),
            tuple(ScanError(e["path"], e["message"], e["internal"]) for e in data["errors"]),
        )


@dataclass(frozen=True)
class LinkInputs:
    """Everything a linking result depends on (see the module docstring); ``read`` and
    ``data`` (the content key of each data file linking read, a configuration file the code
    loads, by path) are known once linking ran (empty before)."""

    context: str
    files: Mapping[str, str]
    candidates: frozenset[str]
    read: frozenset[str] = frozenset()
    data: Mapping[str, str] = field(default_factory=dict)

    @property
    def key(self) -> str:
        """The cache key of a project with exactly these inputs."""
        digest = hashlib.sha256(f"context:{self.context}\n".encode())
        for rel in sorted(self.files):
            digest.update(f"py:{self.files[rel]}\n".encode("utf-8", "surrogatepass"))
        return digest.hexdigest()

    @property
    def linked_key(self) -> str:
        """A digest of what linking depended on: the context and the content keys of the
        candidates and of the files linking read. Projects that differ only in files outside
        these link the same way, so what is derived from linking alone (the fixes a re-linking
        verified) is cached under this key and survives an edit of an unread file."""
        digest = hashlib.sha256(f"context:{self.context}\n".encode())
        for rel in sorted((self.read | self.candidates) & self.files.keys()):
            digest.update(f"{rel}:{self.files[rel]}\n".encode("utf-8", "surrogatepass"))
        for rel in sorted(self.data):
            digest.update(f"data:{rel}:{self.data[rel]}\n".encode("utf-8", "surrogatepass"))
        return digest.hexdigest()

    def data_unchanged(self, content_key: Callable[[str], str]) -> bool:
        """Whether every data file linking read still has the content key it had
        (``content_key`` gives a file's current one): only then does the result hold."""
        return all(content_key(rel) == key for rel, key in self.data.items())

    def changed_unread(self, current: LinkInputs) -> frozenset[str] | None:
        """The files that differ from ``current`` when a result linked from these inputs holds
        for ``current`` too (the same context and paths, and every changed file unread by
        linking and a candidate in neither); None when it may not hold."""
        if self.context != current.context or self.files.keys() != current.files.keys():
            return None
        changed = frozenset(rel for rel, key in current.files.items() if self.files[rel] != key)
        if changed & (self.read | self.candidates | current.candidates):
            return None
        return changed

    def to_json(self) -> dict[str, object]:
        return {"context": self.context, "files": dict(self.files),
                "candidates": sorted(self.candidates), "read": sorted(self.read),
                "data": dict(self.data)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LinkInputs:
        return cls(data["context"], data["files"], frozenset(data["candidates"]),
                   frozenset(data["read"]), data.get("data", {}))
