"""`dpcheck rules` and `dpcheck explain`, run in-process through the real argument parser."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dpcheck.catalog import load_catalog
from dpcheck.catalog.docs import render_pages
from dpcheck.cli import main


def test_rules_lists_every_rule(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["ID", "NAME", "SEVERITY", "SUMMARY"]
    rows = [line.split(maxsplit=3) for line in lines[1:]]
    assert [row[0] for row in rows] == list(load_catalog().ids())
    assert {"DP001", "DP101", "DP102", "DP103", "DP104", "DP105", "DP106"} <= {row[0] for row in rows}
    assert rows[1][1:3] == ["normalized-update-accounted-as-sgm", "error"]
    assert rows[0][3] == load_catalog().get("DP001").summary


def test_rules_json_is_machine_readable(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [row["id"] for row in rows] == list(load_catalog().ids())
    assert set(rows[0]) == {"id", "name", "severity", "summary", "tags"}
    assert {row["severity"] for row in rows} == {"error", "warning", "info"}


def test_rules_markdown_is_a_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules", "--format", "md"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[:2] == ["| id | name | severity | summary |", "| --- | --- | --- | --- |"]
    assert len(lines) == 2 + len(load_catalog().rules)
    assert lines[3].startswith("| DP101 | normalized-update-accounted-as-sgm | error |")


def test_explain_prints_rationale_fix_and_every_example(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "dp102"]) == 0
    out = capsys.readouterr().out
    rule = load_catalog().get("DP102")
    assert out.startswith("DP102 shuffle-accounted-as-poisson [error]\n")
    assert rule.rationale.splitlines()[0] in out and rule.fix.splitlines()[0] in out
    for example in rule.examples:
        assert example.name in out
        first_code_line = example.code.strip().splitlines()[0]
        assert f"| {first_code_line}" in out
    assert "flagged (DP102)" in out and "passes:" in out


def test_explain_by_name_and_as_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "unpinned-dp-library", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["id"] == "DP105" and data["examples"][0]["files"]
    assert main(["explain", "--all", "--format", "json"]) == 0
    assert [r["id"] for r in json.loads(capsys.readouterr().out)] == list(load_catalog().ids())


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["explain", "DP999"], "unknown rule 'DP999'"),
        (["explain"], "give either a RULE or --all"),
        (["explain", "DP101", "--all"], "give either a RULE or --all"),
        (["explain", "DP101", "--output", "out"], "use it with --format md"),
    ],
)
def test_explain_usage_errors_exit_2(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert message in captured.err and "Traceback" not in captured.err
    assert captured.out == ""


def test_explain_all_writes_one_page_per_rule_and_an_index(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_dir = tmp_path / "docs" / "rules"
    assert main(["explain", "--all", "--format", "md", "--output", str(out_dir)]) == 0
    written = {p.name: p.read_text(encoding="utf-8") for p in out_dir.iterdir()}
    assert written == render_pages(load_catalog())
    assert sorted(written) == [f"{rule_id}.md" for rule_id in load_catalog().ids()] + ["README.md"]
    assert f"wrote {len(load_catalog().rules) + 1} page(s)" in capsys.readouterr().err


def test_explain_output_into_a_file_path_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "taken"
    blocker.write_text("a file, not a directory\n")
    assert main(["explain", "DP001", "--format", "md", "--output", str(blocker)]) == 2
    assert f"cannot write pages to {blocker}" in capsys.readouterr().err
