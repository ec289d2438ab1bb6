"""The ``dpcheck`` command line: one sub-module per sub-command, each with ``register``.

Every sub-command module exposes ``register(subparsers) -> None`` which adds its parser and
sets ``func`` (``(args) -> int`` exit code). Errors derived from ``DpcheckError`` become exit
code 2 with a one-line message; anything else too, with the traceback only under ``--debug``.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import traceback
from collections.abc import Sequence

from dpcheck import __version__
from dpcheck.errors import DpcheckError

SUBCOMMANDS: tuple[str, ...] = ("scan", "rules", "bound", "audit", "history", "baseline")
EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


class _Parser(argparse.ArgumentParser):
    """argparse exits 2 on usage errors already; keep its message but drop the usage dump noise."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        sys.stderr.write(f"dpcheck: error: {message}\n")
        raise SystemExit(EXIT_ERROR)


def build_parser() -> argparse.ArgumentParser:
    """The full parser with every registered sub-command."""
    parser = _Parser(
        prog="dpcheck",
        description="Static analyzer for differentially private ML training code.",
    )
    parser.add_argument("--version", action="version", version=f"dpcheck {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in SUBCOMMANDS:
        module = importlib.import_module(f"dpcheck.cli.{name}")
        module.register(subparsers)
    for sub in _all_subparsers(parser):
        # after the sub-command too (`dpcheck scan --debug`); SUPPRESS keeps a --debug given
        # before it, which a default would overwrite
        sub.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                         help="show tracebacks on errors")
    return parser


def _all_subparsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """Every parser below ``parser`` (sub-commands and their own sub-commands)."""
    found: list[argparse.ArgumentParser] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):
                found += [sub, *_all_subparsers(sub)]
    return found


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script; returns the process exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return EXIT_ERROR
    try:
        return int(args.func(args))
    except DpcheckError as exc:
        if args.debug:
            traceback.print_exc()
        sys.stderr.write(f"dpcheck: error: {exc}\n")
        return EXIT_ERROR
    except KeyboardInterrupt:
        sys.stderr.write("dpcheck: interrupted\n")
        return EXIT_ERROR
    except Exception as exc:  # noqa: BLE001 - last-resort guard: never a bare traceback
        if args.debug:
            traceback.print_exc()
        sys.stderr.write(
            f"dpcheck: internal error: {type(exc).__name__}: {exc} (rerun with --debug)\n"
        )
        return EXIT_ERROR
