"""``dpcheck scan``: find DP-SGD pipelines, classify them, report findings."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from dpcheck.cli import command_help
from dpcheck.cli.fix import add_fix_options, fix_stage
from dpcheck.config import FAIL_ON_LEVELS, check_docs_url, parse_cli_params
from dpcheck.discover.confine import read_inside
from dpcheck.engine import ScanOptions, Settings, settle
from dpcheck.errors import DpcheckError
from dpcheck.figures import require_matplotlib
from dpcheck.gate import GateOptions, GateOutcome, gated_scan
from dpcheck.model import ScanError, ScanResult, Severity
from dpcheck.parse.cache import kept_in_memory
from dpcheck.parse.notebook import display_text
from dpcheck.parse.source import MAX_FILE_BYTES, is_binary
from dpcheck.progress import progress_display
from dpcheck.report import FORMATS, OUTPUT_FORMATS, PathView, RenderOptions, output_format, render
from dpcheck.report.escape import printable
from dpcheck.report.meta import DEFAULT_DOCS_URL

#: Formats code scanning and a CI log read: on an error before any result they still get a
#: document saying so (a SARIF run that failed, an error annotation), so the reason shows where
#: the findings would have. JSON keeps its contract: exit 2 and the message on stderr only.
ANNOTATED_FORMATS = frozenset({"sarif", "github"})


def _codes(values: list[str] | None) -> list[str]:
    return [c.strip() for v in values or [] for c in v.split(",") if c.strip()]


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``scan`` sub-command."""
    p = subparsers.add_parser(
        "scan",
        help=command_help("scan"),
        description="Scan Python training code (files or directories, default .) for DP-SGD "
        "pipelines whose update rule or sampling does not match the privacy accountant.",
    )
    p.add_argument("paths", nargs="*", type=Path, default=[Path(".")], metavar="PATH")
    p.add_argument(
        "--output-format",
        choices=OUTPUT_FORMATS,
        help="full (default: each finding with its code, evidence and bound), concise (one line "
        "per finding), json, sarif or github; [tool.dpcheck] output-format sets a project default",
    )
    p.add_argument(
        "--format",
        choices=FORMATS,
        help="the older name: text (the text report, in the --output-format or configured style), "
        "json, sarif or github",
    )
    p.add_argument("--show-evidence", action="store_true",
                   help="with concise output, list each finding's evidence and bound under it")
    p.add_argument("--output", "-o", type=Path, help="write the report to FILE instead of stdout")
    p.add_argument("--fail-on", choices=FAIL_ON_LEVELS, help="lowest severity that makes the exit code 1 (default error)")
    p.add_argument(
        "--new-since",
        metavar="REF",
        help="report only findings absent from the scan of git REF's tree (a PR's base branch)",
    )
    p.add_argument(
        "--baseline",
        type=Path,
        metavar="FILE",
        help="drop findings accepted in FILE (written by `dpcheck baseline write FILE`)",
    )
    p.add_argument("--plot-dir", type=Path, metavar="DIR",
                   help="write one PNG per finding's bound (claimed vs witness vs guarantee) to DIR "
                   "(needs the plot extra: pip install 'dpcheck[plot]')")
    p.add_argument("--docs-url", metavar="URL",
                   help=f"base URL of the rule pages linked from SARIF and annotations (default "
                   f"{DEFAULT_DOCS_URL}; [tool.dpcheck] docs-url)")
    add_fix_options(p)
    add_scan_options(p)
    p.set_defaults(func=execute)


def add_scan_options(p: argparse.ArgumentParser) -> None:
    """The options that choose what a scan finds (shared with ``dpcheck baseline write``)."""
    p.add_argument("--select", action="append", metavar="RULES",
                   help="only these rules (comma-separated ids, prefixes such as DP1, or names)")
    p.add_argument("--ignore", action="append", metavar="RULES", help="skip these rules (ids, prefixes or names)")
    p.add_argument("--config", type=Path, help="configuration file (default: the project's pyproject.toml)")
    p.add_argument("--jobs", "-j", type=int, help="parallel processes (default: CPU count)")
    p.add_argument("--no-cache", action="store_true", help="neither read nor write the analysis cache")
    p.add_argument("--cache-dir", type=Path, help="cache directory (default: ROOT/.dpcheck_cache)")
    p.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a statically found parameter: sigma, clip, batch_size, N, q, epochs, "
        "steps, delta, target_epsilon, dim (repeatable)",
    )
    p.add_argument("--strict", action="store_true",
                   help="fail (exit 1) on any suppression issue, also blanket and unused ones, and "
                   "make unknown per-file-ignores codes errors")
    p.add_argument("--quiet", "-q", action="store_true", help="only findings and the summary line")


def scan_options(args: argparse.Namespace) -> ScanOptions:
    """``ScanOptions`` from the options added by ``add_scan_options`` and ``args.paths``."""
    if args.jobs is not None and args.jobs < 1:
        raise DpcheckError(f"--jobs must be at least 1, got {args.jobs}")
    return ScanOptions(
        paths=tuple(args.paths),
        select=_codes(args.select),
        ignore=_codes(args.ignore),
        params=parse_cli_params(args.param),
        config_path=args.config,
        jobs=args.jobs,
        use_cache=not args.no_cache,
        cache_dir=args.cache_dir,
        strict=args.strict,
    )


