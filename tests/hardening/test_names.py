"""File names need not be UTF-8 (``bad\\xff.py`` is legal on Linux and in git): such a file is
scanned like any other, its name is escaped wherever it is printed, and baselines still match.

Names with control characters cannot forge report lines or drive the terminal either."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.hardening.conftest import Cli, assert_valid_report, commit_all, copy_fixture

BAD = os.fsdecode(b"bad\xff.py")
"""The name as Python holds it: the byte 0xff kept as the lone surrogate U+DCFF (PEP 383)."""
SHOWN = "bad\\xff.py"
BROKEN_SOURCE = "import torch\n\nx = (\n"  # DP001 at 3:5, a finding anchored in the odd file


@pytest.fixture(params=["git", "walk"])
def project(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """The ASGM fixture (DP101) with ``bad\\xff.py`` beside it, in git or a plain folder."""
    root = copy_fixture("torch_loop_asgm_len_batch", tmp_path / "project")
    (root / BAD).write_text(BROKEN_SOURCE, encoding="utf-8")
    if request.param == "git":
        commit_all(root)
    return root


def test_text_report_prints_the_name_escaped(project: Path, cli: Cli) -> None:
    code, out, err = cli("scan", "--no-cache", project)
    assert code == 1  # the DP101 error: the odd name changes nothing else
    assert f"{SHOWN}:3:5: DP001 [warning] cannot analyse {SHOWN}: syntax error" in out
    assert "  3 | x = (" in out  # the frame is read from the file all the same
    (out + err).encode("utf-8")


def test_json_report_is_valid_utf8_and_matches_its_schema(project: Path, cli: Cli) -> None:
    _, out, _ = cli("scan", "--no-cache", "--format", "json", project)
    report = assert_valid_report(out)
    dp001 = next(f for f in report["findings"] if f["rule"] == "DP001")
    assert dp001["path"] == SHOWN and SHOWN in dp001["message"]
    assert report["files_scanned"] == 2


def test_sarif_uri_percent_encodes_the_names_bytes(project: Path, cli: Cli) -> None:
    _, out, _ = cli("scan", "--no-cache", "--format", "sarif", project)
    out.encode("utf-8")
    sarif = json.loads(out)
    uris = {
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        for r in sarif["runs"][0]["results"]
    }
    assert uris == {"bad%FF.py", "dpsgd.py"}  # RFC 3986: the byte 0xff as %FF


def test_github_annotation_names_the_file_escaped(project: Path, cli: Cli) -> None:
    _, out, _ = cli("scan", "--no-cache", "--format", "github", project)
    out.encode("utf-8")
    assert f"::warning file={SHOWN},line=3,col=5,title=DP001 [warning] unparsable-file::" in out


def test_baseline_round_trips_a_finding_in_a_non_utf8_file(
    project: Path, cli: Cli, tmp_path: Path
) -> None:
    baseline = tmp_path / "baseline.json"
    assert cli("baseline", "write", "--no-cache", baseline, project)[0] == 0
    written = json.loads(baseline.read_text("utf-8"))  # strict UTF-8 on disk
    assert SHOWN in {entry["path"] for entry in written["findings"]}
    code, out, err = cli("scan", "--no-cache", "--baseline", baseline, project)
    assert code == 0 and "No findings" in out and "2 findings accepted" in err


def test_control_characters_in_names_cannot_forge_lines(tmp_path: Path, cli: Cli) -> None:
    root = tmp_path / "project"
    root.mkdir()
    forged = "x\n::error file=forged.py::pwned\x1b[2J.py"
    (root / forged).write_text(BROKEN_SOURCE, encoding="utf-8")
    for fmt in ("text", "github"):
        code, out, err = cli("scan", "--no-cache", "--format", fmt, root)
        assert code == 0 and "\x1b" not in out + err
        assert not any(line.startswith("::error file=forged.py") for line in out.splitlines())
        assert "x\\x0a::error file=forged.py::pwned\\x1b[2J.py" in out.replace("%3A", ":").replace(
            "%2C", ","
        )
    report = assert_valid_report(cli("scan", "--no-cache", "--format", "json", root)[1])
    assert report["findings"][0]["path"] == forged  # JSON escapes control characters itself
