"""A site fact (DP105, the unpinned library) is reported once however many entry points reach
its place; pipeline facts stay one per entry, and findings that say different things are all
kept."""

from __future__ import annotations

from dpcheck import engine
from dpcheck.model import Finding, Severity, Span
from dpcheck.rules import once_per_site
from tests.fixture_projects import fixture_project


def test_two_entries_reaching_one_engine_call_report_each_fact_once() -> None:
    result = engine.scan(engine.ScanOptions(
        paths=[fixture_project("two_scripts_one_unpinned_engine_call")], use_cache=False, jobs=1))
    assert sorted(p.path for p in result.pipelines) == ["digits.py", "objects.py"]
    assert sorted((f.rule, f.span.path, f.span.line, f.pipeline) for f in result.findings) == [
        ("DP101", "private_fit.py", 12, "digits.py"), ("DP101", "private_fit.py", 12, "objects.py"),
        ("DP105", "requirements.txt", 3, "digits.py")]


def _finding(rule: str, message: str, pipeline: str) -> Finding:
    return Finding(rule, Severity.WARNING, Span("train.py", 7, 5), message, pipeline=pipeline)


def test_only_site_facts_are_merged_and_different_messages_are_kept() -> None:
    unpinned = _finding("DP105", "opacus is not pinned ...", "a.py")
    other = _finding("DP105", "opacus is required without a version ...", "b.py")
    again = _finding("DP105", "opacus is not pinned ...", "c.py")
    per_entry = [_finding("DP102", "batch sampling: shuffled ...", entry) for entry in ("a.py", "b.py")]
    assert once_per_site([unpinned, other, again, *per_entry]) == [unpinned, other, *per_entry]
