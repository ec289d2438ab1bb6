"""`dpcheck rules` (the catalog as a table) and `dpcheck explain` (one rule in full, or docs).

Both read the packaged rule catalog; `explain --all --format md --output DIR` writes the
``docs/rules/`` pages that a test keeps equal to the catalog. `explain RULE` shows the rule's
page rendered for the terminal (paged when taller than the window); the full example projects
only with ``--examples``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from dpcheck.cli import command_help
from dpcheck.catalog import Rule, load_catalog
from dpcheck.catalog.docs import (
    render_pages,
    rule_explain_markdown,
    rule_page_markdown,
    rules_table_markdown,
    rules_table_text,
)
from dpcheck.errors import DpcheckError
from dpcheck.report.meta import DEFAULT_DOCS_URL, rule_page_url


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the `rules` and `explain` sub-commands."""
    rules = subparsers.add_parser("rules", help=command_help("rules"))
    rules.add_argument("--format", choices=("text", "json", "md"), default="text")
    rules.set_defaults(func=run_rules)

    explain = subparsers.add_parser(
        "explain", help=command_help("explain")
    )
    explain.add_argument("rule", nargs="?", metavar="RULE", help="rule id or name, e.g. DP101")
    explain.add_argument("--all", action="store_true", help="every rule of the catalog")
    explain.add_argument("--examples", action="store_true",
                         help="text: also show the full example projects (the page has them)")
    explain.add_argument("--format", choices=("text", "json", "md"), default="text")
    explain.add_argument(
        "--output",
        type=Path,
        metavar="DIR",
        help="with --format md: write one page per rule (and, with --all, the index) into DIR",
    )
    explain.set_defaults(func=run_explain)


def run_rules(args: argparse.Namespace) -> int:
    """Print the catalog as a table."""
    rules = load_catalog().rules
    if args.format == "json":
        text = json.dumps([_row(r) for r in rules], indent=2) + "\n"
    elif args.format == "md":
        text = rules_table_markdown(rules) + "\n"
    else:
        text = rules_table_text(rules) + "\n"
    sys.stdout.write(text)
    return 0


def run_explain(args: argparse.Namespace) -> int:
    """Print (or, with --output, write) the full explanation of the chosen rules."""
    if args.all == bool(args.rule):
        raise DpcheckError("explain: give either a RULE or --all")
    catalog = load_catalog()
    rules = catalog.rules if args.all else (catalog.get(args.rule),)
    if args.output is not None:
        if args.format != "md":
            raise DpcheckError("explain: --output writes Markdown pages; use it with --format md")
        if args.all:
            pages = render_pages(catalog)
        else:
            pages = {f"{rules[0].id}.md": rule_page_markdown(rules[0])}
        _write_pages(args.output, pages)
        return 0
    if args.format == "text":
        from dpcheck.cli.terminal import show_markdown  # rich loads only for explain

        show_markdown("\n".join(
            rule_explain_markdown(r, examples=args.examples, page_url=rule_page_url(r, DEFAULT_DOCS_URL))
            for r in rules
        ))
        return 0
    sys.stdout.write(_render(rules, args.format, many=args.all))
    return 0


def _row(rule: Rule) -> dict[str, object]:
    """A rule's line in `dpcheck rules --format json`."""
    return {
        "id": rule.id,
        "name": rule.name,
        "severity": rule.severity.value,
        "summary": rule.summary,
        "tags": list(rule.tags),
    }


def _render(rules: tuple[Rule, ...], fmt: str, *, many: bool) -> str:
    if fmt == "json":
        data = [r.to_json() for r in rules] if many else rules[0].to_json()
        return json.dumps(data, indent=2) + "\n"
    return "\n".join(rule_page_markdown(r) for r in rules)


def _write_pages(directory: Path, pages: dict[str, str]) -> None:
    try:
        directory.mkdir(parents=True, exist_ok=True)
        for name, text in sorted(pages.items()):
            (directory / name).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise DpcheckError(f"explain: cannot write pages to {directory}: {exc}") from exc
    sys.stderr.write(f"wrote {len(pages)} page(s) to {directory}\n")
