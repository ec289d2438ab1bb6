"""Render a :class:`~dpcheck.model.ScanResult` as text, JSON, SARIF 2.1.0 or GitHub annotations.

Every renderer is a pure function of the result (plus the rule catalog's metadata and, for code
frames, the scanned sources) returning the whole document as one string; writing it to stdout or
``--output`` is the CLI's job.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from dpcheck.errors import DpcheckError
from dpcheck.model import ScanResult
from dpcheck.report.escape import printable, printable_result
from dpcheck.report.github import render_github
from dpcheck.report.json_report import render_json
from dpcheck.report.meta import RuleMeta
from dpcheck.report.sarif import render_sarif
from dpcheck.report.text import render_text

__all__ = ["FORMATS", "RuleMeta", "render"]

FORMATS: tuple[str, ...] = ("text", "json", "sarif", "github")


def render(
    result: ScanResult,
    fmt: str,
    *,
    sources: Mapping[str, str] | None,
    rules: Sequence[RuleMeta],
    root: Path | None = None,
    color: bool = False,
    quiet: bool = False,
) -> str:
    """Render ``result`` in format ``fmt`` (one of :data:`FORMATS`).

    ``sources`` maps a finding's path to the file's text, used for code frames in ``text``; a path
    missing from it simply gets no frame. ``root`` is the scan root, recorded in SARIF as the
    ``%SRCROOT%`` base. ``color`` and ``quiet`` only affect ``text``.

    File names need not be UTF-8 and may hold control characters: the text report and GitHub
    annotations print every string ``printable``, JSON and SARIF escape undecodable bytes, SARIF
    URIs percent-encode the name's bytes (``dpcheck.report.escape``).
    """
    renderers: dict[str, Callable[[], str]] = {
        "text": lambda: render_text(
            printable_result(result),
            sources={printable(path): text for path, text in (sources or {}).items()},
            color=color,
            quiet=quiet,
        ),
        "json": lambda: render_json(result),
        "sarif": lambda: render_sarif(result, rules=rules, root=root),
        "github": lambda: render_github(printable_result(result), rules=rules),
    }
    if fmt not in renderers:
        raise DpcheckError(f"unknown report format {fmt!r}; choose one of {', '.join(FORMATS)}")
    return renderers[fmt]()
