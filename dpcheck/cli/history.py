"""``dpcheck history``: classify a DP library at every release tag of its git repository."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from dpcheck.cli import command_help
from dpcheck.errors import DpcheckError
from dpcheck.history import FORMATS
from dpcheck.progress import progress_display



def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``history`` sub-command."""
    p = subparsers.add_parser(
        "history",
        help=command_help("history"),
        description="For each release tag of REPO (a clone or a bare mirror; nothing is checked "
        "out), classify the library's normalization, Poisson sampling, default accountant and "
        "mechanism with the classifiers that scan user code.",
    )
    p.add_argument("repository", type=Path, metavar="REPO")
    p.add_argument("--tags", default="*", metavar="GLOB",
                   help="only tags matching GLOB (default *)")
    p.add_argument("--rev", metavar="A..B", help="only tags on commits of this revision range")
    p.add_argument("--pre", action="store_true", help="include pre-release tags")
    p.add_argument("--package", metavar="DIR",
                   help="the library's package directory (default: every top-level package)")
    p.add_argument("--format", choices=FORMATS, default="text",
                   help="output format (default text); version-table: the shape of "
                   "dpcheck/data/opacus_versions.json")
    p.add_argument("--library", default="opacus", help="library name in a version-table")
    p.add_argument("--repository-url", default="https://github.com/pytorch/opacus",
                   help="upstream URL recorded in a version-table")
    p.add_argument("--output", "-o", type=Path, help="write the table to FILE instead of stdout")
    p.add_argument("--group", action="store_true", help="merge consecutive equal rows into ranges")
    p.add_argument("--evidence", action="store_true",
                   help="show each cell's evidence (path:line at the tag) in md/text/csv")
    p.add_argument("--no-cache", action="store_true", help="neither read nor write the cache")
    p.add_argument("--cache-dir", type=Path,
                   help="cache directory (default: REPO/.dpcheck_cache if writable, else "
                   "~/.cache/dpcheck)")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress line, no warnings")
    p.set_defaults(func=execute)


def execute(args: argparse.Namespace) -> int:
    """Build the table, write it, and warn (stderr) about every cell left unknown."""
    from dpcheck.history.rows import group_rows
    from dpcheck.history.run import HistoryOptions, run_history
    from dpcheck.history.render import render

    options = HistoryOptions(args.repository, args.tags, args.rev, args.pre, args.package,
                             args.cache_dir, not args.no_cache)
    with progress_display(args.quiet) as progress:
        result = run_history(options, progress)
    text = render(result.rows, args.format, args.group, args.evidence, group_rows,
                  args.library, args.repository_url)
    if args.output is None:
        sys.stdout.write(text)
    else:
        try:
            args.output.write_text(text, encoding="utf-8")
        except OSError as exc:
            raise DpcheckError(f"--output {args.output}: {exc.strerror}") from exc
    if not args.quiet:
        for row in result.rows:
            for reason in dict.fromkeys(row.reasons.values()):
                cells = ", ".join(c for c, r in row.reasons.items() if r == reason)
                sys.stderr.write(f"dpcheck: {row.release.tag}: {cells} unknown: {reason}\n")
    return 0
