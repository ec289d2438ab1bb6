"""`dpcheck rules` and `dpcheck explain`, run in-process through the real argument parser."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dpcheck.catalog import load_catalog
from dpcheck.catalog.docs import render_pages
from dpcheck.cli import main

REPO = Path(__file__).resolve().parents[2]


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


def test_explain_renders_the_page_for_a_terminal(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "dp102"]) == 0
    out = capsys.readouterr().out
    rule = load_catalog().get("DP102")
    assert out.lstrip().startswith("DP102: shuffle-accounted-as-poisson")
    headings = ["What it does", "Why is this bad?", "Example", "Use instead:", "How to fix it",
                "Suppressing", "Configuration", "References"]
    assert [line for line in out.splitlines() if line in headings] == headings
    # rendered, not raw Markdown: no emphasis markers, fences or link syntax
    assert "**" not in out and "```" not in out and "](" not in out
    flagged = next(line for line in rule.minimal.flagged.code.splitlines() if "# flagged" in line)
    assert flagged.strip() in out  # the marked line of the minimal snippet, unwrapped
    # the full example projects only on request (the page has them)
    assert all(e.name not in out for e in rule.examples)
    assert f"{len(rule.examples)} full example projects: dpcheck explain DP102 --examples" in out
    assert main(["explain", "DP102", "--examples"]) == 0
    full = capsys.readouterr().out
    # the page stays readable: the example projects are what makes it long
    assert 2 * len(out.splitlines()) < len(full.splitlines())
    assert all(e.name in full for e in rule.examples) and "```" not in full


def test_explain_text_fits_80_columns_with_code_unwrapped(capsys: pytest.CaptureFixture[str]) -> None:
    """Piped, explain renders at 80 columns; the minimal snippets are written to fit, so no code
    line is wrapped (a wrapped line would not be the code any more)."""
    for rule in load_catalog().rules:
        assert main(["explain", rule.id]) == 0
        out = capsys.readouterr().out
        assert max(len(line) for line in out.splitlines()) <= 80
        assert rule.minimal is not None
        for example in (rule.minimal.flagged, rule.minimal.use_instead):
            for _, text in example.project_files():
                for line in text.splitlines():
                    assert len(line) <= 76, (rule.id, line)


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


@pytest.mark.skipif(shutil.which("script") is None, reason="needs util-linux `script` for a terminal")
def test_explain_on_a_terminal_is_styled_and_paged_when_taller_than_the_window(tmp_path: Path) -> None:
    """Run in a real pseudo-terminal (``script``): styles instead of Markdown marks, and the
    system pager ($PAGER, here a marker) only when the page does not fit the window."""
    shim = f'PYTHONPATH="{REPO}" "{sys.executable}" -m dpcheck explain DP104'

    def run(lines: int) -> str:
        env = {**os.environ, "PAGER": "sed s/^/PAGED:/", "COLUMNS": "90", "LINES": str(lines)}
        env.pop("NO_COLOR", None)
        proc = subprocess.run(["script", "-qec", shim, "/dev/null"], env=env, cwd=tmp_path,
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        return proc.stdout

    small = run(30).splitlines()
    assert small and all(line.startswith("PAGED:") for line in small if line.strip())
    text = "\n".join(small)
    assert "\x1b[" in text and "DP104: low-noise-shuffle" in text and "**" not in text
    tall = run(500)
    assert "PAGED:" not in tall and "What it does" in tall
