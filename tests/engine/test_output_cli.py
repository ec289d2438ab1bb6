"""What people read from ``dpcheck scan``, end to end on the fixtures: output formats and their
configuration, paths from the current folder, warnings that never stay quiet, and the smaller
items of the output (overrides as evidence, binary files, counts, --debug anywhere)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dpcheck.cli import main

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "fixtures"
FINDING_LINE = re.compile(r"^(?P<path>\S+):(?P<line>\d+):(?P<col>\d+): (?P<rule>DP\d{3}) \[(?P<sev>error|warning|info)\] ")


def _project(tmp_path: Path, fixture: str) -> Path:
    root = tmp_path / fixture
    shutil.copytree(FIXTURES / fixture, root, ignore=shutil.ignore_patterns("expected.json"))
    return root


def _scan(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["scan", "--no-cache", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _expected(fixture: str) -> list[tuple[str, str, int]]:
    data = json.loads((FIXTURES / fixture / "expected.json").read_text())
    return sorted((f["path"], f["rule"], f["line"]) for f in data["findings"])


def test_concise_is_one_line_per_finding_with_its_severity(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _project(tmp_path, "opacus_range_spanning_eras")
    code, out, _ = _scan(capsys, "--output-format", "concise", str(root))
    *lines, summary = out.splitlines()
    parsed = [FINDING_LINE.match(line) for line in lines]
    assert all(parsed) and summary.startswith("Found ")
    found = sorted((Path(m["path"]).relative_to(root).as_posix(), m["rule"], int(m["line"])) for m in parsed)  # type: ignore[index]
    assert found == _expected("opacus_range_spanning_eras")
    assert code == 1 or all(m["sev"] != "error" for m in parsed)  # type: ignore[index]


def test_every_text_style_has_the_severity_and_full_is_the_default(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _project(tmp_path, "torch_loop_asgm_len_batch")
    _, default, _ = _scan(capsys, str(root))
    _, text, _ = _scan(capsys, "--format", "text", str(root))
    _, full, _ = _scan(capsys, "--output-format", "full", str(root))
    assert default == text == full
    assert " | " in full and "  = evidence: " in full and "  = bound: " in full
    headers = [line for line in full.splitlines() if FINDING_LINE.match(line)]
    assert len(headers) == 1 and "DP101 [error] " in headers[0]


def test_show_evidence_lists_evidence_and_bound_under_concise_lines(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _project(tmp_path, "torch_loop_asgm_len_batch")
    _, full, _ = _scan(capsys, str(root))
    _, concise, _ = _scan(capsys, "--output-format", "concise", "--show-evidence", str(root))
    details = [line for line in full.splitlines() if line.startswith("  = ")]
    assert [line for line in concise.splitlines() if line.startswith("  = ")] == details
    assert " | " not in concise and "Pipelines:" not in concise


def test_project_config_chooses_the_style_and_the_command_line_wins(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _project(tmp_path, "torch_loop_asgm_len_batch")
    (root / "pyproject.toml").write_text('[tool.dpcheck]\noutput-format = "concise"\n')
    _, configured, _ = _scan(capsys, str(root))
    _, text, _ = _scan(capsys, "--format", "text", str(root))
    _, full, _ = _scan(capsys, "--output-format", "full", str(root))
    _, as_json, _ = _scan(capsys, "--format", "json", str(root))
    assert configured == text and len(configured.splitlines()) == 2
    assert " | " in full
    assert json.loads(as_json)["findings"][0]["rule"] == "DP101"
    code, out, err = _scan(capsys, "--format", "json", "--output-format", "concise", str(root))
    assert code == 2 and out == "" and "--format json and --output-format concise" in err
    (root / "pyproject.toml").write_text('[tool.dpcheck]\noutput-format = "short"\n')
    code, _, err = _scan(capsys, str(root))
    assert code == 2 and "`output-format` must be one of full, concise, json, sarif, github" in err


def test_text_paths_open_from_the_current_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    root = _project(tmp_path / "work", "torch_loop_asgm_len_batch")
    monkeypatch.chdir(tmp_path)
    _, out, _ = _scan(capsys, "--output-format", "concise", "--show-evidence", str(root))
    location = FINDING_LINE.match(out.splitlines()[0])
    assert location is not None
    # the printed path opens from here, and names the right file, at the right line
    shown = Path(location["path"])
    assert not shown.is_absolute() and shown == Path("work/torch_loop_asgm_len_batch/dpsgd.py")
    line = shown.read_text().splitlines()[int(location["line"]) - 1]
    assert "/ len(xb)" in line
    evidence = [line for line in out.splitlines() if line.startswith("  = evidence: ")]
    assert evidence and all(e.startswith("  = evidence: work/torch_loop_asgm_len_batch/dpsgd.py:") for e in evidence)
    # JSON gives both: repository-relative `path` and `display_path` from here
    _, as_json, _ = _scan(capsys, "--format", "json", str(root))
    finding = json.loads(as_json)["findings"][0]
    assert (finding["path"], finding["display_path"]) == ("dpsgd.py", str(shown))
    # SARIF stays repository-relative
    _, sarif, _ = _scan(capsys, "--format", "sarif", str(root))
    location = json.loads(sarif)["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"uri": "dpsgd.py", "uriBaseId": "%SRCROOT%"}
    monkeypatch.chdir(tmp_path / "work" / "torch_loop_asgm_len_batch")
    _, here, _ = _scan(capsys, "--output-format", "concise")
    assert here.startswith("dpsgd.py:49:")


def test_sarif_links_every_rule_to_its_page_under_the_docs_url(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _project(tmp_path, "torch_loop_asgm_len_batch")
    (root / "pyproject.toml").write_text('[tool.dpcheck]\ndocs-url = "https://docs.example.org/dpcheck/rules/"\n')
    _, sarif, _ = _scan(capsys, "--format", "sarif", str(root))
    driver = json.loads(sarif)["runs"][0]["tool"]["driver"]
    assert driver["informationUri"] == "https://docs.example.org/dpcheck/rules/README.md"
    assert [r["helpUri"] for r in driver["rules"]] == [
        f"https://docs.example.org/dpcheck/rules/{r['id']}.md" for r in driver["rules"]
    ]
    _, github, _ = _scan(capsys, "--format", "github", "--docs-url", "https://x.example/r", str(root))
    assert github.rstrip().endswith("%0Arule: https://x.example/r/DP101.md")
    code, _, err = _scan(capsys, "--docs-url", "docs/rules", str(root))
    assert code == 2 and "--docs-url: `docs-url` must be an absolute http(s) URL" in err


def test_committed_rule_pages_are_what_the_default_links_point_at() -> None:
    from dpcheck.report.meta import DEFAULT_DOCS_URL

    assert DEFAULT_DOCS_URL.endswith("/docs/rules")
    assert (REPO / "docs" / "rules" / "README.md").is_file()


def test_nothing_scanned_is_a_warning_not_a_clean_bill(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "notes.txt").write_text("no code here\n")
    code, out, err = _scan(capsys, str(tmp_path))
    assert code == 0 and out.strip() == "No findings in 0 files."
    assert f"dpcheck: warning: nothing was scanned: no Python file found in {tmp_path}" in err
    _, as_json, _ = _scan(capsys, "--format", "json", str(tmp_path))
    assert json.loads(as_json)["warnings"] == [f"nothing was scanned: no Python file found in {tmp_path}"]
    (tmp_path / "a.py").write_text("x = 1\n")
    _, _, err = _scan(capsys, str(tmp_path))
    assert "warning" not in err


def test_suppression_mistakes_warn_by_default_and_fail_with_strict(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _project(tmp_path, "torch_loop_asgm_len_batch")
    source = root / "dpsgd.py"
    lines = source.read_text().splitlines(keepends=True)
    lines[48] = lines[48].rstrip("\n") + "  # dpcheck: ignore DP101 audited\n"
    lines[47] = lines[47].rstrip("\n") + "  # dpcheck: ignore[DP999]\n"
    source.write_text("".join(lines))
    code, out, _ = _scan(capsys, "--output-format", "concise", str(root))
    assert code == 0  # DP101 is suppressed (only DP101: the bracket-less code), warnings do not fail
    assert "dpsgd.py:49:" in out and "write `# dpcheck: ignore[DP101]`" in out
    assert "dpsgd.py:48:" in out and "suppression names no rule: DP999" in out
    assert "; 1 suppressed; 2 suppression issues." in out
    code, out, _ = _scan(capsys, "--strict", "--format", "json", str(root))
    assert code == 1
    kinds = sorted(i["kind"] for i in json.loads(out)["suppression_issues"])
    assert kinds == ["bare-codes", "unknown-code"]  # DP999 names no rule: "unknown", not "unused"


def test_per_file_ignores_codes_are_checked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _project(tmp_path, "torch_loop_asgm_len_batch")
    (root / "pyproject.toml").write_text(
        '[tool.dpcheck]\nper-file-ignores = { "dpsgd.py" = ["normalized-update-accounted-as-sgm", "DP99"] }\n'
    )
    code, out, err = _scan(capsys, "--format", "json", str(root))
    report = json.loads(out)
    assert code == 0 and report["findings"] == []  # the rule's name works
    (warning,) = report["warnings"]
    assert "`per-file-ignores` for 'dpsgd.py': 'DP99' names no rule" in warning
    assert f"dpcheck: warning: {warning}" in err
    code, out, err = _scan(capsys, "--strict", str(root))
    assert code == 2 and out == "" and "'DP99' names no rule" in err


def test_rule_names_select_and_ignore(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _project(tmp_path, "opacus_range_spanning_eras")
    _, out, _ = _scan(capsys, "--format", "json", "--select", "unpinned-dp-library", str(root))
    assert {f["rule"] for f in json.loads(out)["findings"]} == {"DP105"}
    _, out, _ = _scan(capsys, "--format", "json", "--ignore", "Unpinned-DP-Library", str(root))
    assert "DP105" not in {f["rule"] for f in json.loads(out)["findings"]}
    code, _, err = _scan(capsys, "--select", "unpinned-library", str(root))
    assert code == 2 and "'unpinned-library'" in err and "or a rule name" in err


def test_param_overrides_show_as_evidence_and_in_dp103(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _project(tmp_path, "accountant_steps_mismatch")
    _, out, _ = _scan(capsys, str(root))
    assert "7200 given to the accountant, 14400 in the code" in out
    _, out, _ = _scan(capsys, "--param", "steps=9000", "--param", "sigma=1.1", str(root))
    assert "steps = 7200 given to the accountant, 9000 from --param" in out
    assert "  = evidence: sigma = 1.1 (override from --param)\n" in out
    assert "  = evidence: steps = 9000 (override from --param)\n" in out


def test_dependency_files_with_findings_count_as_scanned(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _project(tmp_path, "opacus_unpinned")
    _, out, _ = _scan(capsys, "--format", "json", str(root))
    report = json.loads(out)
    python_files = len(list(root.rglob("*.py")))
    assert "requirements.txt" in {f["path"] for f in report["findings"]}
    assert report["files_scanned"] == python_files + 1
    dp105 = next(f for f in report["findings"] if f["rule"] == "DP105")
    assert len(dp105["message"]) < 200  # the how-decided part is its evidence, not the message
    assert any(e["role"] == "library" for e in dp105["evidence"])


def test_binary_file_gets_no_code_frame(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "blob.py").write_bytes(b"\x00\x01\x89PNG\x1a\nbinary\xff\xfe\n")
    _, out, _ = _scan(capsys, str(tmp_path))
    header, nxt = out.splitlines()[:2]
    assert FINDING_LINE.match(header) and "DP001 [warning]" in header and "binary" in header
    assert " | " not in out and "\ufffd" not in out and nxt == ""


def test_debug_works_after_the_subcommand_too(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["--debug", "scan", str(tmp_path / "nope")], ["scan", str(tmp_path / "nope"), "--debug"]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert "Traceback" in err and "nope: no such file or directory" in err
    assert main(["scan", str(tmp_path / "nope")]) == 2
    assert "Traceback" not in capsys.readouterr().err


def test_missing_matplotlib_is_reported_before_the_scan(tmp_path: Path) -> None:
    """With matplotlib not importable, --plot-dir fails at once: no cache written, no report."""
    root = _project(tmp_path, "torch_loop_asgm_len_batch")
    script = (
        "import sys; sys.modules['matplotlib'] = None\n"  # what an install without the extra sees
        "from dpcheck.cli import main\n"
        f"sys.exit(main(['scan', {str(root)!r}, '--plot-dir', {str(tmp_path / 'plots')!r}]))\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert proc.returncode == 2 and proc.stdout == ""
    assert "--plot-dir needs matplotlib, which is not installed: pip install 'dpcheck[plot]'" in proc.stderr
    assert not (root / ".dpcheck_cache").exists() and not (tmp_path / "plots").exists()


def test_an_error_still_writes_a_sarif_log_and_an_annotation(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _project(tmp_path, "torch_loop_asgm_len_batch")
    target = tmp_path / "out.sarif"
    code, _, err = _scan(capsys, "--format", "sarif", "--output", str(target), "--baseline", str(tmp_path / "none.json"), str(root))
    assert code == 2 and "baseline file not found" in err
    (run,) = json.loads(target.read_text())["runs"]
    assert run["invocations"][0]["executionSuccessful"] is False
    assert "baseline file not found" in run["invocations"][0]["toolExecutionNotifications"][0]["message"]["text"]
    code, out, _ = _scan(capsys, "--format", "github", "--baseline", str(tmp_path / "none.json"), str(root))
    assert code == 2 and out.startswith("::error::") and "baseline file not found" in out
    code, out, _ = _scan(capsys, "--format", "json", "--baseline", str(tmp_path / "none.json"), str(root))
    assert code == 2 and out == ""  # JSON keeps its contract: the message on stderr only