def exit_code(result: ScanResult, fail_on: str, strict: bool) -> int:
    """1 when a finding is at or above ``fail_on`` (or a strict suppression issue), else 0."""
    if fail_on == "never":
        return 0
    threshold = Severity(fail_on).rank
    failing = any(f.severity.rank >= threshold for f in result.findings)
    return 1 if failing or (strict and result.suppression_issues) else 0


def execute(args: argparse.Namespace) -> int:
    """Run the scan and write the report; the exit code follows ``--fail-on``. The command's
    rescans (a fix's re-analysis) reuse its first scan's work even under ``--no-cache``."""
    with kept_in_memory():
        return _scan_and_report(args)


def _scan_and_report(args: argparse.Namespace) -> int:
    if args.plot_dir is not None:
        require_matplotlib("--plot-dir")  # before the scan, not after minutes of it
    fmt = output_format(args.format, args.output_format, None)
    gate = GateOptions(args.new_since, args.baseline)
    try:
        settings = settle(scan_options(args))
        fmt = output_format(args.format, args.output_format, settings.config.output_format)
        with progress_display(args.quiet) as progress:
            outcome = gated_scan(settings, gate, progress)
    except DpcheckError as exc:
        if fmt in ANNOTATED_FORMATS:  # the reader (code scanning, a CI step) learns why it is empty
            _write(args.output, render(ScanResult(errors=[ScanError("", str(exc))]), fmt,
                                       sources=None, rules=()))
        raise
    if not args.quiet:
        _note_dropped(outcome, args.new_since, args.baseline)
    fixed = fix_stage(args, settings, gate, outcome)
    if fixed.result is None:  # --diff: the diff is the output
        _write(args.output, fixed.diff)
        return fixed.exit_code or 0
    result = fixed.result
    for warning in result.warnings:
        sys.stderr.write(f"dpcheck: warning: {printable(warning)}\n")
    _write(args.output, render(result, fmt, sources=_sources(result, settings.root),
                               rules=settings.catalog.rules, options=_render_options(args, settings, fmt)))
    if args.plot_dir is not None:  # after the report: a plot that cannot be written loses nothing
        from dpcheck.bounds.plot import plot_findings

        plot_findings(result.findings, result.pipelines, args.plot_dir)
    _note_internal(result)
    if result.errors and not result.files_scanned:
        return 2  # nothing could be read: no finding means nothing here
    return exit_code(result, args.fail_on or settings.config.fail_on or "error", settings.strict)


def _render_options(args: argparse.Namespace, settings: Settings, fmt: str) -> RenderOptions:
    color = (
        fmt in ("full", "concise")
        and args.output is None
        and sys.stdout.isatty()
        and "NO_COLOR" not in os.environ
    )
    docs_url = settings.config.docs_url or DEFAULT_DOCS_URL
    if args.docs_url is not None:
        docs_url = check_docs_url(args.docs_url, "--docs-url")
    return RenderOptions(
        color=color,
        quiet=args.quiet,
        show_evidence=args.show_evidence,
        paths=PathView.here(settings.root),
        root=settings.root,
        docs_url=docs_url,
        unsafe_fixes=args.unsafe_fixes,
    )


def _write(output: Path | None, report: str) -> None:
    if output is None:
        sys.stdout.write(report)
        return
    try:
        output.write_text(report, encoding="utf-8")
    except OSError as exc:
        raise DpcheckError(f"{output}: cannot write report: {exc.strerror or exc}") from None


def _note_dropped(outcome: GateOutcome, ref: str | None, baseline: Path | None) -> None:
    """Say on stderr how many known findings the gate left out of the report."""
    if ref is not None:
        sys.stderr.write(f"dpcheck: {_findings(outcome.known_at_ref)} also present at {ref}, not reported\n")
    if baseline is not None:
        sys.stderr.write(f"dpcheck: {_findings(outcome.in_baseline)} accepted in {baseline}, not reported\n")


def _note_internal(result: ScanResult) -> None:
    """One stderr line per dpcheck bug the scan met and isolated: it does not change the exit
    code (the gate still stands on every other file), so it must not pass unseen."""
    for error in result.errors:
        if error.internal:
            where = printable(error.path) or "."
            sys.stderr.write(f"dpcheck: {where}: {printable(error.message)} (please report)\n")


def _findings(n: int) -> str:
    return f"{n} finding{'' if n == 1 else 's'}"


def _sources(result: ScanResult, root: Path) -> dict[str, str]:
    """The text of every file a finding is in, for code frames (a notebook's code cells);
    binary files have none."""
    return {
        f.span.path: text
        for f in result.findings
        if (text := _read_text(root, f.span.path)) is not None
    }


def _read_text(root: Path, path: str) -> str | None:
    """The text of a reported file for its code frames; only inside the project, as the scan
    read it (``None``: no frame)."""
    try:
        data = read_inside(root / path, root, MAX_FILE_BYTES)
    except OSError:
        return None
    return None if is_binary(data) else display_text(path, data)
