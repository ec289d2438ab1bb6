"""The ``dpcheck`` command line: one sub-module per sub-command, each with ``register``.

Every sub-command module exposes ``register(subparsers) -> None`` which adds its parsers and
sets ``func`` (``(args) -> int`` exit code). Only the module of the command being run is
imported: the others are listed by name and help (``COMMANDS``), so ``dpcheck --version`` or
``dpcheck rules`` never pays for the scan engine or the numeric one. Errors derived from
``DpcheckError`` become exit code 2 with a one-line message; anything else too, with the
traceback only under ``--debug``.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import traceback
from collections.abc import Sequence

from dpcheck import __version__
from dpcheck.errors import DpcheckError

#: Each command: the ``dpcheck.cli`` module that registers it, and its one-line help.
COMMANDS: dict[str, tuple[str, str]] = {
    "scan": ("scan", "scan training code for DP accounting mismatches"),
    "rules": ("rules", "list the rules of the catalog"),
    "explain": ("rules", "explain a rule in full, with its examples (or write the docs pages)"),
    "bound": ("bound", "corrected privacy bounds of one DP-SGD setting"),
    "audit": ("audit", "Monte-Carlo audit of one step against the claimed SGM guarantee"),
    "history": ("history", "classify a DP library at every release tag (the Opacus version table)"),
    "baseline": ("baseline", "accept the current findings (for `scan --baseline`)"),
}


def command_help(name: str) -> str:
    """The one-line help of a command (its module's parser and the top-level list share it)."""
    return COMMANDS[name][1]
EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


class _Parser(argparse.ArgumentParser):
    """argparse exits 2 on usage errors already; keep its message but drop the usage dump noise."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        sys.stderr.write(f"dpcheck: error: {message}\n")
        raise SystemExit(EXIT_ERROR)


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser: the command named in ``argv`` registered in full (every command when
    ``argv`` is None), the others by name and help only."""
    parser = _Parser(
        prog="dpcheck",
        description="Static analyzer for differentially private ML training code.",
    )
    parser.add_argument("--version", action="version", version=f"dpcheck {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    wanted = {COMMANDS[name][0] for name in (COMMANDS if argv is None else _command(argv))}
    for module_name in dict.fromkeys(module for module, _ in COMMANDS.values()):
        if module_name in wanted:
            importlib.import_module(f"dpcheck.cli.{module_name}").register(subparsers)
    for name, (module_name, text) in COMMANDS.items():
        if module_name not in wanted:
            subparsers.add_parser(name, help=text)
    for sub in _all_subparsers(parser):
        # after the sub-command too (`dpcheck scan --debug`); SUPPRESS keeps a --debug given
        # before it, which a default would overwrite
        sub.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                         help="show tracebacks on errors")
    return parser


def _command(argv: Sequence[str]) -> list[str]:
    """The command word of ``argv`` (the first argument that is not an option), if any."""
    words = [word for word in argv if not word.startswith("-")]
    return [words[0]] if words and words[0] in COMMANDS else []


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
    arguments = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(arguments)
    args = parser.parse_args(arguments)
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
