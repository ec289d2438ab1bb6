"""Render catalog entries as Markdown pages, plain text and tables.

Pure string functions: the docs pages in ``docs/rules/``, ``dpcheck explain``, ``dpcheck rules``
and the SARIF help text are all produced here from the catalog, so none of them can drift from
the rule files. Page layout follows ruff's rule docs (what it does / why / fix / examples).
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dpcheck.catalog.rule import Catalog, Example, Rule

INDEX_PAGE = "README.md"
GENERATED_NOTE = (
    "<!-- Generated from rules/{source} by `dpcheck explain --all --format md --output "
    "docs/rules`. Do not edit by hand. -->"
)
_FENCE_LANGUAGES = {
    ".py": "python",
    ".toml": "toml",
    ".cfg": "ini",
    ".yml": "yaml",
    ".yaml": "yaml",
}


def rule_help_markdown(rule: Rule) -> str:
    """The Markdown body of a rule's help: why, fix, examples and references (no title)."""
    parts = [
        f"## Why is this bad?\n\n{rule.rationale}",
        f"## How to fix it\n\n{rule.fix}",
        "## Examples\n\n" + "\n\n".join(_example_markdown(rule, e) for e in rule.examples),
    ]
    if rule.references:
        parts.append(
            "## References\n\n" + "\n".join(f"- [{r.title}]({r.url})" for r in rule.references)
        )
    return "\n\n".join(parts) + "\n"


def rule_page_markdown(rule: Rule) -> str:
    """The full documentation page of one rule."""
    meta = f"**Severity:** {rule.severity.value}"
    if rule.tags:
        meta += " · **Tags:** " + ", ".join(f"`{t}`" for t in rule.tags)
    return (
        f"{GENERATED_NOTE.format(source=rule.id + '.toml')}\n\n"
        f"# {rule.id}: {rule.name}\n\n{meta}\n\n"
        f"## What it does\n\n{rule.summary}\n\n{rule_help_markdown(rule)}"
    )


def index_markdown(catalog: Catalog) -> str:
    """The index page of ``docs/rules/``: one linked row per rule."""
    return (
        f"{GENERATED_NOTE.format(source='*.toml')}\n\n# dpcheck rules\n\n"
        f"{rules_table_markdown(catalog.rules, link=True)}\n"
    )


def render_pages(catalog: Catalog) -> dict[str, str]:
    """Every docs page, keyed by file name: one per rule plus the index."""
    pages = {f"{rule.id}.md": rule_page_markdown(rule) for rule in catalog.rules}
    pages[INDEX_PAGE] = index_markdown(catalog)
    return pages


def rules_table_markdown(rules: Sequence[Rule], *, link: bool = False) -> str:
    """A Markdown table of id, name, severity and summary (ids linked to their pages if asked)."""
    rows = ["| id | name | severity | summary |", "| --- | --- | --- | --- |"]
    for rule in rules:
        rule_id = f"[{rule.id}]({rule.id}.md)" if link else rule.id
        summary = rule.summary.replace("|", "\\|")
        rows.append(f"| {rule_id} | {rule.name} | {rule.severity.value} | {summary} |")
    return "\n".join(rows)


def rules_table_text(rules: Sequence[Rule]) -> str:
    """An aligned plain-text table of id, name, severity and summary."""
    header = ("ID", "NAME", "SEVERITY", "SUMMARY")
    rows = [header] + [(r.id, r.name, r.severity.value, r.summary) for r in rules]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(row[:3], widths)) + "  " + row[3]
        for row in rows
    )


def rule_text(rule: Rule) -> str:
    """A rule's full explanation as plain terminal text, examples included."""
    indent = "    "
    lines = [f"{rule.id} {rule.name} [{rule.severity.value}]", "", rule.summary, ""]
    for title, body in (("Why it matters", rule.rationale), ("How to fix it", rule.fix)):
        lines += [title, textwrap.indent(body, indent), ""]
    lines.append("Examples")
    for example in rule.examples:
        verdict = f"flagged ({', '.join(example.expect)})" if example.fires(rule.id) else "passes"
        if not example.fires(rule.id) and example.expect:
            verdict += f" (reports {', '.join(example.expect)})"
        pending = " [detection pending]" if example.pending else ""
        lines.append(f"  {verdict}: {example.name}{pending}")
        for path, text in example.project_files():
            lines.append(f"{indent}{path}:")
            lines += [f"{indent}  | {line}".rstrip() for line in text.splitlines()]
        lines.append("")
    if rule.references:
        lines.append("References")
        lines += [f"  - {r.title} <{r.url}>" for r in rule.references]
    return "\n".join(lines).rstrip() + "\n"


def _example_markdown(rule: Rule, example: Example) -> str:
    if example.fires(rule.id):
        heading = f"### Flagged: {example.name}"
    else:
        heading = f"### Passes: {example.name}"
    reported = ", ".join(f"`{rule_id}`" for rule_id in example.expect) or "nothing"
    status = f"A scan of this project reports: {reported}."
    if example.pending:
        status += " *(Detection pending: this example is not checked by the tests yet.)*"
    blocks = [
        f"`{path}`:\n\n{_fenced(text, _language(path))}" for path, text in example.project_files()
    ]
    return "\n\n".join([heading, status, *blocks])


def _language(path: str) -> str:
    suffix = path[path.rfind(".") :] if "." in path else ""
    return _FENCE_LANGUAGES.get(suffix, "text")


def _fenced(text: str, language: str) -> str:
    fence = "```"
    while fence in text:
        fence += "`"
    return f"{fence}{language}\n{text.rstrip()}\n{fence}"
