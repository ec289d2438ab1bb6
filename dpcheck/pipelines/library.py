"""Classify a DP library's own source (e.g. Opacus at one release) with the user-code classifiers.

``classify_library(files)`` summarises the given files (path -> source text; never imported)
and reads, with the same divisor classifier that decides user pipelines, how the library
normalizes the noisy gradient sum: every division of a gradient (``p.grad /= k``,
``summed_grad / batch_size``, ``noise /= batch_size``) and every ``expected_batch_size`` /
``avg_batch_size`` the library computes. It also reads the public entry point's defaults:
whether Poisson sampling is on by default and which accountant the engine uses. ``dpcheck
history`` calls it once per git tag to rebuild the version table.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from dpcheck.model import Evidence, Span
from dpcheck.pipelines.divisor import DivisorClassifier
from dpcheck.pipelines.index import Ctx, ProjectIndex
from dpcheck.sites import summarize_source
from dpcheck.sites.ir import IR

SKIPPED = re.compile(r"(^|/)(tests?|examples|benchmarks|tutorials)/|(^|/)test_[^/]*\.py$")
CODES = {"realized": "A", "expected": "EA", "floor-expected": "FEA"}
MECHANISMS = {"A": "ASGM", "EA": "EASGM", "FEA": "FEASGM"}
EXPECTED_NAMES = ("expected_batch_size", "avg_batch_size")
ACCOUNTANTS = {"rdp": "opacus-rdp", "prv": "opacus-prv", "gdp": "opacus-gdp"}


@dataclass(frozen=True)
class LibraryRow:
    """One release's behaviour, in the version table's vocabulary (``normalization_mean`` is
    A, EA, FEA or unknown), with the evidence (path:line of the library source) it rests on."""

    normalization_mean: str
    poisson_builtin: bool
    poisson_default: bool | None
    default_accountant: str | None
    mechanism: str
    evidence: tuple[Evidence, ...] = field(default_factory=tuple)


class _Files:
    """The minimal project view ``ProjectIndex`` needs, over in-memory library files (the
    library's own tests and examples are left out: they are callers, not the library)."""

    def __init__(self, files: Mapping[str, str]) -> None:
        self.paths = tuple(sorted(p for p in files if p.endswith(".py") and not SKIPPED.search(p)))
        self._summaries: dict[str, dict[str, Any] | None] = {}
        self._files = files

    def summary(self, path: str) -> dict[str, Any] | None:
        if path not in self._summaries:
            text = self._files.get(path)
            self._summaries[path] = None if text is None else summarize_source(text, path)
        return self._summaries[path]

    def candidate_paths(self) -> tuple[str, ...]:
        return self.paths


def _statements(index: ProjectIndex, paths: tuple[str, ...]
                ) -> Iterator[tuple[Ctx, dict[str, Any]]]:
    for path in paths:
        summary = index.summary(path)
        for qual, scope in (summary or {}).get("scopes", {}).items():
            for stmt in scope["stmts"]:
                yield Ctx(path, qual, stmt["line"]), stmt


def _grad_divisions(stmt: dict[str, Any]) -> Iterator[IR]:
    """Divisors applied to a gradient or noise tensor in one statement."""
    target = stmt["t"] if isinstance(stmt["t"], str) else ""
    if stmt["k"] == "aug" and stmt.get("op") == "/" and ("grad" in target or "noise" in target):
        yield stmt["e"]
    if stmt["k"] == "return" and stmt["e"][0] == "b" and stmt["e"][1] == "/":
        dividend = stmt["e"][2]
        if dividend[0] == "r" and "grad" in dividend[1]:
            yield stmt["e"][3]


def _default(index: ProjectIndex, paths: tuple[str, ...], function: str, param: str) -> IR | None:
    for path in paths:
        summary = index.summary(path)
        for qual, scope in (summary or {}).get("scopes", {}).items():
            if qual.rsplit(".", 1)[-1] == function:
                for name, default in scope["params"]:
                    if name == param:
                        return default
    return None


def classify_library(files: Mapping[str, str]) -> LibraryRow:
    """The behaviour of the DP library whose source ``files`` holds (path -> text)."""
    project = _Files(files)
    index = ProjectIndex(project)  # type: ignore[arg-type]
    divisors = DivisorClassifier(index)
    kinds: list[str] = []
    evidence: list[Evidence] = []
    for ctx, stmt in _statements(index, project.paths):
        target = stmt["t"] if isinstance(stmt["t"], str) else ""
        candidates = list(_grad_divisions(stmt))
        if stmt["k"] == "assign" and target.rsplit(".", 1)[-1] in EXPECTED_NAMES:
            candidates.append(stmt["e"])
        for divisor in candidates:
            dep = divisors.classify(divisor, ctx)
            if dep.kind in CODES or dep.kind == "constant":
                kinds.append(dep.kind)
                evidence.append(Evidence("normalization:mean", Span(ctx.path, stmt["line"]),
                                         f"{dep.kind}: {stmt.get('src', '')}"))
    data_dependent = [k for k in kinds if k in CODES]
    # the expected batch size, where computed, is what the update divides by
    code = CODES[data_dependent[-1]] if data_dependent else "unknown"
    poisson = _default(index, project.paths, "make_private", "poisson_sampling")
    if poisson is None:
        poisson = _default(index, project.paths, "__init__", "poisson")
    builtin = any("UniformWithReplacementSampler" in p or "uniform_sampler" in p
                  for p in project.paths) or poisson is not None
    accountant = _default(index, project.paths, "__init__", "accountant")
    if accountant is not None and accountant[0] == "s":
        default_accountant = ACCOUNTANTS.get(accountant[1])
    else:  # engines without an accountant choice report through their RDP analysis module
        default_accountant = "opacus-rdp" if any(
            p.endswith(("privacy_analysis.py", "rdp.py")) for p in project.paths) else None
    mechanism = MECHANISMS.get(code, "unknown") if builtin else "not supported"
    return LibraryRow(
        normalization_mean=code,
        poisson_builtin=builtin,
        poisson_default=(poisson == ["c", True]) if poisson is not None else None,
        default_accountant=default_accountant,
        mechanism=mechanism,
        evidence=tuple(evidence),
    )
