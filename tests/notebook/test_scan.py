"""Notebooks through the whole scan: fingerprints and findings unchanged when a notebook is
re-executed (outputs, execution counts, widget state), nothing of the outputs in any report,
baselines, ``--new-since`` on git objects, the cache keyed by the notebook's blob, suppression
comments in a cell, ``%run``, discovery, and notebooks that are not Python."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import git
import pytest

from dpcheck import engine
from dpcheck.cli import main
from dpcheck.discover.files import discover_files
from dpcheck.locations import locate
from dpcheck.parse.source import blob_id
from tests.notebook.conftest import FIXTURES, code, find_in_cells, notebook, write_notebook

MARKER = "OUTPUT-ONLY-7f3a"


def _copy(name: str, dest: Path) -> Path:
    shutil.copytree(FIXTURES / name, dest, ignore=shutil.ignore_patterns("expected.json"))
    return dest


def rerun(path: Path, seed: int = 1) -> None:
    """What re-executing a notebook changes: execution counts, every output (here text that
    looks like DP code, a traceback, an image), execution timestamps, widget state, and an
    attachment of a markdown cell. The code cells' sources stay as they are."""
    document: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    count = 100 * seed
    for cell in document["cells"]:
        if cell["cell_type"] == "markdown":
            cell["attachments"] = {"plot.png": {"image/png": "iVBORw0KGgo="}}
            continue
        if cell["cell_type"] != "code":
            continue
        count += 1
        cell["execution_count"] = count
        cell["metadata"] = {"execution": {"iopub.status.idle": f"2024-05-0{seed}T10:00:00Z"}}
        cell["outputs"] = [
            {"output_type": "stream", "name": "stdout",
             "text": [f"{MARKER} noisy / len(batch)\n", "poisson_sampling=False\n"]},
            {"output_type": "error", "ename": "ValueError", "evalue": MARKER,
             "traceback": [f"def broken(:  # {MARKER}"]},
            {"output_type": "display_data", "metadata": {},
             "data": {"image/png": "iVBORw0KGgo=", "text/plain": [f"<Figure {MARKER}>"]}},
        ]
    document["metadata"]["widgets"] = {
        "application/vnd.jupyter.widget-state+json": {"state": {"m": {"value": MARKER}}}}
    path.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def _scan(root: Path, **options: Any) -> engine.ScanResult:
    return engine.scan(engine.ScanOptions(paths=[root], jobs=1, **options))


def _findings(result: engine.ScanResult) -> list[tuple[str, str, str, int | None, int, int]]:
    return [(f.rule, f.fingerprint, f.message, *(lambda at: (at.cell, at.line, at.column))(
        locate(f.span, result.cells.get(f.span.path)))) for f in result.findings]


