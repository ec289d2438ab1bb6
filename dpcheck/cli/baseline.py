"""``dpcheck baseline write FILE [PATH ...]``: accept the current findings of a project.

A later ``dpcheck scan --baseline FILE`` reports only findings not in the file, so a gate can be
switched on in a project with known findings and still fail on every new one.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from dpcheck.cli import command_help
from dpcheck import __version__
from dpcheck.cli.scan import add_scan_options, scan_options
from dpcheck.engine import settle
from dpcheck.gate import Baseline, scan_named, write_baseline
from dpcheck.progress import progress_display


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``baseline`` sub-command with its ``write`` action."""
    p = subparsers.add_parser(
        "baseline",
        help=command_help("baseline"),
        description="Manage a baseline file of accepted findings.",
    )
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    write = actions.add_parser(
        "write",
        help="scan and record every current finding in FILE",
        description="Scan PATHs (default .) like `dpcheck scan` and write every finding's "
        "fingerprint, rule, path and message to FILE (JSON). Fingerprints do not depend on line "
        "numbers, so edits elsewhere in a file keep its findings accepted.",
    )
    write.add_argument("file", type=Path, metavar="FILE", help="the baseline file to write")
    write.add_argument("paths", nargs="*", type=Path, default=[Path(".")], metavar="PATH")
    add_scan_options(write)
    write.set_defaults(func=execute_write)


def execute_write(args: argparse.Namespace) -> int:
    """Scan, write the baseline and say how many findings it accepts."""
    settings = settle(scan_options(args))
    with progress_display(args.quiet) as progress:
        result = scan_named(settings, progress)
    write_baseline(args.file, Baseline.of(result.findings), __version__)
    if not args.quiet:
        count = len(result.findings)
        sys.stderr.write(f"dpcheck: wrote {count} finding{'' if count == 1 else 's'} to {args.file}\n")
    return 0
