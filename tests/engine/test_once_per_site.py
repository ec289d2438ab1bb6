"""A fact at one site is reported once, however many entry points reach it; findings at one
site that say different things are all kept."""

from __future__ import annotations

from dpcheck import engine
from dpcheck.model import Finding, Severity, Span
from dpcheck.rules import once_per_site
from tests.fixture_projects import fixture_project


def test_two_entries_reaching_one_engine_call_report_each_fact_once() -> None:
    result = engine.scan(engine.ScanOptions(
        paths=[fixture_project("two_scripts_one_unpinned_engine_call")], use_cache=False, jobs=1))
    assert sorted(p.path for p in result.pipelines) == ["digits.py", "objects.py"]
    assert sorted((f.rule, f.span.path, f.span.line) for f in result.findings) == [
        ("DP101", "private_fit.py", 12), ("DP105", "requirements.txt", 3)]


def _finding(message: str, pipeline: str) -> Finding:
    return Finding("DP104", Severity.ERROR, Span("train.py", 7, 5), message, pipeline=pipeline)


def test_different_messages_at_one_site_are_kept_and_order_is_kept() -> None:
    low = _finding("noise multiplier 0.01 < ...", "a.py")
    lower = _finding("noise multiplier 0.001 < ...", "b.py")
    again = _finding("noise multiplier 0.01 < ...", "c.py")
    assert once_per_site([low, lower, again]) == [low, lower]
