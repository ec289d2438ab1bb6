"""How every format shows a finding's fix: ``[*]`` and ``= fix:`` lines in text (an unsafe fix
marked only when unsafe fixes are on), the ``fix`` object in JSON, ``fixes[]`` with
``artifactChanges`` in SARIF (valid against the official schema), one line in annotations."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import jsonschema

from dpcheck.model import Finding, FindingFix, ScanResult, Severity, Span, TextEdit
from dpcheck.report import RenderOptions, render
from tests.report.conftest import RULES

SARIF_SCHEMA = json.loads((Path(__file__).parents[1] / "data" / "sarif-schema-2.1.0.json")
                          .read_text("utf-8"))
REPORT_SCHEMA = json.loads((Path(__file__).parents[2] / "docs" / "report.schema.json")
                           .read_text("utf-8"))
FIX = FindingFix("divide-by-batch-size", "Divide by the batch size", "safe",
                 "divide by BATCH (the batch-size hyper-parameter) instead of len(batch)",
                 (TextEdit(Span("train.py", 14, 30, 14, 40), "BATCH"),))
FINDING = Finding("DP101", Severity.ERROR, Span("train.py", 14, 13, 14, 40),
                  "the update is ASGM", pipeline="train.py", context="update = noisy / len(batch)")


def _result(*findings: Finding) -> ScanResult:
    return ScanResult(findings=list(findings), files_scanned=1)


def _text(result: ScanResult, style: str, unsafe: bool = False) -> str:
    return render(result, style, sources={}, rules=RULES,
                  options=RenderOptions(unsafe_fixes=unsafe))


def test_text_marks_a_safe_fix_and_counts_it() -> None:
    result = _result(replace(FINDING, fix=FIX))
    concise = _text(result, "concise").splitlines()
    assert concise == ["train.py:14:13: DP101 [error] [*] the update is ASGM",
                       "Found 1 finding (1 error) in 1 file.",
                       "[*] 1 fixable with `dpcheck scan --fix`."]
    full = _text(result, "full")
    assert ("  = fix: divide by BATCH (the batch-size hyper-parameter) instead of len(batch) "
            "[safe: dpcheck scan --fix]") in full.splitlines()


def test_an_unsafe_fix_is_marked_only_with_unsafe_fixes() -> None:
    unsafe = replace(FINDING, fix=replace(FIX, safety="unsafe", note="the update rule stays"))
    hidden = _text(_result(unsafe), "full").splitlines()
    assert hidden[0] == "train.py:14:13: DP101 [error] the update is ASGM"
    assert "  = fix note: the update rule stays" in hidden
    assert hidden[-1] == "1 unsafe fix available with `dpcheck scan --fix --unsafe-fixes`."
    shown = _text(_result(unsafe, replace(FINDING, fix=FIX, span=Span("b.py", 1))), "concise",
                  unsafe=True).splitlines()
    assert shown[0].startswith("b.py:1:1: DP101 [error] [*] ")
    assert shown[1].startswith("train.py:14:13: DP101 [error] [*] ")
    assert shown[-1] == "[*] 2 fixable with `dpcheck scan --fix --unsafe-fixes`."


def test_text_says_why_there_is_no_fix_and_nothing_without_fixes() -> None:
    reasoned = replace(FINDING, fix_reason="q comes from the data")
    assert "  = no fix: q comes from the data" in _text(_result(reasoned), "full").splitlines()
    plain = _text(_result(FINDING), "full")
    assert "fix" not in plain and "[*]" not in plain


def test_json_carries_the_fix_object() -> None:
    document = json.loads(render(_result(replace(FINDING, fix=FIX)), "json", sources={},
                                 rules=RULES))
    jsonschema.validate(document, REPORT_SCHEMA)
    [finding] = document["findings"]
    assert finding["fix"] == {
        "id": "divide-by-batch-size", "title": "Divide by the batch size", "safety": "safe",
        "message": FIX.message, "note": None,
        "edits": [{"path": "train.py", "display_path": "train.py", "cell": None, "line": 14,
                   "column": 30, "end_line": 14, "end_column": 40, "content": "BATCH"}]}
    assert finding["fix_reason"] is None
    bare = json.loads(render(_result(FINDING), "json", sources={}, rules=RULES))
    assert bare["findings"][0]["fix"] is None


def test_sarif_carries_fixes_with_artifact_changes() -> None:
    log = json.loads(render(_result(replace(FINDING, fix=FIX)), "sarif", sources={}, rules=RULES))
    jsonschema.Draft7Validator(SARIF_SCHEMA).validate(log)
    [result] = log["runs"][0]["results"]
    assert result["fixes"] == [{
        "description": {"text": f"Divide by the batch size: {FIX.message}"},
        "artifactChanges": [{
            "artifactLocation": {"uri": "train.py", "uriBaseId": "%SRCROOT%"},
            "replacements": [{"deletedRegion": {"startLine": 14, "startColumn": 30,
                                                "endLine": 14, "endColumn": 40},
                              "insertedContent": {"text": "BATCH"}}]}],
        "properties": {"id": "divide-by-batch-size", "safety": "safe"},
    }]
    plain = json.loads(render(_result(FINDING), "sarif", sources={}, rules=RULES))
    assert "fixes" not in plain["runs"][0]["results"][0]


def test_an_annotation_gets_one_fix_line() -> None:
    line = render(_result(replace(FINDING, fix=FIX)), "github", sources={}, rules=RULES)
    assert f"%0Afix: {FIX.message} (dpcheck scan --fix)%0A" in line
