"""Where a notebook finding is, in every output format: ``dpcheck scan`` run for real on a copy
of the tutorial fixture, each location checked against the cell, line and column found by plain
string search in the notebook's JSON (and, for SARIF, against the line of the concatenated code
cells counted the same way)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import jsonschema
import pytest

from dpcheck.cli import main
from tests.notebook.conftest import FIXTURES, code, find_in_cells, notebook, write_notebook

SARIF_SCHEMA = Path(__file__).parents[1] / "data" / "sarif-schema-2.1.0.json"
ANCHOR = "privacy_engine.make_private("


@pytest.fixture
def tutorial(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the tutorial fixture, the current folder (text paths are shown from it)."""
    root = tmp_path / "tutorial"
    shutil.copytree(FIXTURES / "notebook_opacus_tutorial", root,
                    ignore=shutil.ignore_patterns("expected.json"))
    monkeypatch.chdir(root)
    return root


def _scan(capsys: pytest.CaptureFixture[str], fmt: str, *args: str) -> str:
    main(["scan", "--no-cache", "--format", fmt, *args])
    return capsys.readouterr().out


def _concatenated_line(path: Path, cell: int, line: int) -> int:
    """The line of (cell, line) in the code cells joined in order, counted from the JSON."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    before = 0
    for number, item in enumerate(cells[: cell - 1], start=1):
        if item["cell_type"] == "code":
            source = "".join(item["source"])
            before += len(source.splitlines())
    return before + line


def test_text_names_the_cell_and_frames_the_cells_lines(tutorial: Path, capsys) -> None:
    cell, line, column = find_in_cells(tutorial / "tutorial.ipynb", ANCHOR)
    out = _scan(capsys, "text", str(tutorial))
    assert f"tutorial.ipynb:cell {cell}:{line}:{column}: DP101 [error] " in out
    frame = out.split("DP101", 1)[1].splitlines()[1:4]
    assert frame == [
        "  1 | privacy_engine = PrivacyEngine()",
        "  2 | model, optimizer, train_loader = privacy_engine.make_private(",
        "    | " + " " * (column - 1) + "^",
    ]
    sigma = find_in_cells(tutorial / "tutorial.ipynb", "NOISE_MULTIPLIER = ")
    assert f"= evidence: tutorial.ipynb:cell {sigma[0]}:{sigma[1]}: sigma = 1.2 (constant)" in out
    assert "= evidence: requirements.txt:1: opacus==1.4.0" in out
    assert f"  tutorial.ipynb:cell {cell}:{line}: mechanism FEASGM" in out


def test_a_frame_never_shows_the_previous_cell(tmp_path: Path, capsys,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "p"
    (root / "requirements.txt").parent.mkdir(parents=True)
    (root / "requirements.txt").write_text("opacus==1.4.0\n")
    write_notebook(root / "nb.ipynb", notebook([
        code("from opacus import PrivacyEngine\nfrom torch.utils.data import DataLoader\n"
             "loader = DataLoader(data, batch_size=500, shuffle=True)\nengine = PrivacyEngine()"),
        code("model, opt, loader = engine.make_private(module=model, optimizer=opt,\n"
             "    data_loader=loader, noise_multiplier=1.0, max_grad_norm=1.0,\n"
             "    poisson_sampling=False)\nfor x, y in loader:\n    opt.step()\n"
             "print(engine.get_epsilon(1e-5))"),
    ]))
    monkeypatch.chdir(root)
    out = _scan(capsys, "text", ".")
    header, first, caret = out.split("\n")[:3]
    assert header.startswith("nb.ipynb:cell 2:1:22: DP102 [error] ")
    assert first.startswith("  1 | model, opt, loader = engine.make_private(")
    assert caret.startswith("    | " + " " * 21 + "^") and caret.strip(" |^") == ""


def test_json_carries_the_cell_beside_line_and_column(tutorial: Path, capsys) -> None:
    nb = tutorial / "tutorial.ipynb"
    cell, line, column = find_in_cells(nb, ANCHOR)
    report = json.loads(_scan(capsys, "json", str(tutorial)))
    (finding,) = report["findings"]
    assert (finding["path"], finding["cell"], finding["line"], finding["column"]) == (
        "tutorial.ipynb", cell, line, column)
    assert list(finding)[:7] == ["rule", "severity", "path", "display_path", "cell", "line",
                                 "column"]
    by_role = {e["role"]: e for e in finding["evidence"]}
    assert by_role["library"]["path"] == "requirements.txt"
    assert by_role["library"]["cell"] is None and by_role["library"]["line"] == 1
    batch = find_in_cells(nb, "BATCH_SIZE = 500")
    assert (by_role["param:batch_size"]["cell"], by_role["param:batch_size"]["line"]) == batch[:2]
    (pipeline,) = report["pipelines"]
    assert (pipeline["cell"], pipeline["line"]) == (cell, line)
    assert pipeline["params"]["sigma"]["span"]["cell"] == find_in_cells(nb, "NOISE_MULTIPLIER =")[0]


def test_sarif_uses_the_concatenated_line_and_the_cell_property(tutorial: Path, capsys) -> None:
    nb = tutorial / "tutorial.ipynb"
    cell, line, column = find_in_cells(nb, ANCHOR)
    log = json.loads(_scan(capsys, "sarif", str(tutorial)))
    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft7Validator(schema).validate(log)
    (result,) = log["runs"][0]["results"]
    (location,) = result["locations"]
    physical = location["physicalLocation"]
    assert physical["artifactLocation"]["uri"] == "tutorial.ipynb"
    assert physical["region"]["startLine"] == _concatenated_line(nb, cell, line)
    assert physical["region"]["startColumn"] == column
    assert location["properties"] == {"cell": cell, "cellLine": line}
    related = {r["message"]["text"].split(": ")[0]: r for r in result["relatedLocations"]}
    sigma_cell, sigma_line, _ = find_in_cells(nb, "NOISE_MULTIPLIER =")
    assert related["param:sigma"]["properties"] == {"cell": sigma_cell, "cellLine": sigma_line}
    assert related["param:sigma"]["physicalLocation"]["region"]["startLine"] == \
        _concatenated_line(nb, sigma_cell, sigma_line)
    library = related["library"]
    assert "properties" not in library
    assert library["physicalLocation"]["artifactLocation"]["uri"] == "requirements.txt"
    assert library["physicalLocation"]["region"]["startLine"] == 1


def test_github_annotates_the_notebook_file_with_the_cell_in_the_message(tutorial: Path, capsys) -> None:
    cell, line, column = find_in_cells(tutorial / "tutorial.ipynb", ANCHOR)
    (annotation,) = _scan(capsys, "github", str(tutorial)).splitlines()
    properties, message = annotation.removeprefix("::error ").split("::", 1)
    assert properties == "file=tutorial.ipynb,title=DP101 [error] normalized-update-accounted-as-sgm"
    assert message.startswith(f"cell {cell}:{line}:{column}: the update is FEASGM")
    assert message.replace("%0A", "\n").endswith("/docs/rules/DP101.md")
