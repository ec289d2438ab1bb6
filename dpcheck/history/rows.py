"""One version-table row per release tag, and the grouping of equal consecutive rows.

Each row is ``classify_library`` run on the library's files at the tagged commit; its evidence
is located at that commit (path, line and the text of that line, read from the blob).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import git

from dpcheck.history.blobs import BlobSummaries, library_blobs
from dpcheck.history.repository import Release
from dpcheck.pipelines.library import LibraryRow, classify_library
from dpcheck.progress import ProgressCallback

CELLS = ("normalization_mean", "normalization_sum", "poisson_builtin", "poisson_default",
         "default_accountant", "mechanism")
"""The behaviour columns, in the vocabulary of ``dpcheck/data/opacus_versions.json``."""


@dataclass(frozen=True)
class CellEvidence:
    """One piece of evidence at a tag: the cell it supports, where, and that line's text."""

    role: str
    path: str
    line: int
    commit: str
    text: str

    def to_json(self) -> dict[str, Any]:
        return {"role": self.role, "path": self.path, "line": self.line, "commit": self.commit,
                "text": self.text}


@dataclass(frozen=True)
class HistoryRow:
    """The library's behaviour at one release tag; ``cells`` maps each of ``CELLS`` to its
    value, ``reasons`` says why a cell is unknown."""

    release: Release
    cells: dict[str, Any]
    evidence: tuple[CellEvidence, ...] = ()
    variants: tuple[dict[str, str], ...] = ()
    reasons: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"tag": self.release.tag, "version": str(self.release.version),
                "commit": self.release.commit.hexsha, "date": self.release.date, **self.cells,
                "variants": list(self.variants), "reasons": self.reasons,
                "evidence": [e.to_json() for e in self.evidence]}


@dataclass(frozen=True)
class Group:
    """Consecutive rows with equal cells (a range of Table 2 of Wang, Cui, Cui, Yuan 2026)."""

    rows: tuple[HistoryRow, ...]

    @property
    def label(self) -> str:
        first, last = self.rows[0].release.tag, self.rows[-1].release.tag
        return first if first == last else f"{first} – {last}"


def group_rows(rows: Sequence[HistoryRow]) -> list[Group]:
    """Merge consecutive rows whose cells and variants are equal."""
    groups: list[list[HistoryRow]] = []
    for row in rows:
        last = groups[-1][-1] if groups else None
        if last is not None and (last.cells, last.variants) == (row.cells, row.variants):
            groups[-1].append(row)
        else:
            groups.append([row])
    return [Group(tuple(g)) for g in groups]


def _unknown_row(release: Release, reason: str) -> HistoryRow:
    return HistoryRow(release, {cell: "unknown" for cell in CELLS},
                      reasons={cell: reason for cell in CELLS})


def _line(blob: git.Blob | None, line: int) -> str:
    if blob is None:
        return ""
    lines = blob.data_stream.read().decode("utf-8", "replace").splitlines()
    return lines[line - 1].strip() if 0 < line <= len(lines) else ""


def _row(release: Release, library: LibraryRow, blobs: dict[str, git.Blob]) -> HistoryRow:
    cells = {cell: getattr(library, cell) for cell in CELLS}
    evidence = tuple(
        CellEvidence(e.role, e.span.path, e.span.line, release.commit.hexsha,
                     _line(blobs.get(e.span.path), e.span.line) or e.note)
        for e in library.evidence)
    return HistoryRow(release, cells, evidence, library.variants, dict(library.reasons))


def build_rows(releases: Sequence[Release], package: str | None, summaries: BlobSummaries,
               progress: ProgressCallback | None = None) -> list[HistoryRow]:
    """One row per release; a tag whose tree lacks the library gets an all-unknown row."""
    rows = []
    for done, release in enumerate(releases):
        if progress is not None:
            progress(f"classifying {release.tag}", done, len(releases))
        blobs = library_blobs(release.commit.tree, package)
        if not blobs:
            what = f"{package}/" if package else "a Python package"
            rows.append(_unknown_row(release, f"the tree at {release.tag} has no {what}"))
            continue
        library = classify_library(list(blobs), summaries.source(blobs))
        rows.append(_row(release, library, blobs))
    if progress is not None:
        progress("classifying tags", len(releases), len(releases))
    return rows