@pytest.mark.parametrize("fixture", ["notebook_opacus_tutorial", "notebook_broken_cell_magics"])
def test_rerunning_a_notebook_changes_no_finding_and_no_fingerprint(
        fixture: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _copy(fixture, tmp_path / "p")
    (path,) = root.glob("*.ipynb")
    before = _findings(_scan(root, use_cache=False))
    assert before
    rerun(path)
    assert _findings(_scan(root, use_cache=False)) == before
    rerun(path, seed=2)
    assert _findings(_scan(root, use_cache=False)) == before
    for fmt in ("text", "json", "sarif", "github"):
        main(["scan", "--no-cache", "--format", fmt, str(root)])
        out = capsys.readouterr().out
        assert MARKER not in out and "iVBORw0KGgo" not in out, fmt


def test_a_baseline_keeps_accepting_a_rerun_notebook(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    root = _copy("notebook_opacus_tutorial", tmp_path / "p")
    baseline = tmp_path / "baseline.json"
    assert main(["baseline", "write", "--no-cache", str(baseline), str(root)]) == 0
    (entry,) = json.loads(baseline.read_text())["findings"]
    assert entry["path"] == "tutorial.ipynb" and entry["rule"] == "DP101"
    rerun(root / "tutorial.ipynb")
    capsys.readouterr()
    assert main(["scan", "--no-cache", "--format", "json", "--baseline", str(baseline),
                 str(root)]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["findings"] == []
    assert "1 finding accepted" in captured.err


def _repo(root: Path) -> git.Repo:
    repo = git.Repo.init(root)
    with repo.config_writer() as config:
        config.set_value("user", "name", "dpcheck tests")
        config.set_value("user", "email", "tests@dpcheck.invalid")
    repo.git.add("--all")
    repo.index.commit("base")
    return repo


def test_new_since_reads_notebooks_from_git_objects(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    root = _copy("notebook_opacus_tutorial", tmp_path / "p")
    _repo(root)
    rerun(root / "tutorial.ipynb")
    capsys.readouterr()
    main(["scan", "--no-cache", "--format", "json", "--new-since", "HEAD", str(root)])
    captured = capsys.readouterr()
    assert json.loads(captured.out)["findings"] == []
    assert "1 finding also present at HEAD" in captured.err
    shutil.copy(FIXTURES / "notebook_broken_cell_magics" / "experiments.ipynb",
                root / "experiments.ipynb")
    main(["scan", "--no-cache", "--format", "json", "--new-since", "HEAD", str(root)])
    report = json.loads(capsys.readouterr().out)
    assert sorted((f["rule"], f["path"], f["cell"]) for f in report["findings"]) == [
        ("DP001", "experiments.ipynb", 7), ("DP102", "experiments.ipynb", 8)]


def test_the_cache_is_keyed_by_the_notebook_blob(tmp_path: Path) -> None:
    root = _copy("notebook_opacus_tutorial", tmp_path / "p")
    cache = tmp_path / "cache"
    path = root / "tutorial.ipynb"
    first = _findings(_scan(root, cache_dir=cache))
    key = f"{blob_id(path.read_bytes())}:tutorial.ipynb:"
    (store,) = cache.rglob("*.files.json")
    assert key in json.loads(store.read_text())
    assert _findings(_scan(root, cache_dir=cache)) == first
    rerun(path)
    assert _findings(_scan(root, cache_dir=cache)) == first
    keys = json.loads(store.read_text())
    assert key in keys and f"{blob_id(path.read_bytes())}:tutorial.ipynb:" in keys


def _edit_cell_line(path: Path, old: str, new: str) -> None:
    document = json.loads(path.read_text(encoding="utf-8"))
    hits = [(cell, i) for cell in document["cells"] if cell["cell_type"] == "code"
            for i, line in enumerate(cell["source"]) if old in line]
    assert len(hits) == 1
    cell, i = hits[0]
    cell["source"][i] = cell["source"][i].replace(old, new)
    path.write_text(json.dumps(document, indent=1), encoding="utf-8")


def test_a_suppression_comment_in_a_cell(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    root = _copy("notebook_opacus_tutorial", tmp_path / "p")
    nb = root / "tutorial.ipynb"
    _edit_cell_line(nb, "privacy_engine.make_private(",
                    "privacy_engine.make_private(  # dpcheck: ignore[DP101] reviewed")
    _edit_cell_line(nb, "EPOCHS = 20", "EPOCHS = 20  # dpcheck: ignore[DP102] stale")
    result = _scan(root, use_cache=False, strict=True)
    assert result.findings == [] and result.suppressed == 1
    (issue,) = result.suppression_issues
    assert issue.kind == "unused"
    monkeypatch.chdir(root)
    main(["scan", "--no-cache", "--strict", "."])
    cell, line, column = find_in_cells(nb, "# dpcheck: ignore[DP102]")
    assert f"  tutorial.ipynb:cell {cell}:{line}:{column}: [warning] unused suppression (DP102): " \
        "no finding on its own line" in capsys.readouterr().out


def test_run_imports_the_names_the_script_defines(tmp_path: Path) -> None:
    root = _copy("notebook_imports_project_module", tmp_path / "p")
    with_run = _scan(root, use_cache=False)
    (pipeline,) = with_run.pipelines
    assert pipeline.accountant.name == "opacus-rdp"
    assert {k: pipeline.params[k].value for k in ("sigma", "clip", "q")} == {
        "sigma": 0.9, "clip": 1.5, "q": 0.004}
    assert pipeline.params["sigma"].span.path == "settings.py"
    _edit_cell_line(root / "mnist_dp.ipynb", "%run settings.py", "")
    (without,) = _scan(root, use_cache=False).pipelines
    assert all(without.params[k].value is None for k in ("sigma", "clip", "q") if k in without.params)


def test_discovery_lists_notebooks_but_not_checkpoints(tmp_path: Path) -> None:
    """Jupyter's autosave copies live in a hidden ``.ipynb_checkpoints`` folder: a directory
    walk and git's untracked files both leave them out."""
    root = tmp_path / "p"
    write_notebook(root / "nb" / "train.ipynb", notebook([code("x = 1")]))
    (root / "util.py").write_text("y = 2\n")
    _repo(root)
    write_notebook(root / "nb" / ".ipynb_checkpoints" / "train-checkpoint.ipynb",
                   notebook([code("x = 1")]))
    write_notebook(root / "nb" / "new.ipynb", notebook([code("x = 1")]))
    names = [p.relative_to(root).as_posix() for p in discover_files([root]).files]
    assert names == ["nb/new.ipynb", "nb/train.ipynb", "util.py"]
    shutil.rmtree(root / ".git")
    names = [p.relative_to(root).as_posix() for p in discover_files([root]).files]
    assert names == ["nb/new.ipynb", "nb/train.ipynb", "util.py"]


def test_unreadable_and_non_python_notebooks(tmp_path: Path) -> None:
    root = tmp_path / "p"
    root.mkdir()
    (root / "broken.ipynb").write_text('{"cells": [\n  {"cell_type": "code",\n')
    write_notebook(root / "analysis.ipynb", notebook([code("noisy <- x / nrow(batch)")], "R"))
    result = _scan(root, use_cache=False)
    (finding,) = result.findings
    assert (finding.rule, finding.span.path, finding.span.line) == ("DP001", "broken.ipynb", 3)
    assert "not a Jupyter notebook: invalid JSON" in finding.message
    assert result.files_scanned == 2 and result.errors == []


def test_naming_a_notebook_reports_on_it_with_the_whole_project_linked(tmp_path: Path) -> None:
    root = _copy("notebook_imports_project_module", tmp_path / "p")
    result = _scan(root / "mnist_dp.ipynb", use_cache=False)
    assert [p.path for p in result.pipelines] == ["mnist_dp.ipynb"]
    assert result.files_scanned == 1
    assert result.pipelines[0].params["sigma"].value == 0.9
