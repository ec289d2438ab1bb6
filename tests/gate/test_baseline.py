"""``dpcheck baseline write`` and ``dpcheck scan --baseline`` on real projects and files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dpcheck.cli import main
from tests.gate.conftest import ADD_SHUFFLE, DP101_FILE, DP101_LINE, ScanJson, edit, rules_at


def _write(capsys: pytest.CaptureFixture[str], baseline: Path, *paths: str) -> str:
    assert main(["baseline", "write", "--no-cache", str(baseline), *paths]) == 0
    return capsys.readouterr().err


def test_written_baseline_lists_the_scan_fingerprints_without_lines(
    gate_repo: Path, scan_json: ScanJson, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    _, report, _ = scan_json(str(gate_repo))
    baseline = tmp_path / "baseline.json"
    assert "wrote 1 finding" in _write(capsys, baseline, str(gate_repo))
    data = json.loads(baseline.read_text())
    assert data["dpcheck-baseline"] == 1
    assert [(e["fingerprint"], e["rule"], e["path"], e["message"]) for e in data["findings"]] == [
        (f["fingerprint"], f["rule"], f["path"], f["message"]) for f in report["findings"]
    ]
    assert "line" not in json.dumps(data["findings"])


def test_baselined_findings_are_dropped_and_counted_new_ones_reported(
    gate_repo: Path, scan_json: ScanJson, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    baseline = tmp_path / "baseline.json"
    _write(capsys, baseline, str(gate_repo))
    code, report, err = scan_json("--baseline", str(baseline), str(gate_repo))
    assert code == 0 and report["findings"] == []
    assert f"1 finding accepted in {baseline}" in err

    edit(gate_repo / "cifar" / "train.py", *ADD_SHUFFLE)
    code, report, _ = scan_json("--baseline", str(baseline), str(gate_repo))
    assert code == 1 and rules_at(report) == [("DP102", "cifar/train.py")]


def test_line_shifts_and_edits_elsewhere_keep_findings_accepted(
    gate_repo: Path, scan_json: ScanJson, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    baseline = tmp_path / "baseline.json"
    _write(capsys, baseline, str(gate_repo))
    train = gate_repo / DP101_FILE
    shifted = train.read_text().replace("import torch\n", "import torch\nimport os\nimport sys\n\n\n")
    train.write_text(shifted.replace("criterion", "loss_fn"))
    _, plain, _ = scan_json(str(gate_repo))
    assert [f["line"] for f in plain["findings"]] == [DP101_LINE + 4]
    code, report, _ = scan_json("--baseline", str(baseline), str(gate_repo))
    assert code == 0 and report["findings"] == []


def test_changing_the_anchor_line_un_baselines(
    gate_repo: Path, scan_json: ScanJson, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    baseline = tmp_path / "baseline.json"
    _write(capsys, baseline, str(gate_repo))
    train = gate_repo / DP101_FILE
    train.write_text(train.read_text().replace("engine", "dp_engine"))
    code, report, _ = scan_json("--baseline", str(baseline), str(gate_repo))
    assert code == 1 and rules_at(report) == [("DP101", DP101_FILE)]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "baseline file not found"),
        ("{not json", "invalid JSON"),
        ('{"findings": []}', "no `dpcheck-baseline` format version"),
        ('{"dpcheck-baseline": 99, "findings": []}', "unsupported baseline format version 99"),
        ('{"dpcheck-baseline": 1, "findings": {}}', "`findings` must be a list"),
        ('{"dpcheck-baseline": 1, "findings": [{"rule": "DP101"}]}', "findings[0] must be an object with a `fingerprint`"),
        ('{"dpcheck-baseline": 1, "findings": [{"fingerprint": "ab", "path": 3}]}', "findings[0].path must be a string"),
    ],
)
def test_bad_baseline_is_a_clear_error_before_scanning(
    gate_repo: Path, scan_json: ScanJson, tmp_path: Path, content: str | None, message: str
) -> None:
    baseline = tmp_path / "bad.json"
    if content is not None:
        baseline.write_text(content)
    code, report, err = scan_json("--baseline", str(baseline), str(gate_repo))
    assert code == 2 and report == {}
    assert str(baseline) in err and message in err and "Traceback" not in err


def test_baseline_combines_with_new_since(
    gate_repo: Path, scan_json: ScanJson, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    edit(gate_repo / "cifar" / "train.py", *ADD_SHUFFLE)
    baseline = tmp_path / "baseline.json"
    _write(capsys, baseline, str(gate_repo / "cifar"))
    code, report, err = scan_json("--new-since", "HEAD", "--baseline", str(baseline), str(gate_repo))
    assert code == 0 and report["findings"] == []
    assert "1 finding also present at HEAD" in err and "1 finding accepted" in err


def test_baseline_write_to_an_unwritable_place_exits_two(
    gate_repo: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    target = tmp_path / "missing-dir" / "baseline.json"
    assert main(["baseline", "write", "--no-cache", str(target), str(gate_repo)]) == 2
    err = capsys.readouterr().err
    assert str(target) in err and "cannot write baseline" in err
