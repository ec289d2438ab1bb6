"""The JSON report: the documented keys (README.md, "JSON output"), strict JSON, round trip."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import numpy as np
import pytest

from dpcheck import __version__
from dpcheck.model import Finding, ScanResult, Severity, Span
from dpcheck.report.json_report import render_json
from dpcheck.report.locations import PathView
from tests.report.conftest import Project

FINDING_KEYS = {
    "rule", "severity", "path", "cell", "line", "column", "message", "pipeline", "evidence",
    "bound"
}
PIPELINE_KEYS = {"entry", "cell", "line", "mechanism", "sampling", "sampler", "accountant",
                 "params", "evidence"}
SPAN_KEYS = ["path", "cell", "line", "column", "end_line", "end_column"]


def _strict_loads(text: str) -> object:
    def reject(constant: str) -> None:
        raise ValueError(f"non-standard JSON constant {constant}")

    return json.loads(text, parse_constant=reject)


def test_documented_keys_are_present(failed_project: Project) -> None:
    text = render_json(failed_project.result)
    doc = _strict_loads(text)
    assert isinstance(doc, dict)
    assert list(doc)[:4] == ["dpcheck", "pipelines", "findings", "errors"]
    assert doc["dpcheck"] == __version__
    for finding in doc["findings"]:
        assert FINDING_KEYS <= set(finding)
        assert isinstance(finding["line"], int) and finding["column"] >= 1
        assert finding["cell"] is None  # a Python file; a notebook names the cell
        for evidence in finding["evidence"]:
            assert [k for k in evidence if k in SPAN_KEYS] == SPAN_KEYS
    pipeline = doc["pipelines"][0]
    assert PIPELINE_KEYS <= set(pipeline)
    assert [k for k in pipeline["params"]["sigma"]["span"] if k != "display_path"] == SPAN_KEYS
    assert {"name", "assumes"} <= set(pipeline["accountant"])
    assert pipeline["mechanism"] == "ASGM" and pipeline["sampling"] == "poisson"
    assert set(pipeline["params"]) == {"q", "sigma"}
    assert pipeline["params"]["sigma"]["value"] == 1.1
    assert doc["errors"] == [{
        "path": "data/blob.py",
        "display_path": "data/blob.py",
        "message": "cannot read: Permission denied",
        "internal": False,
    }]
    assert doc["warnings"] == []


def _without_display_paths(value: object) -> object:
    if isinstance(value, list):
        return [_without_display_paths(v) for v in value]
    if isinstance(value, dict):
        return {k: _without_display_paths(v) for k, v in value.items() if k != "display_path"}
    return value


def test_round_trips_to_the_model_shape(project: Project) -> None:
    text = render_json(project.result)
    assert text.endswith("}\n") and not text.endswith("\n\n")
    assert text.startswith('{\n  "dpcheck": ')
    assert _without_display_paths(_strict_loads(text)) == project.result.to_json(__version__)


def _paths(value: object) -> list[tuple[str, str | None]]:
    """Every (path, display_path) pair of the document, depth first."""
    if isinstance(value, list):
        return [pair for v in value for pair in _paths(v)]
    if not isinstance(value, dict):
        return []
    own = [(value["path"], value.get("display_path"))] if isinstance(value.get("path"), str) else []
    return own + [pair for v in value.values() for pair in _paths(v)]


def test_every_path_has_a_display_path_from_the_current_folder(project: Project) -> None:
    root = project.root
    inside = _strict_loads(render_json(project.result, paths=PathView(root, root / "sub")))
    above = _strict_loads(render_json(project.result, paths=PathView(root / "sub", root)))
    pairs = _paths(inside)
    assert len(pairs) > 10 and {p for p, _ in pairs} == {"train.py", "requirements.txt"}
    # below the current folder a relative path; elsewhere an absolute one, as ruff prints it
    assert all(shown == (root / path).as_posix() for path, shown in pairs)
    assert all(shown == f"sub/{path}" for path, shown in _paths(above))
    finding = inside["findings"][0]
    assert list(finding)[2:4] == ["path", "display_path"]  # beside the path, not at the end


def test_finding_fields_match_the_finding(project: Project) -> None:
    doc = _strict_loads(render_json(project.result))
    asgm = next(f for f in doc["findings"] if f["rule"] == "DP101")
    source_line = project.sources["train.py"].splitlines()[asgm["line"] - 1]
    assert source_line[asgm["column"] - 1 :].startswith("len(batch)")
    assert asgm["severity"] == "error" and asgm["pipeline"] == "train.py::train"
    assert [e["role"] for e in asgm["evidence"]] == ["divisor", "accountant"]
    assert asgm["bound"]["corrected_epsilon"] == 8.41


def test_non_finite_and_numpy_values_become_strict_json() -> None:
    bound = {
        "epsilon": np.float64("inf"),
        "steps": np.int64(2340),
        "curve": np.array([0.5, np.nan]),
        "pair": (1.0, -math.inf),
    }
    finding = Finding("DP104", Severity.WARNING, Span("t.py", 4), "low noise", bound=bound)
    doc = _strict_loads(render_json(ScanResult(findings=[finding])))
    assert doc["findings"][0]["bound"] == {
        "epsilon": "Infinity",
        "steps": 2340,
        "curve": [0.5, "NaN"],
        "pair": [1.0, "-Infinity"],
    }


@pytest.mark.parametrize("files, suppressed", [(0, 0), (57, 3)])
def test_counters(project: Project, files: int, suppressed: int) -> None:
    result = replace(project.result, files_scanned=files, suppressed=suppressed)
    doc = _strict_loads(render_json(result))
    assert (doc["files_scanned"], doc["suppressed"]) == (files, suppressed)


def test_the_report_schema_names_every_mechanism_and_sampling_kind_a_pipeline_can_have() -> None:
    """The schema's enums are a published contract; a kind added to the model must be added to
    the schema too, or a valid report fails validation (a balls-and-bins pipeline did)."""
    import json
    from pathlib import Path

    from dpcheck.model import Mechanism, SamplingKind

    schema = json.loads((Path(__file__).resolve().parents[2] / "docs" / "report.schema.json")
                        .read_text("utf-8"))
    pipeline = schema["$defs"]["pipeline"]["properties"]
    assert set(pipeline["sampling"]["enum"]) == {kind.value for kind in SamplingKind}
    assert set(pipeline["mechanism"]["enum"]) == {kind.value for kind in Mechanism}
