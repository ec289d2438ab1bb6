"""The Markdown pages: the committed docs/rules/ must equal what the catalog generates."""

from __future__ import annotations

from pathlib import Path

from dataclasses import replace

from dpcheck.catalog import Example, MinimalExample, Reference, Rule, load_catalog
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
        what="What.",
        rationale="Why.",
        fix="How.",
        configuration="Set `x`.",
        references=(Reference("Spec", "https://example.org"),),
        examples=(
            Example(name="fires", code=code, expect=("DP900",), pending=True),
            Example(name="other rule", code="pass\n", expect=("DP901",)),
        ),
        minimal=MinimalExample(
            Example("minimal", "import x\ny = x / n  # flagged: divides\n", ("DP900",),
                    files=(("requirements.txt", "x==1\n"),)),
            Example("use instead", "import x\ny = x / 2\n", ()),
        ),
    )


def test_code_containing_a_fence_gets_a_longer_fence() -> None:
    page = rule_page_markdown(_rule('doc = """\n```python\nx\n```\n"""\n'))
    assert '````python\ndoc = """\n```python\nx\n```\n"""\n````' in page


def test_page_sections_in_ruffs_shape() -> None:
    rule = _rule("x = 1\n")
    page = rule_page_markdown(rule)
    headings = [line for line in page.splitlines() if line.startswith("#") and not line.startswith("# dpcheck")]
    assert headings == [
        "# DP900: demo-rule",
        "## What it does",
        "## Why is this bad?",
        "## Example",
        "## How to fix it",
        "## Suppressing",
        "## Configuration",
        "## Full examples",
        "## References",
    ]
    example = page[page.index("## Example"):page.index("## How to fix it")]
    # flagged snippet with its marked line and every file; use-instead with the changed file only
    assert example.index("y = x / n  # flagged: divides") < example.index("Use instead:")
    assert "`requirements.txt`:" in example and example.count("x==1") == 1
    assert example.index("Use instead:") < example.index("y = x / 2")
    suppressing = page[page.index("## Suppressing"):page.index("## Configuration")]
    assert "# dpcheck: ignore[DP900] <why this is fine here>\ny = x / n\n" in suppressing
    assert "`# dpcheck: ignore[demo-rule]`" in suppressing
    assert "Set `x`." in page[page.index("## Configuration"):]
    full = page[page.index("## Full examples"):page.index("## References")]
    assert full.count("<details>") == 2 and full.count("</details>") == 2
    assert "<summary>Flagged: fires</summary>" in full and "<summary>Passes: other rule</summary>" in full
    assert "reports: `DP900`. *(Detection pending" in page
    assert "reports: `DP901`." in page
    assert not rule.help_text.startswith("#  ") and "# DP900" not in rule.help_text
    assert "## Example" in rule.help_text and "<details>" not in rule.help_text


def test_suppressing_a_rule_reported_on_a_dependency_file() -> None:
    rule = _rule("x = 1\n")
    minimal = MinimalExample(
        Example("m", "import x\n", ("DP900",), files=(("requirements.txt", "x  # flagged\n"),)),
        Example("u", "import x\n", (), files=(("requirements.txt", "x==1\n"),)),
    )
    page = rule_page_markdown(replace(rule, minimal=minimal))
    suppressing = page[page.index("## Suppressing"):page.index("## Configuration")]
    assert "dependency files (`requirements.txt`)" in suppressing and "ignore[" not in suppressing


def test_table_escapes_pipes_in_summaries() -> None:
    table = rules_table_markdown([_rule("x = 1\n")], link=True)
    assert table.splitlines()[2] == "| [DP900](DP900.md) | demo-rule | info | Flags a \\| b. |"


def test_pages_show_each_fix_with_its_before_and_after() -> None:
    """A rule page lists each automatic fix (title, safety, when) and shows every applied
    example as the diff of the file it edits, every left-alone one with dpcheck's reason."""
    pages = render_pages(load_catalog())
    fixed_rules = [rule for rule in load_catalog().rules if rule.fixes]
    assert {rule.id for rule in fixed_rules} >= {"DP101", "DP102", "DP103", "DP105"}
    for rule in fixed_rules:
        page = pages[f"{rule.id}.md"]
        assert "## Automatic fix" in page
        for fix in rule.fixes:
            assert f"### {fix.title}" in page and f"**Safety:** {fix.safety}" in page
            for example in fix.examples:
                if example.after is None:
                    assert f"“…{example.unfixed}…”" in page
                    continue
                old = set(example.before.splitlines())
                new = set(example.after.splitlines())
                assert f"--- a/{example.path}\n+++ b/{example.path}\n" in page
                for line in old - new:
                    assert f"\n-{line}\n" in page
                for line in new - old:
                    assert f"\n+{line}\n" in page
