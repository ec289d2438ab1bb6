"""``dpcheck history`` from the command line: formats, grouping, evidence, output file, exit
codes and messages on bad input."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import git
import pytest

from dpcheck.cli import main


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["history", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _args(repo: git.Repo, cache: Path, *more: str) -> list[str]:
    return [str(repo.working_tree_dir), "--package", "fakedp", "--cache-dir", str(cache), *more]


def test_markdown_grouped_with_evidence(fake_repo: git.Repo, tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _cli(capsys, *_args(fake_repo, tmp_path, "--format", "md", "--group",
                                         "--evidence"))
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("| tags | commit | mean | sum |")
    ranges = [line.split(" | ")[0].lstrip("| ") for line in lines[2:9]]
    assert ranges == ["v0.1.0 – v0.2.0", "v0.3.0", "v0.4.0", "v1.0.0", "v1.1 – v1.1.0",
                      "v1.2.0",
                      "v2.0.0"]
    assert "- `normalization:mean: fakedp/optimizer.py:15 @" in out
    assert "dpcheck: v2.0.0: normalization_mean, normalization_sum" in err
    assert "unknown: the tree at v2.0.0 has no fakedp/" in err


def test_json_always_has_evidence(fake_repo: git.Repo, tmp_path: Path,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _cli(capsys, *_args(fake_repo, tmp_path, "--format", "json", "-q",
                                       "--tags", "v1.1.0"))
    assert code == 0
    (row,) = json.loads(out)["rows"]
    assert (row["tag"], row["version"], row["mechanism"]) == ("v1.1.0", "1.1.0", "FEASGM")
    assert row["commit"] == fake_repo.tags["v1.1.0"].commit.hexsha
    assert {"role": "accountant", "path": "fakedp/privacy_engine.py", "line": 6,
            "commit": row["commit"],
            "text": 'def __init__(self, *, accountant: str = "prv"):'} in row["evidence"]


def test_csv_to_a_file(fake_repo: git.Repo, tmp_path: Path,
                       capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "table.csv"
    code, out, err = _cli(capsys, *_args(fake_repo, tmp_path, "--format", "csv", "--quiet",
                                         "--output", str(target)))
    assert (code, out, err) == (0, "", "")
    rows = list(csv.DictReader(io.StringIO(target.read_text())))
    assert [r["mechanism"] for r in rows[:4]] == ["not supported", "not supported", "ASGM",
                                                   "EASGM (ASGM with poisson=False (the default))"]


def test_text_is_the_default(fake_repo: git.Repo, tmp_path: Path,
                             capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _cli(capsys, *_args(fake_repo, tmp_path, "--tags", "v0.3.0", "-q"))
    header, row, blank, *legend = out.splitlines()
    assert blank == "" and " ".join(legend).startswith("mean / sum: what the library divides")
    assert header.split()[:4] == ["tags", "commit", "mean", "sum"]
    assert row.split()[0] == "v0.3.0" and row.split()[-1] == "ASGM"


def test_bad_input_exits_2(fake_repo: git.Repo, tmp_path: Path,
                           capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _cli(capsys, str(tmp_path))
    assert (code, out) == (2, "")
    assert err == f"dpcheck: error: {tmp_path}: not a git repository\n"
    code, _, err = _cli(capsys, *_args(fake_repo, tmp_path, "--tags", "release-*"))
    assert code == 2 and "no release tags match 'release-*'" in err


def test_version_table_merges_tags_of_one_release(fake_repo: git.Repo, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _cli(capsys, *_args(fake_repo, tmp_path, "--format", "version-table", "-q",
                                       "--library", "fakedp"))
    assert code == 0
    table = json.loads(out)
    assert (table["library"], table["schema"]) == ("fakedp", 1)
    versions = {entry["version"]: entry for entry in table["versions"]}
    # releases with an unknown cell (1.2.0 does not parse, 2.0.0 lacks the package) are left out
    assert list(versions) == ["0.1.0", "0.2.0", "0.3.0", "0.4.0", "1.0.0", "1.1.0"]
    merged = versions["1.1.0"]
    assert merged["tags"] == ["v1.1", "v1.1.0"]
    assert merged["commit"] == fake_repo.tags["v1.1.0"].commit.hexsha
    assert (merged["mechanism"], merged["default_accountant"]) == ("FEASGM", "opacus-prv")
    assert versions["0.4.0"]["variants"] == [{"when": "poisson=False (the default)",
                                              "normalization_mean": "A", "mechanism": "ASGM"}]
    assert all(e["commit"] == merged["commit"] for e in merged["evidence"])


@pytest.mark.parametrize("fmt", ["text", "md"])
def test_the_table_explains_its_codes(fake_repo: git.Repo, tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str], fmt: str) -> None:
    code, out, _ = _cli(capsys, *_args(fake_repo, tmp_path, "--format", fmt, "-q"))
    assert code == 0
    text = " ".join(out.split())
    codes = {line.split(" | ")[2].strip() for line in out.splitlines() if line.startswith("| v")}
    codes |= {line.split()[2] for line in out.splitlines() if fmt == "text" and line.startswith("v")}
    assert codes & {"A", "EA", "FEA"}  # the table uses the codes the legend explains
    for explained in ("A = the realized batch size |B| (ASGM)", "EA = the expected batch size N·q (EASGM)",
                      "FEA = ⌊N·q⌋ (FEASGM)", "none = nothing"):
        assert explained in text
