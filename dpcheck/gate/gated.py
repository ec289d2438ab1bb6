"""A scan as a gate sees it: named dependency files widened to the project, then findings
already present at a git ref (``--new-since``) or accepted in a baseline (``--baseline``)
dropped and counted."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from dpcheck.engine import Settings, run
from dpcheck.gate.baseline import read_baseline
from dpcheck.gate.git_tree import resolve_ref
from dpcheck.gate.known import drop_known
from dpcheck.gate.new_since import fingerprints_at
from dpcheck.gate.scope import NamedFiles, named_dependency_files, restrict, whole_project
from dpcheck.model import ScanResult
from dpcheck.progress import ProgressCallback


@dataclass(frozen=True)
class GateOptions:
    """``--new-since REF`` and ``--baseline FILE``; both optional."""

    new_since: str | None = None
    baseline: Path | None = None


@dataclass(frozen=True)
class GateOutcome:
    """The reported result, how many findings each filter dropped, and the scan before the
    filters (``scanned``: what a fix's re-analysis is compared with)."""

    result: ScanResult
    known_at_ref: int = 0
    in_baseline: int = 0
    scanned: ScanResult | None = None


def _widened(settings: Settings) -> tuple[Settings, NamedFiles | None]:
    """The settings to scan with, and the named files to restrict to when a dependency file is
    among them (see ``dpcheck.gate.scope``)."""
    named = named_dependency_files(settings.options.paths, settings.root)
    return (settings, None) if named is None else (whole_project(settings), named)


def scan_named(settings: Settings, progress: ProgressCallback | None = None) -> ScanResult:
    """``run``, except that a named dependency file is scanned as a change to the whole project."""
    scanned, named = _widened(settings)
    result = run(scanned, progress=progress)
    return result if named is None else restrict(result, named)


def gated_scan(
    settings: Settings, gate: GateOptions, progress: ProgressCallback | None = None
) -> GateOutcome:
    """Scan and drop known findings. The baseline file and the ref are checked before the scan,
    so a typo fails fast with a ``DpcheckError``."""
    baseline = read_baseline(gate.baseline, settings.root) if gate.baseline is not None else None
    target = resolve_ref(settings.root, gate.new_since) if gate.new_since is not None else None
    unfiltered = result = scan_named(settings, progress)
    known_at_ref = in_baseline = 0
    if target is not None:
        scanned, _ = _widened(settings)
        result, known_at_ref = drop_known(result, fingerprints_at(scanned, target, progress))
    if baseline is not None:
        result, in_baseline = drop_known(result, baseline.counts())
    return GateOutcome(result, known_at_ref, in_baseline, unfiltered)
