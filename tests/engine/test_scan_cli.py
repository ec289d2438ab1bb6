"""End-to-end ``dpcheck scan`` on real files: DP001, exit codes, formats, cache, parallelism."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import git
import pytest

from dpcheck.cli import main

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"

VALID = """\
import torch

def train(model, data):
    for x, y in data:
        loss = model(x).sum()
        loss.backward()
"""


@pytest.fixture
def broken_project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "syntax.py").write_text("def f(:\n    pass\n")
    (root / "latin.py").write_bytes("name = 'caf\xe9'\n".encode("latin-1"))
    (root / "blob.py").write_bytes(b"\x00\x01\x02binary")
    (root / "valid.py").write_text(VALID)
    return root


def _scan_json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict]:
    code = main(["scan", "--format", "json", "--no-cache", *args])
    return code, json.loads(capsys.readouterr().out)


def test_broken_files_are_dp001_and_scan_goes_on(broken_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, report = _scan_json(capsys, str(broken_project))
    assert code == 0  # DP001 is a warning; default --fail-on error
    dp001 = sorted((f["path"], f["line"], f["severity"]) for f in report["findings"] if f["rule"] == "DP001")
    assert dp001 == [("blob.py", 1, "warning"), ("latin.py", 1, "warning"), ("syntax.py", 1, "warning")]
    assert report["files_scanned"] == 4
    messages = {f["path"]: f["message"] for f in report["findings"]}
    assert "binary" in messages["blob.py"]
    assert "syntax error" in messages["syntax.py"]


def test_fail_on_warning_exits_one(broken_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["scan", "--no-cache", "--fail-on", "warning", str(broken_project)]) == 1
    out = capsys.readouterr().out
    assert "syntax.py:1:" in out and "DP001" in out


def test_missing_path_exits_two(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["scan", str(tmp_path / "nope")]) == 2
    err = capsys.readouterr().err
    assert "nope" in err and "Traceback" not in err


def test_bad_param_exits_two(broken_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["scan", "--param", "sigma=zero", str(broken_project)]) == 2
    assert "sigma" in capsys.readouterr().err


def test_ignore_and_select(broken_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, report = _scan_json(capsys, "--ignore", "DP001", str(broken_project))
    assert report["findings"] == []
    _, report = _scan_json(capsys, "--select", "DP1", str(broken_project))
    assert all(f["rule"].startswith("DP1") for f in report["findings"])


def test_suppression_and_strict(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a.py").write_text("x = 1  # dpcheck: ignore[DP102]\n")
    (tmp_path / "bad.py").write_text("# dpcheck: ignore[DP001] generated file\ndef f(:\n")
    code, report = _scan_json(capsys, "--fail-on", "warning", str(tmp_path))
    assert report["findings"] == [] and report["suppressed"] == 1 and code == 0
    code, report = _scan_json(capsys, "--strict", str(tmp_path))
    assert code == 1
    assert [(i["path"], i["kind"]) for i in report["suppression_issues"]] == [("a.py", "unused")]


def test_config_error_names_key(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.dpcheck]\nfail_on = 'warning'\n")
    (tmp_path / "a.py").write_text("x = 1\n")
    assert main(["scan", str(tmp_path)]) == 2
    assert "`fail_on`" in capsys.readouterr().err


def _many_files(root: Path, count: int) -> None:
    for i in range(count):
        body = VALID if i % 3 else "import torch\nnoise = torch.randn(3)\nclip = 1.0\ndef f(:\n"
        (root / f"m{i:03d}.py").write_text(body)


def test_parallel_output_equals_serial(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _many_files(tmp_path, 40)
    _, serial = _scan_json(capsys, "--jobs", "1", str(tmp_path))
    _, parallel = _scan_json(capsys, "--jobs", "2", str(tmp_path))
    assert serial == parallel
    assert len(serial["findings"]) == 14


def test_warm_cache_gives_same_result(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _many_files(tmp_path, 6)
    cache = tmp_path.parent / "cache"
    args = ["scan", "--format", "json", "--cache-dir", str(cache), str(tmp_path)]
    main(args)
    cold = json.loads(capsys.readouterr().out)
    assert any(cache.rglob("*.json"))
    main(args)
    warm = json.loads(capsys.readouterr().out)
    assert cold == warm
    (tmp_path / "m000.py").write_text(VALID)  # fix the broken file: the cache must not serve it
    main(args)
    fixed = json.loads(capsys.readouterr().out)
    assert len(fixed["findings"]) == len(cold["findings"]) - 1


def test_output_file_and_formats(broken_project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "report.sarif"
    main(["scan", "--no-cache", "--format", "sarif", "--output", str(out), str(broken_project)])
    sarif = json.loads(out.read_text())
    assert sarif["version"] == "2.1.0"
    assert {r["ruleId"] for r in sarif["runs"][0]["results"]} == {"DP001"}
    main(["scan", "--no-cache", "--format", "github", str(broken_project)])
    lines = capsys.readouterr().out.splitlines()
    assert any(line.startswith("::warning file=syntax.py,line=1") for line in lines)


def test_precommit_file_subset_reports_only_given_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = git.Repo.init(tmp_path)
    (tmp_path / "a.py").write_text("def f(:\n")
    (tmp_path / "b.py").write_text("def g(:\n")
    repo.index.add(["a.py", "b.py"])
    _, report = _scan_json(capsys, str(tmp_path / "a.py"))
    assert [f["path"] for f in report["findings"]] == ["a.py"]


def _pipeline_of(capsys: pytest.CaptureFixture[str], project: Path, cache: Path) -> tuple[dict, list]:
    main(["scan", "--format", "json", "--cache-dir", str(cache), str(project)])
    report = json.loads(capsys.readouterr().out)
    (pipeline,) = report["pipelines"]
    return pipeline, report["findings"]


def test_warm_scan_sees_edits_of_imported_modules_and_pins(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project = tmp_path / "proj"
    shutil.copytree(FIXTURES / "params_across_modules", project)
    cache = tmp_path / "cache"
    cold, _ = _pipeline_of(capsys, project, cache)
    warm, _ = _pipeline_of(capsys, project, cache)
    assert warm == cold and cold["params"]["sigma"]["value"] == 1.25
    config = project / "config.py"  # not a candidate file: summarised only because train.py imports it
    config.write_text(config.read_text().replace("NOISE_MULTIPLIER = 1.25", "NOISE_MULTIPLIER = 0.75"))
    edited, _ = _pipeline_of(capsys, project, cache)
    assert edited["params"]["sigma"]["value"] == 0.75
    pins = project / "pyproject.toml"
    pins.write_text(pins.read_text().replace('"opacus==1.3.0"', '"opacus>=0.12"'))
    unpinned, findings = _pipeline_of(capsys, project, cache)
    assert unpinned["library"] == "opacus>=0.12"
    assert "DP105" in {f["rule"] for f in findings}


def test_unwritable_plot_dir_keeps_the_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    code = main(["scan", "--no-cache", "--plot-dir", str(blocker / "plots"), str(FIXTURES / "torch_loop_asgm_len_batch")])
    captured = capsys.readouterr()
    assert code == 2
    assert "DP101" in captured.out  # the report was written before the plot failed
    assert "plot" in captured.err and "Traceback" not in captured.err


def test_new_since_with_a_path_outside_the_project(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = git.Repo.init(tmp_path / "repo")
    (tmp_path / "repo" / "a.py").write_text("x = 1\n")
    repo.index.add(["a.py"])
    repo.index.commit("init")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "b.py").write_text("def f(:\n")
    code = main(["scan", "--no-cache", "--format", "json", "--new-since", "HEAD",
                 str(tmp_path / "repo" / "a.py"), str(outside)])
    report = json.loads(capsys.readouterr().out)
    assert code == 0
    assert any("outside the project root" in e["message"] for e in report["errors"])
    assert not any(e["internal"] for e in report["errors"])
