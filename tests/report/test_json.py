"""The JSON report: the documented keys (issue 2), strict JSON, round trip."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import numpy as np
import pytest

from dpcheck import __version__
from dpcheck.model import Finding, ScanResult, Severity, Span
from dpcheck.report.json_report import render_json
from tests.report.conftest import Project

FINDING_KEYS = {
    "rule", "severity", "path", "line", "column", "message", "pipeline", "evidence", "bound"
}
PIPELINE_KEYS = {"entry", "line", "mechanism", "sampling", "sampler", "accountant", "params", "evidence"}


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
    pipeline = doc["pipelines"][0]
    assert PIPELINE_KEYS <= set(pipeline)
    assert {"name", "assumes"} <= set(pipeline["accountant"])
    assert pipeline["mechanism"] == "ASGM" and pipeline["sampling"] == "poisson"
    assert set(pipeline["params"]) == {"q", "sigma"}
    assert pipeline["params"]["sigma"]["value"] == 1.1
    assert doc["errors"] == [{"path": "data/blob.py", "message": "cannot read: Permission denied", "internal": False}]


def test_round_trips_to_the_model_shape(project: Project) -> None:
    text = render_json(project.result)
    assert text.endswith("}\n") and not text.endswith("\n\n")
    assert text.startswith('{\n  "dpcheck": ')
    assert _strict_loads(text) == project.result.to_json(__version__)


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
