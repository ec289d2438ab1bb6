"""SARIF: valid against the official 2.1.0 schema and carrying what GitHub code scanning needs."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from jsonschema.protocols import Validator

from dpcheck import __version__
from dpcheck.model import Evidence, Finding, ScanResult, Severity, Span
from dpcheck.report.sarif import render_sarif
from dpcheck.suppress import SuppressionIssue
from tests.report.conftest import RULES, TRAIN_PY, Project, make_result

SCHEMA_PATH = Path(__file__).parents[1] / "data" / "sarif-schema-2.1.0.json"


@pytest.fixture(scope="module", params=["draft-07", "declared"])
def validator(request: pytest.FixtureRequest) -> Validator:
    """A Draft-07 validator, and one for the dialect the OASIS file declares (draft-04)."""
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    cls = (
        jsonschema.Draft7Validator
        if request.param == "draft-07"
        else jsonschema.validators.validator_for(schema)
    )
    cls.check_schema(schema)
    return cls(schema)


def _sarif(result: ScanResult, root: Path | None = None) -> dict[str, Any]:
    text = render_sarif(result, rules=RULES, root=root)
    assert text.endswith("}\n")
    return json.loads(text)


def _errors(validator: Validator, log: dict[str, Any]) -> list[str]:
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(log)]


def test_valid_against_the_schema(
    validator: Validator, failed_project: Project
) -> None:
    notice = SuppressionIssue(Span("train.py", 7, 30), "blanket", "blanket `# dpcheck: ignore`")
    result = replace(failed_project.result, suppression_issues=[notice])
    assert _errors(validator, _sarif(result, failed_project.root)) == []
    assert _errors(validator, _sarif(ScanResult())) == []


def test_the_schema_check_catches_a_broken_log(
    validator: Validator, project: Project
) -> None:
    log = _sarif(project.result)
    log["runs"][0]["results"][0]["level"] = "fatal"
    del log["runs"][0]["results"][1]["message"]
    log["runs"][0]["results"][2]["locations"][0]["physicalLocation"]["region"]["startLine"] = 0
    assert len(_errors(validator, log)) == 3


def test_top_level_and_driver(project: Project) -> None:
    log = _sarif(project.result)
    assert log["version"] == "2.1.0" and log["$schema"].endswith("sarif-schema-2.1.0.json")
    (run,) = log["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "dpcheck" and driver["version"] == __version__
    assert driver["informationUri"] == "https://github.com/dpcheck/dpcheck/blob/main/docs/rules/README.md"
    assert [r["id"] for r in driver["rules"]] == [r.id for r in RULES]
    dp101 = driver["rules"][1]
    assert dp101["name"] == "normalized-update-accounted-as-sgm"
    assert dp101["shortDescription"]["text"] == RULES[1].summary
    assert dp101["fullDescription"]["text"]
    assert dp101["help"] == {"text": RULES[1].help_text, "markdown": RULES[1].help_text}
    assert dp101["helpUri"] == "https://example.org/dpcheck/rules/DP101"
    # a rule without its own page link gets the page under the docs URL
    assert driver["rules"][0]["helpUri"] == "https://github.com/dpcheck/dpcheck/blob/main/docs/rules/DP001.md"
    assert [r["defaultConfiguration"]["level"] for r in driver["rules"]] == [
        "warning", "error", "warning", "note"
    ]
    assert all(r["properties"]["tags"] for r in driver["rules"])
    assert run["invocations"] == [{"executionSuccessful": True}]


def test_results_have_what_github_requires(project: Project) -> None:
    (run,) = _sarif(project.result)["runs"]
    rules = run["tool"]["driver"]["rules"]
    by_rule = {r["ruleId"]: r for r in run["results"]}
    assert set(by_rule) == {"DP101", "DP102", "DP105"}
    for rule_id, res in by_rule.items():
        assert rules[res["ruleIndex"]]["id"] == rule_id
        assert res["message"]["text"]
        location = res["locations"][0]["physicalLocation"]
        assert location["artifactLocation"]["uriBaseId"] == "%SRCROOT%"
        assert location["region"]["startLine"] >= 1 and location["region"]["startColumn"] >= 1
        assert set(res["partialFingerprints"]) == {"dpcheck/v1"}
    assert {k: r["level"] for k, r in by_rule.items()} == {
        "DP101": "error", "DP102": "warning", "DP105": "note"
    }


def test_location_region_and_related_locations(project: Project) -> None:
    (run,) = _sarif(project.result)["runs"]
    asgm = next(r for r in run["results"] if r["ruleId"] == "DP101")
    location = asgm["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == "train.py"
    region = location["region"]
    line = TRAIN_PY.splitlines()[region["startLine"] - 1]
    assert line[region["startColumn"] - 1 : region["endColumn"] - 1] == "len(batch)"
    assert region["endLine"] == region["startLine"]
    assert run["columnKind"] == "unicodeCodePoints"
    related = asgm["relatedLocations"]
    assert [r["id"] for r in related] == [1, 2]
    assert related[1]["physicalLocation"]["region"]["startLine"] == 9
    assert related[1]["message"]["text"] == "accountant: RDP accountant assumes SGM + Poisson"
    assert asgm["properties"]["pipeline"] == "train.py::train"
    assert asgm["properties"]["bound"]["corrected_epsilon"] == 8.41
    unpinned = next(r for r in run["results"] if r["ruleId"] == "DP105")
    assert "properties" not in unpinned and "relatedLocations" not in unpinned


def test_fingerprints_stable_across_renders_and_line_shifts(project: Project) -> None:
    def fingerprints(result: ScanResult) -> dict[str, str]:
        (run,) = _sarif(result)["runs"]
        return {r["ruleId"]: r["partialFingerprints"]["dpcheck/v1"] for r in run["results"]}

    first = fingerprints(project.result)
    assert fingerprints(project.result) == first
    shifted_source = "# a new header comment\n\n\n" + TRAIN_PY
    shifted = make_result(shifted_source)
    assert [f.span.line for f in shifted.findings if f.rule == "DP101"] == [17]
    assert fingerprints(shifted) == first
    edited = make_result(TRAIN_PY.replace("noisy / len(batch)", "noisy  /  len(batch)"))
    assert fingerprints(edited)["DP101"] == first["DP101"]
    assert len(set(first.values())) == 3


def test_fingerprint_changes_when_the_anchor_code_changes(project: Project) -> None:
    asgm = next(f for f in project.result.findings if f.rule == "DP101")
    moved = replace(asgm, context="update = noisy / batch.shape[0]")
    logs = [_sarif(ScanResult(findings=[f])) for f in (asgm, moved)]
    prints = [log["runs"][0]["results"][0]["partialFingerprints"]["dpcheck/v1"] for log in logs]
    assert prints[0] != prints[1]


def test_errors_make_execution_unsuccessful(failed_project: Project) -> None:
    (run,) = _sarif(failed_project.result)["runs"]
    (invocation,) = run["invocations"]
    assert invocation["executionSuccessful"] is False
    (note,) = invocation["toolExecutionNotifications"]
    assert note["level"] == "error" and note["message"]["text"] == "cannot read: Permission denied"
    assert note["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "data/blob.py"


def test_suppression_issue_is_a_warning_notification(project: Project) -> None:
    notice = SuppressionIssue(Span("train.py", 7, 30), "unused", "unused suppression (DP102)")
    (run,) = _sarif(replace(project.result, suppression_issues=[notice]))["runs"]
    (invocation,) = run["invocations"]
    assert invocation["executionSuccessful"] is True
    (note,) = invocation["toolExecutionNotifications"]
    assert note["level"] == "warning" and note["properties"] == {"kind": "unused"}
    assert note["locations"][0]["physicalLocation"]["region"] == {"startLine": 7, "startColumn": 30}


def test_src_root_and_uri_encoding(tmp_path: Path) -> None:
    finding = Finding(
        "DP102",
        Severity.WARNING,
        Span("my project/train #2.py", 3, 5),
        "shuffled",
        evidence=(Evidence("sampler", Span("/opt/lib/loader.py", 10, 1), "shuffle=True"),),
    )
    (run,) = _sarif(ScanResult(findings=[finding]), root=tmp_path)["runs"]
    base = run["originalUriBaseIds"]["%SRCROOT%"]["uri"]
    assert base == tmp_path.as_uri() + "/"
    res = run["results"][0]
    assert res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == (
        "my%20project/train%20%232.py"
    )
    outside = res["relatedLocations"][0]["physicalLocation"]["artifactLocation"]
    assert outside == {"uri": "file:///opt/lib/loader.py"}
    (no_root,) = _sarif(ScanResult(findings=[finding]))["runs"]
    assert "uri" not in no_root["originalUriBaseIds"]["%SRCROOT%"]


def test_unknown_rule_has_no_rule_index(validator: Validator) -> None:
    finding = Finding("DP999", Severity.WARNING, Span("t.py", 1), "from a plugin")
    log = _sarif(ScanResult(findings=[finding]))
    assert "ruleIndex" not in log["runs"][0]["results"][0]
    assert _errors(validator, log) == []


def test_real_catalog_rules_give_a_valid_log(validator: Validator) -> None:
    from dpcheck.catalog import load_catalog

    catalog = load_catalog()
    unparsable = Finding("DP001", Severity.WARNING, Span("broken.py", 3, 9), "invalid syntax")
    text = render_sarif(ScanResult(findings=[unparsable]), rules=catalog.rules, root=None)
    log = json.loads(text)
    assert _errors(validator, log) == []
    driver = log["runs"][0]["tool"]["driver"]
    dp001 = next(r for r in driver["rules"] if r["id"] == "DP001")
    assert dp001["name"] == "unparsable-file" and dp001["help"]["markdown"].strip()
    assert "engine" in dp001["properties"]["tags"]
    result = log["runs"][0]["results"][0]
    assert driver["rules"][result["ruleIndex"]]["id"] == "DP001"


def test_region_drops_an_end_before_the_start() -> None:
    spans = [Span("t.py", 5, 9, 5, 3), Span("t.py", 5, 9, 4, 20), Span("t.py", 5, 9, 6, 2)]
    regions = [
        _sarif(ScanResult(findings=[Finding("DP101", Severity.ERROR, s, "m")]))["runs"][0][
            "results"
        ][0]["locations"][0]["physicalLocation"]["region"]
        for s in spans
    ]
    assert regions == [
        {"startLine": 5, "startColumn": 9, "endLine": 5},
        {"startLine": 5, "startColumn": 9},
        {"startLine": 5, "startColumn": 9, "endLine": 6, "endColumn": 2},
    ]
