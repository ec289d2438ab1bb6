"""Rule functions DP101-DP106 over classified pipelines (the catalog text lives in ``rules/``).

``evaluate`` is pure: pipelines and the project view in, findings out, only for files the scan
reports on, sorted by path, line and rule.
"""

from __future__ import annotations

from collections.abc import Sequence

from dpcheck.catalog import load_catalog
from dpcheck.model import Finding, Pipeline, Severity
from dpcheck.project import Project
from dpcheck.rules.checks import CHECKS, findings_of


def _severity(rule: str) -> Severity:
    return Severity(load_catalog().get(rule).severity)


def evaluate(pipelines: Sequence[Pipeline], project: Project) -> list[Finding]:
    """Every DP101-DP106 finding of ``pipelines`` whose anchor file ``project`` reports on."""
    found: dict[tuple[str, str, int, str | None], Finding] = {}
    for pipeline in pipelines:
        for finding in findings_of(pipeline, project, _severity):
            if project.is_reported(finding.span.path):
                key = (finding.rule, finding.span.path, finding.span.line, finding.pipeline)
                found.setdefault(key, finding)
    return sorted(found.values(), key=Finding.sort_key)


__all__ = ["CHECKS", "evaluate"]
