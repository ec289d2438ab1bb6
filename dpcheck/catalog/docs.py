"""Render catalog entries as Markdown pages, plain text and tables.

Pure string functions: the docs pages in ``docs/rules/``, ``dpcheck explain``, ``dpcheck rules``
and the SARIF help text are all produced here from the catalog, so none of them can drift from
the rule files. Page layout follows ruff's rule docs: what it does, why is this bad, a minimal
example (flagged line marked) with its "use instead", how to fix it, suppressing,
configuration, then the full example projects collapsed, and references. A rule with automatic
fixes gets an "Automatic fix" section after "How to fix it": per fix its title, safety and when it
is offered, each example that applies it as a diff of the file it edits, and each example it
must leave alone with the reason dpcheck gives.
"""

from __future__ import annotations

import difflib
import html
from collections.abc import Sequence
from typing import TYPE_CHECKING

from dpcheck.catalog.examples import EXAMPLE_MAIN_FILE, FLAGGED_MARKER

if TYPE_CHECKING:
    from dpcheck.catalog.rule import Catalog, Example, Fix, MinimalExample, Rule

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
    """The Markdown help of a rule (no title): what it does, why, the minimal example, the fix
    and references. SARIF's rule help; the page adds suppressing, configuration and the full
    example projects."""
    return "\n\n".join(_sections(rule, settings=False, full_examples=None)) + "\n"


def rule_page_markdown(rule: Rule) -> str:
    """The full documentation page of one rule, in ruff's shape (the full example projects
    collapsed at the end)."""
    return (
        f"{GENERATED_NOTE.format(source=rule.id + '.toml')}\n\n"
        + _explanation(rule, full_examples="collapsed")
    )


def rule_explain_markdown(rule: Rule, *, examples: bool = False, page_url: str | None = None) -> str:
    """What ``dpcheck explain`` renders for a terminal: the page without the full example
    projects unless ``examples`` (then shown open), with a pointer to them otherwise."""
    text = _explanation(rule, full_examples="open" if examples else None)
    if not examples and rule.examples:
        where = f" or {page_url}" if page_url else ""
        text += (
            f"\n{len(rule.examples)} full example projects: "
            f"`dpcheck explain {rule.id} --examples`{where}.\n"
        )
    return text


def _explanation(rule: Rule, *, full_examples: str | None) -> str:
    meta = f"**Severity:** {rule.severity.value}"
    if rule.tags:
        meta += " · **Tags:** " + ", ".join(f"`{t}`" for t in rule.tags)
    head = f"# {rule.id}: {rule.name}\n\n{meta}\n\n{rule.summary}"
    sections = _sections(rule, settings=True, full_examples=full_examples)
    return "\n\n".join([head, *sections]) + "\n"


def _sections(rule: Rule, *, settings: bool, full_examples: str | None) -> list[str]:
    """The page's sections: with ``settings`` the Suppressing and Configuration ones;
    ``full_examples`` is None (left out), "open" or "collapsed"."""
    parts = [f"## What it does\n\n{rule.what or rule.summary}", f"## Why is this bad?\n\n{rule.rationale}"]
    if rule.minimal is not None:
        parts.append("## Example\n\n" + _minimal_markdown(rule.minimal))
    parts.append(f"## How to fix it\n\n{rule.fix}")
    if rule.fixes:
        parts.append(_fixes_markdown(rule.fixes))
    if settings:
        parts += [_suppressing_markdown(rule), _configuration_markdown(rule)]
    if full_examples is not None:
        if rule.examples:
            blocks = [_example_markdown(rule, e, collapsed=full_examples == "collapsed")
                      for e in rule.examples]
            parts.append("## Full examples\n\n" + "\n\n".join(blocks))
    if rule.references:
        parts.append(
            "## References\n\n" + "\n".join(f"- [{r.title}]({r.url})" for r in rule.references)
        )
    return parts


def _minimal_markdown(minimal: MinimalExample) -> str:
    """The flagged snippet (its flagged line carries a ``# flagged`` comment) and the passing
    one; the passing side shows only the files it changes."""
    flagged = minimal.flagged.project_files()
    before = dict(flagged)
    changed = [(p, t) for p, t in minimal.use_instead.project_files() if before.get(p) != t]
    label = len(flagged) > 1 or changed[0][0] != EXAMPLE_MAIN_FILE
    return "\n\n".join([
        *_file_blocks(flagged, label),
        "Use instead:",
        *_file_blocks(changed, label),
    ])


