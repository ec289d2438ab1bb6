"""Render a :class:`~dpcheck.model.ScanResult` as text, JSON, SARIF 2.1.0 or GitHub annotations.

Every renderer is a pure function of the result (plus the rule catalog's metadata and, for code
frames, the scanned sources) returning the whole document as one string; writing it to stdout or
``--output`` is the CLI's job.

Output formats, in ruff's terms (``--output-format``): ``full`` (the default: each finding with
its code frame, evidence and bound), ``concise`` (one line per finding), ``json``, ``sarif`` and
``github``. The older ``--format`` names the same renderers with ``text`` for the text report in
the style the project chose (``full`` unless configured ``concise``); see :func:`output_format`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from dpcheck.errors import DpcheckError
from dpcheck.model import ScanResult
from dpcheck.report.escape import printable, printable_result
from dpcheck.report.github import render_github
from dpcheck.report.json_report import render_json
from dpcheck.report.locations import PathView, location
from dpcheck.report.meta import DEFAULT_DOCS_URL, RuleMeta
from dpcheck.report.sarif import render_sarif
from dpcheck.report.text import TEXT_STYLES, render_text

__all__ = [
    "FORMATS",
    "OUTPUT_FORMATS",
    "PathView",
    "RenderOptions",
    "RuleMeta",
    "location",
    "output_format",
    "render",
]

FORMATS: tuple[str, ...] = ("text", "json", "sarif", "github")
OUTPUT_FORMATS: tuple[str, ...] = (*TEXT_STYLES, "json", "sarif", "github")


def output_format(fmt: str | None, output_format: str | None, configured: str | None) -> str:
    """The one output format of a run, from ``--format``, ``--output-format`` and the config.

    The command line wins over the configuration. ``--format text`` asks for a text report and
    leaves its style to ``--output-format`` or the configuration (``full`` by default);
    ``--format json|sarif|github`` is the same as ``--output-format`` with that name. Two flags
    that ask for different formats are a usage error, never a silent choice.
    """
    if fmt is not None and output_format is not None:
        compatible = fmt == output_format or (fmt == "text" and output_format in TEXT_STYLES)
        if not compatible:
            raise DpcheckError(
                f"--format {fmt} and --output-format {output_format} ask for different reports; "
                "give one of them"
            )
        return output_format
    if output_format is not None:
        return output_format
    if fmt is not None and fmt != "text":
        return fmt
    if fmt == "text":
        return configured if configured in TEXT_STYLES else "full"
    return configured or "full"


@dataclass(frozen=True)
class RenderOptions:
    """How to render: colour, quiet and evidence apply to the text styles; ``paths`` to text and
    JSON (``display_path``); ``root`` is SARIF's ``%SRCROOT%``; ``docs_url`` the rule pages;
    ``unsafe_fixes``: the run applies unsafe fixes too (which fixes the text marks ``[*]``)."""

    color: bool = False
    quiet: bool = False
    show_evidence: bool = False
    paths: PathView = field(default_factory=PathView)
    root: Path | None = None
    docs_url: str = DEFAULT_DOCS_URL
    unsafe_fixes: bool = False


def render(
    result: ScanResult,
    fmt: str,
    *,
    sources: Mapping[str, str] | None,
    rules: Sequence[RuleMeta],
    root: Path | None = None,
    color: bool = False,
    quiet: bool = False,
    options: RenderOptions | None = None,
) -> str:
    """Render ``result`` in ``fmt``: one of :data:`OUTPUT_FORMATS`, or ``text`` (``full``).

    ``sources`` maps a finding's path to the file's text, used for code frames in ``full``; a
    path missing from it simply gets no frame. ``options`` (or the ``root``/``color``/``quiet``
    shorthands) say how.

    File names need not be UTF-8 and may hold control characters: the text report and GitHub
    annotations print every string ``printable``, JSON and SARIF escape undecodable bytes, SARIF
    URIs percent-encode the name's bytes (``dpcheck.report.escape``).
    """
    opts = options or RenderOptions(color=color, quiet=quiet, root=root)
    renderers: dict[str, Callable[[], str]] = {
        style: (lambda style=style: render_text(
            printable_result(result),
            sources={printable(path): text for path, text in (sources or {}).items()},
            color=opts.color,
            quiet=opts.quiet,
            style=style,
            show_evidence=opts.show_evidence,
            paths=opts.paths,
            unsafe_fixes=opts.unsafe_fixes,
        ))
        for style in TEXT_STYLES
    }
    renderers["text"] = renderers["full"]
    renderers["json"] = lambda: render_json(result, paths=opts.paths)
    renderers["sarif"] = lambda: render_sarif(result, rules=rules, root=opts.root, docs_url=opts.docs_url)
    renderers["github"] = lambda: render_github(printable_result(result), rules=rules,
                                                docs_url=opts.docs_url)
    if fmt not in renderers:
        raise DpcheckError(
            f"unknown report format {fmt!r}; choose one of {', '.join(OUTPUT_FORMATS)}"
        )
    return renderers[fmt]()
