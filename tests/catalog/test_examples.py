"""Every catalog example, scanned by the real engine, reports exactly the rules it expects.

Each example becomes a small project in a temporary directory (``example.py`` plus its extra
files). Examples marked ``pending`` are skipped with a reason, never counted as passing.
"""

from __future__ import annotations

from pathlib import Path

import libcst
import pytest

from dpcheck.engine import ScanOptions, scan
from dpcheck.catalog import Example, Rule, load_catalog


def _cases() -> list[pytest.param]:
    cases = []
    for rule in load_catalog().rules:
        cases += [pytest.param(rule, e, id=f"{rule.id}-{i}") for i, e in enumerate(rule.examples)]
        if rule.minimal is not None:
            cases += [pytest.param(rule, rule.minimal.flagged, id=f"{rule.id}-minimal-flagged"),
                      pytest.param(rule, rule.minimal.use_instead, id=f"{rule.id}-minimal-use-instead")]
    return cases


def _write_project(root: Path, example: Example) -> None:
    for relative, text in example.project_files():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


@pytest.mark.parametrize(("rule", "example"), _cases())
def test_example_reports_exactly_its_expected_rules(
    tmp_path: Path, rule: Rule, example: Example
) -> None:
    if example.pending:
        pytest.skip(f"pending: {rule.id} detection not implemented yet ({example.name})")
    _write_project(tmp_path, example)
    result = scan(ScanOptions(paths=[tmp_path], use_cache=False, jobs=1))
    fired = {finding.rule for finding in result.findings}
    assert fired == set(example.expect), (example.name, [f.message for f in result.findings])
    # a minimal snippet's marked line is where the rule reports it
    if example.marked_lines():
        at = {(f.span.path, f.span.line) for f in result.findings if f.rule == rule.id}
        assert at == set(example.marked_lines())


def test_every_rule_has_a_minimal_pair() -> None:
    for rule in load_catalog().rules:
        assert rule.minimal is not None, rule.id
        assert rule.what and rule.what != rule.summary


@pytest.mark.parametrize("example", load_catalog().get("DP001").examples, ids=lambda e: e.name)
def test_unparsable_file_examples_really_are_unparsable_or_valid(example: Example) -> None:
    """Independent of the engine: DP001 examples fail libcst exactly when they expect DP001."""
    broken = []
    for path, text in example.project_files():
        if path.endswith(".py"):
            try:
                libcst.parse_module(text)
            except libcst.ParserSyntaxError:
                broken.append(path)
    assert bool(broken) == example.fires("DP001"), broken
