"""SARIF 2.1.0 for GitHub code scanning: one run, the rule catalog as ``tool.driver.rules``.

Each finding becomes a result with ``ruleId``/``ruleIndex``, ``level`` (``note`` for info), its
location relative to ``%SRCROOT%`` with a 1-based region (columns counted in Unicode code points,
declared by ``columnKind``), the evidence as ``relatedLocations``, the model's fingerprint under
``partialFingerprints["dpcheck/v1"]`` (stable across runs and line shifts, so code scanning
tracks an alert through edits) and the pipeline and bound under ``properties``. A finding with a
verified fix carries it as ``fixes[]``: a description, the ``artifactChanges`` (each file's
``replacements``: the ``deletedRegion`` and the ``insertedContent``) and the fix's id and safety
under ``properties``. Scan errors are
``error`` notifications of the single invocation, which then reports ``executionSuccessful:
false``; suppression issues and the run's warnings are ``warning`` notifications. The driver's
``informationUri`` is the index of the rule pages and each rule's ``helpUri`` its page (base URL
configurable, see :mod:`dpcheck.report.meta`).

A location in a Jupyter notebook names the notebook, with the line of the module its code cells
make (the concatenated source, as ruff reports it) and the column in the cell's own text; the
location's ``properties`` add the ``cell`` number and the ``cellLine`` in it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from dpcheck import __version__
from dpcheck.locations import CellLayout, locate
from dpcheck.model import Evidence, Finding, FindingFix, ScanError, ScanResult, Severity, Span
from dpcheck.report.escape import uri_path
from dpcheck.report.jsonable import strict_json
from dpcheck.report.meta import (
    DEFAULT_DOCS_URL,
    RuleMeta,
    SuppressionNotice,
    rule_page_url,
    rules_index_url,
)

SARIF_SCHEMA = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)
SARIF_VERSION = "2.1.0"
SRCROOT = "%SRCROOT%"
FINGERPRINT_KEY = "dpcheck/v1"
RULE_TAGS: tuple[str, ...] = ("differential-privacy", "privacy")

_LEVEL: dict[Severity, str] = {
    Severity.ERROR: "error",
    Severity.WARNING: "warning",
    Severity.INFO: "note",
}
_PROBLEM_SEVERITY: dict[Severity, str] = {
    Severity.ERROR: "error",
    Severity.WARNING: "warning",
    Severity.INFO: "recommendation",
}


def _text(text: str) -> dict[str, str]:
    return {"text": text}


def _artifact_location(path: str) -> dict[str, str]:
    """A relative path becomes a percent-encoded URI reference under ``%SRCROOT%`` (RFC 3986:
    the name's bytes, so a name that is not UTF-8 keeps its identity)."""
    posix = PurePosixPath(path)
    if posix.is_absolute():
        return {"uri": Path(path).as_uri()}
    return {"uri": uri_path(posix.as_posix()), "uriBaseId": SRCROOT}


def _region(span: Span) -> dict[str, int]:
    """The 1-based region; an end that lies before the start is left out, not emitted invalid."""
    region = {"startLine": span.line, "startColumn": span.column}
    end_line = span.line if span.end_line is None else span.end_line
    if end_line < span.line:
        return region
    if span.end_line is not None:
        region["endLine"] = end_line
    if span.end_column is not None and (end_line > span.line or span.end_column >= span.column):
        region["endColumn"] = span.end_column
    return region


def _physical_location(span: Span) -> dict[str, Any]:
    return {"artifactLocation": _artifact_location(span.path), "region": _region(span)}


def _location(span: Span, cells: Mapping[str, CellLayout]) -> dict[str, Any]:
    """A SARIF ``location``: the span's physical location; in a notebook its line in the
    concatenated cells, its columns in the cell's text, and the cell in ``properties``."""
    placed = locate(span, cells.get(span.path))
    if placed.cell is None:
        return {"physicalLocation": _physical_location(span)}
    in_text = Span(span.path, span.line, placed.column, span.end_line, placed.end_column)
    return {
        "physicalLocation": _physical_location(in_text),
        "properties": {"cell": placed.cell, "cellLine": placed.line},
    }


def _rule_descriptor(rule: RuleMeta, docs_url: str) -> dict[str, Any]:
    """The rule's ``reportingDescriptor``; a catalog rule's optional ``tags`` join the defaults."""
    severity = Severity(rule.severity)
    descriptor: dict[str, Any] = {
        "id": rule.id,
        "name": rule.name,
        "shortDescription": _text(rule.summary),
        "fullDescription": _text(rule.summary),
        "help": {"text": rule.help_text, "markdown": rule.help_text},
        "defaultConfiguration": {"level": _LEVEL[severity]},
        "properties": {
            "tags": [*RULE_TAGS, *getattr(rule, "tags", ())],
            "problem.severity": _PROBLEM_SEVERITY[severity],
        },
    }
    descriptor["helpUri"] = rule_page_url(rule, docs_url)
    return descriptor


def _related_location(
    index: int, evidence: Evidence, cells: Mapping[str, CellLayout]
) -> dict[str, Any]:
    return {
        "id": index,
        **_location(evidence.span, cells),
        "message": _text(f"{evidence.role}: {evidence.note}"),
    }


def _result(
    finding: Finding, rule_index: dict[str, int], cells: Mapping[str, CellLayout]
) -> dict[str, Any]:
    result: dict[str, Any] = {"ruleId": finding.rule}
    if finding.rule in rule_index:
        result["ruleIndex"] = rule_index[finding.rule]
    result["level"] = _LEVEL[finding.severity]
    result["message"] = _text(finding.message)
    result["locations"] = [_location(finding.span, cells)]
    if finding.evidence:
        result["relatedLocations"] = [
            _related_location(i, e, cells) for i, e in enumerate(finding.evidence, start=1)
        ]
    if finding.fix is not None:
        result["fixes"] = [_fix(finding.fix)]
    result["partialFingerprints"] = {FINGERPRINT_KEY: finding.fingerprint}
    properties = {"pipeline": finding.pipeline, "bound": finding.bound}
    if present := {k: v for k, v in properties.items() if v is not None}:
        result["properties"] = strict_json(present)
    return result


def _fix(fix: FindingFix) -> dict[str, Any]:
    """A SARIF ``fix``: the edits grouped by file as ``artifactChanges``."""
    by_path: dict[str, list[dict[str, Any]]] = {}
    for edit in fix.edits:
        by_path.setdefault(edit.span.path, []).append(
            {"deletedRegion": _region(edit.span), "insertedContent": {"text": edit.content}})
    return {
        "description": _text(f"{fix.title}: {fix.message}"),
        "artifactChanges": [{"artifactLocation": _artifact_location(path), "replacements": edits}
                            for path, edits in by_path.items()],
        "properties": {"id": fix.id, "safety": fix.safety},
    }


def _notification(error: ScanError) -> dict[str, Any]:
    notification: dict[str, Any] = {"level": "error", "message": _text(error.message)}
    if error.path:
        notification["locations"] = [
            {"physicalLocation": {"artifactLocation": _artifact_location(error.path)}}
        ]
    return notification


def _suppression_notification(
    notice: SuppressionNotice, cells: Mapping[str, CellLayout]
) -> dict[str, Any]:
    return {
        "level": "warning",
        "message": _text(notice.message),
        "locations": [_location(notice.span, cells)],
        "properties": {"kind": notice.kind},
    }


def _original_uri_base_ids(root: Path | None) -> dict[str, Any]:
    """Where ``%SRCROOT%`` is; without a root, code scanning resolves it to the checkout."""
    if root is None:
        return {SRCROOT: {"description": _text("The root of the scanned project.")}}
    return {SRCROOT: {"uri": root.absolute().as_uri().rstrip("/") + "/"}}


def sarif_log(
    result: ScanResult,
    *,
    rules: Sequence[RuleMeta],
    root: Path | None,
    docs_url: str = DEFAULT_DOCS_URL,
) -> dict[str, Any]:
    """The SARIF log object (before serialisation). ``informationUri`` is the index of the rule
    pages under ``docs_url``, each rule's ``helpUri`` its page."""
    rule_index = {rule.id: i for i, rule in enumerate(rules)}
    invocation: dict[str, Any] = {"executionSuccessful": not result.errors}
    notifications = [_notification(e) for e in result.errors]
    notifications += [
        _suppression_notification(n, result.cells) for n in result.suppression_issues
    ]
    notifications += [{"level": "warning", "message": _text(w)} for w in result.warnings]
    if notifications:
        invocation["toolExecutionNotifications"] = notifications
    run = {
        "tool": {
            "driver": {
                "name": "dpcheck",
                "version": __version__,
                "semanticVersion": __version__,
                "informationUri": rules_index_url(docs_url),
                "rules": [_rule_descriptor(rule, docs_url) for rule in rules],
            }
        },
        "invocations": [invocation],
        "originalUriBaseIds": _original_uri_base_ids(root),
        "columnKind": "unicodeCodePoints",
        "results": [_result(f, rule_index, result.cells) for f in result.findings],
    }
    return {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": [run]}


def render_sarif(
    result: ScanResult,
    *,
    rules: Sequence[RuleMeta],
    root: Path | None,
    docs_url: str = DEFAULT_DOCS_URL,
) -> str:
    """The SARIF document as indented JSON with a trailing newline."""
    log = strict_json(sarif_log(result, rules=rules, root=root, docs_url=docs_url))
    return json.dumps(log, indent=2, allow_nan=False) + "\n"
