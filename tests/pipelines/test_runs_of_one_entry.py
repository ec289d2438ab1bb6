"""Every private run an entry reaches forms its own pipeline: each Opacus engine site and the
project's own noisy update, each read from the definitions that reach it and without the code
that holds only another run."""

from __future__ import annotations

import shutil
from pathlib import Path

from dpcheck.engine import ScanOptions, scan
from dpcheck.model import Severity
from tests.fixture_projects import FIXTURES, fixture_project


def _scan(name: str):  # type: ignore[no-untyped-def]
    return scan(ScanOptions(paths=(fixture_project(name),), use_cache=False, jobs=1))


def test_a_second_engine_site_after_rebinding_forms_its_own_pipeline() -> None:
    result = _scan("two_engine_sites_one_script_feasgm")
    runs = {p.line: p for p in result.pipelines}
    assert sorted(runs) == [30, 40]
    assert {line: (p.mechanism, p.sampling, p.params["batch_size"].value, p.params["N"].value)
            for line, p in runs.items()} == {30: ("FEASGM", "poisson", 64, 60000),
                                             40: ("FEASGM", "poisson", 256, 60000)}
    assert runs[30].params["sigma"].value == 1.1 and "sigma" not in runs[40].params
    assert len({p.entry for p in result.pipelines}) == 2
    assert sorted((f.rule, f.span.line, f.severity) for f in result.findings) == [
        ("DP101", 30, Severity.INFO), ("DP101", 40, Severity.INFO)]


def test_an_engine_run_and_a_handwritten_run_of_one_main_both_form() -> None:
    result = _scan("engine_run_and_handwritten_run_one_main")
    by_mechanism = {p.mechanism: p for p in result.pipelines}
    assert sorted(by_mechanism) == ["FEASGM", "fixed-mean"]
    engine, by_hand = by_mechanism["FEASGM"], by_mechanism["fixed-mean"]
    assert (engine.sampling, engine.accountant.name) == ("poisson", "opacus-prv")
    assert (by_hand.sampling, by_hand.accountant.name) == ("shuffle", "opacus-rdp")
    assert by_hand.params["N"].value == 60000 and by_hand.params["sigma"].value == 1.2
    assert sorted((f.rule, f.span.line) for f in result.findings) == [("DP101", 30), ("DP102", 53)]


def test_an_unpinned_library_is_reported_once_for_the_runs_of_a_file(tmp_path: Path) -> None:
    project = tmp_path / "project"
    shutil.copytree(FIXTURES / "two_engine_sites_one_script_feasgm", project,
                    ignore=shutil.ignore_patterns("expected.json", "requirements.txt"))
    result = scan(ScanOptions(paths=(project,), use_cache=False, jobs=1))
    assert len(result.pipelines) == 2
    assert sorted((f.rule, f.span.line) for f in result.findings) == [
        ("DP101", 30), ("DP101", 40), ("DP105", 30)]
