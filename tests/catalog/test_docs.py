"""The Markdown pages: the committed docs/rules/ must equal what the catalog generates."""

from __future__ import annotations

from pathlib import Path

from dpcheck.catalog import Example, Reference, Rule, load_catalog
from dpcheck.catalog.docs import render_pages, rule_page_markdown, rules_table_markdown
from dpcheck.model import Severity

DOCS = Path(__file__).resolve().parents[2] / "docs" / "rules"
REGENERATE = "dpcheck explain --all --format md --output docs/rules"


def test_committed_rule_pages_are_up_to_date() -> None:
    expected = render_pages(load_catalog())
    committed = {p.name: p.read_text(encoding="utf-8") for p in DOCS.glob("*.md")}
    assert sorted(committed) == sorted(expected), f"stale or missing pages: run `{REGENERATE}`"
    for name, text in expected.items():
        assert committed[name] == text, f"{name} is out of date: run `{REGENERATE}`"


def test_pages_carry_every_example_file_and_reference_verbatim() -> None:
    for rule in load_catalog().rules:
        page = render_pages(load_catalog())[f"{rule.id}.md"]
        for example in rule.examples:
            for _, text in example.project_files():
                assert text.rstrip() in page
        for reference in rule.references:
            assert f"[{reference.title}]({reference.url})" in page


def _rule(code: str, summary: str = "Flags a | b.") -> Rule:
    return Rule(
        id="DP900",
        name="demo-rule",
        severity=Severity.INFO,
        summary=summary,
        rationale="Why.",
        fix="How.",
        references=(Reference("Spec", "https://example.org"),),
        examples=(
            Example(name="fires", code=code, expect=("DP900",), pending=True),
            Example(name="other rule", code="pass\n", expect=("DP901",)),
        ),
    )


def test_code_containing_a_fence_gets_a_longer_fence() -> None:
    page = rule_page_markdown(_rule('doc = """\n```python\nx\n```\n"""\n'))
    assert '````python\ndoc = """\n```python\nx\n```\n"""\n````' in page


def test_page_sections_and_example_verdicts() -> None:
    rule = _rule("x = 1\n")
    page = rule_page_markdown(rule)
    headings = [line for line in page.splitlines() if line.startswith("#")]
    assert headings == [
        "# DP900: demo-rule",
        "## What it does",
        "## Why is this bad?",
        "## How to fix it",
        "## Examples",
        "### Flagged: fires",
        "### Passes: other rule",
        "## References",
    ]
    assert "reports: `DP900`. *(Detection pending" in page
    assert "reports: `DP901`." in page
    assert not rule.help_text.startswith("#  ") and "# DP900" not in rule.help_text
    assert rule.help_text in page


def test_table_escapes_pipes_in_summaries() -> None:
    table = rules_table_markdown([_rule("x = 1\n")], link=True)
    assert table.splitlines()[2] == "| [DP900](DP900.md) | demo-rule | info | Flags a \\| b. |"
