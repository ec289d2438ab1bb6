"""Named files as pre-commit passes them: a dependency file alone reports what cites it."""

from __future__ import annotations

from pathlib import Path

from tests.gate.conftest import DP101_FILE, ScanJson, copy_fixture, edit, rules_at


def test_a_named_requirements_file_reports_the_findings_citing_its_pin(gate_repo: Path, scan_json: ScanJson) -> None:
    code, report, _ = scan_json(str(gate_repo / "asgm" / "requirements.txt"))
    assert code == 1 and rules_at(report) == [("DP101", DP101_FILE)]
    [finding] = report["findings"]
    assert ("asgm/requirements.txt", 3) in {(e["path"], e["line"]) for e in finding["evidence"]}
    assert [p["path"] for p in report["pipelines"]] == [DP101_FILE]
    assert report["files_scanned"] == 1


def test_a_requirements_file_no_finding_cites_reports_nothing(gate_repo: Path, scan_json: ScanJson) -> None:
    code, report, _ = scan_json(str(gate_repo / "cifar" / "requirements.txt"))
    assert code == 0 and report["findings"] == []
    assert [p["path"] for p in report["pipelines"]] == ["cifar/train.py"]  # its pin is evidence


def test_an_unpinned_line_is_reported_on_the_requirements_file(tmp_path: Path, scan_json: ScanJson) -> None:
    copy_fixture("opacus_unpinned", tmp_path / "proj")
    code, report, _ = scan_json("--fail-on", "warning", str(tmp_path / "proj" / "requirements.txt"))
    assert code == 1
    assert [(f["rule"], f["path"], f["line"]) for f in report["findings"]] == [
        ("DP105", "requirements.txt", 3), ("DP101", "train.py", 22)]


def test_python_and_dependency_files_together(gate_repo: Path, scan_json: ScanJson) -> None:
    edit(gate_repo / "cifar" / "train.py", "LR = 1e-3", "LR = 1e-2")
    code, report, _ = scan_json(str(gate_repo / "cifar" / "train.py"), str(gate_repo / "asgm" / "requirements.txt"))
    assert code == 1 and rules_at(report) == [("DP101", DP101_FILE)]
    assert report["files_scanned"] == 2


def test_a_broken_file_elsewhere_is_not_reported_for_a_named_requirements_file(
    gate_repo: Path, scan_json: ScanJson
) -> None:
    (gate_repo / "asgm" / "broken.py").write_text("def f(:\n")
    _, whole, _ = scan_json(str(gate_repo))
    assert ("DP001", "asgm/broken.py") in rules_at(whole)
    _, report, _ = scan_json(str(gate_repo / "asgm" / "requirements.txt"))
    assert rules_at(report) == [("DP101", DP101_FILE)]