def _fixes_markdown(fixes: Sequence[Fix]) -> str:
    """The "Automatic fix" section: how fixes are applied, then each fix with its examples."""
    lines = [
        "## Automatic fix",
        "",
        "`dpcheck scan --diff` shows the fix, `dpcheck scan --fix` applies it (an unsafe one only "
        "with `--unsafe-fixes`). A fix is applied only when dpcheck, re-analysing the project "
        "with the edit in memory, finds the finding gone and nothing as severe new; otherwise "
        "it says why not.",
    ]
    for fix in fixes:
        lines += ["", f"### {fix.title}", "", f"Fix `{fix.id}` · **Safety:** {fix.safety}", "",
                  fix.when]
        for example in fix.examples:
            if example.after is not None:
                lines += ["", f"{example.name}:", "",
                          _fenced(_example_diff(example.path, example.before, example.after),
                                  "diff")]
            else:
                lines += ["", f"Not applied — {example.name}. dpcheck says: “…{example.unfixed}…”"]
    return "\n".join(lines)


def _example_diff(path: str, before: str, after: str) -> str:
    """The unified diff of an example's edited file (as ``dpcheck scan --diff`` prints it)."""
    return "".join(difflib.unified_diff(before.splitlines(keepends=True),
                                        after.splitlines(keepends=True),
                                        fromfile=f"a/{path}", tofile=f"b/{path}"))


def _file_blocks(files: Sequence[tuple[str, str]], label: bool) -> list[str]:
    return [
        (f"`{path}`:\n\n" if label else "") + _fenced(text.strip("\n"), _language(path))
        for path, text in files
    ]


def _suppressing_markdown(rule: Rule) -> str:
    """How to silence the rule: inline on the flagged line when it is Python, else by file."""
    lines = ["## Suppressing", ""]
    marked = rule.minimal.flagged.marked_lines() if rule.minimal else ()
    files = dict(rule.minimal.flagged.project_files()) if rule.minimal else {}
    if marked and marked[0][0].endswith(".py"):
        path, number = marked[0]
        code = FLAGGED_MARKER.sub("", files[path].splitlines()[number - 1]).strip()
        comment = f"# dpcheck: ignore[{rule.id}] <why this is fine here>"
        lines += [
            "Put a comment on the line before the flagged one (or at the end of it), with the "
            "reason:",
            "",
            _fenced(f"{comment}\n{code}", "python"),
            "",
            f"The rule's name works too: `# dpcheck: ignore[{rule.name}]`.",
        ]
    else:
        where = f" (`{marked[0][0]}`)" if marked else ""
        lines += [
            f"This rule reports on dependency files{where}, where dpcheck reads no suppression "
            "comments: use `per-file-ignores` below.",
        ]
    lines += [
        "",
        "For whole files or folders: `per-file-ignores = { \"experiments/*\" = "
        f"[\"{rule.id}\"] }}` in `[tool.dpcheck]`; for one run: `--ignore {rule.id}`. A "
        "suppression comment that names no rule, has empty brackets or no brackets is reported "
        "as a warning (an error with `--strict`), and so is a `per-file-ignores` code that names "
        "no rule.",
    ]
    return "\n".join(lines)


def _configuration_markdown(rule: Rule) -> str:
    generic = (
        f"Severity `{rule.severity.value}`: with the default `fail-on = \"error\"` "
        + ("a finding fails the run." if rule.severity.value == "error"
           else f"a finding does not fail the run (`--fail-on {rule.severity.value}` makes it).")
        + f" `select` / `ignore` (and `--select` / `--ignore`) take `{rule.id}`, the name "
        f"`{rule.name}` or a prefix such as `{rule.id[:3]}`."
    )
    return "\n\n".join(["## Configuration", *([rule.configuration] if rule.configuration else []), generic])


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


def _example_markdown(rule: Rule, example: Example, *, collapsed: bool) -> str:
    verdict = "Flagged" if example.fires(rule.id) else "Passes"
    reported = ", ".join(f"`{rule_id}`" for rule_id in example.expect) or "nothing"
    status = f"A scan of this project reports: {reported}."
    if example.pending:
        status += " *(Detection pending: this example is not checked by the tests yet.)*"
    blocks = [
        f"`{path}`:\n\n{_fenced(text, _language(path))}" for path, text in example.project_files()
    ]
    if not collapsed:
        return "\n\n".join([f"### {verdict}: {example.name}", status, *blocks])
    summary = f"<summary>{verdict}: {html.escape(example.name)}</summary>"
    return "\n\n".join(["<details>", summary, status, *blocks, "</details>"])


def _language(path: str) -> str:
    suffix = path[path.rfind(".") :] if "." in path else ""
    return _FENCE_LANGUAGES.get(suffix, "text")


def _fenced(text: str, language: str) -> str:
    fence = "```"
    while fence in text:
        fence += "`"
    return f"{fence}{language}\n{text.rstrip()}\n{fence}"
