"""GitHub workflow-command annotations and their escaping."""

from __future__ import annotations

import re

from dpcheck.model import Evidence, Finding, ScanError, ScanResult, Severity, Span
from dpcheck.report.github import escape_data, escape_property, render_github
from dpcheck.suppress import SuppressionIssue
from tests.report.conftest import RULES, Project

COMMAND = re.compile(r"^::(?P<name>[a-z]+)(?: (?P<props>[^:]*))?::(?P<message>.*)$")


def _unescape(text: str) -> str:
    """The Actions runner's unescaping (``%25`` last, so ``%253A`` stays ``%3A``)."""
    for escaped, raw in (("%0D", "\r"), ("%0A", "\n"), ("%3A", ":"), ("%2C", ","), ("%25", "%")):
        text = text.replace(escaped, raw)
    return text


def _parse(line: str) -> tuple[str, dict[str, str], str]:
    match = COMMAND.match(line)
    assert match, line
    props = dict(p.split("=", 1) for p in match["props"].split(",")) if match["props"] else {}
    return match["name"], {k: _unescape(v) for k, v in props.items()}, _unescape(match["message"])


def test_message_escaping_of_newline_percent_colon_comma() -> None:
    message = "eps: 3.0, not 8.4\n100% of steps\r\nuse %0A literally"
    assert escape_data(message) == "eps: 3.0, not 8.4%0A100%25 of steps%0D%0Ause %250A literally"
    assert escape_property("a:b,c%d\ne") == "a%3Ab%2Cc%25d%0Ae"
    finding = Finding("DP999", Severity.WARNING, Span("t.py", 2, 5), message)
    (line,) = render_github(ScanResult(findings=[finding]), rules=RULES).splitlines()
    assert line.endswith("::eps: 3.0, not 8.4%0A100%25 of steps%0D%0Ause %250A literally")
    assert _parse(line)[2] == message


def test_property_values_are_escaped() -> None:
    finding = Finding("DP105", Severity.INFO, Span("src/a,b:c.py", 3, 1), "unpinned")
    (line,) = render_github(ScanResult(findings=[finding]), rules=RULES).splitlines()
    assert line.startswith(
        "::notice file=src/a%2Cb%3Ac.py,line=3,col=1,title=DP105 [info] unpinned-dp-library::"
    )
    assert _parse(line)[1]["file"] == "src/a,b:c.py"


def test_one_annotation_per_finding_with_location_and_title(project: Project) -> None:
    lines = render_github(project.result, rules=RULES).splitlines()
    parsed = [_parse(line) for line in lines]
    assert [name for name, _, _ in parsed] == ["notice", "error", "warning"]
    _, props, message = parsed[1]
    asgm = project.result.findings[1]
    assert props == {
        "file": "train.py",
        "line": str(asgm.span.line),
        "col": str(asgm.span.column),
        "endLine": str(asgm.span.end_line),
        "endColumn": str(asgm.span.end_column),
        "title": "DP101 [error] normalized-update-accounted-as-sgm",
    }
    first, *details = message.split("\n")
    assert first == asgm.message
    # the message, the bound in one line and the rule's own page: no evidence on the diff
    assert details == [
        "bound: claimed eps = 2.97 (SGM, RDP, delta = 1e-05); corrected eps <= 8.41 (ASGM witness)",
        "rule: https://example.org/dpcheck/rules/DP101",
    ]
    _, _, unpinned = parsed[0]
    assert unpinned.split("\n")[1:] == [
        "rule: https://github.com/dpcheck/dpcheck/blob/main/docs/rules/DP105.md"
    ]


def test_rule_links_follow_the_docs_url() -> None:
    finding = Finding("DP102", Severity.WARNING, Span("t.py", 1, 1), "shuffled")
    (line,) = render_github(
        ScanResult(findings=[finding]), rules=RULES, docs_url="https://docs.example.org/rules/"
    ).splitlines()
    assert _parse(line)[2] == "shuffled\nrule: https://docs.example.org/rules/DP102.md"


def test_unknown_rule_title_is_the_id_and_no_evidence() -> None:
    finding = Finding(
        "DP999",
        Severity.ERROR,
        Span("t.py", 1, 1),
        "plugin",
        evidence=(Evidence("noise", Span("t.py", 1, 1), "sigma, C"),),
    )
    (line,) = render_github(ScanResult(findings=[finding]), rules=RULES).splitlines()
    assert line == "::error file=t.py,line=1,col=1,title=DP999 [error]::plugin"


def test_errors_and_suppression_issues(failed_project: Project) -> None:
    notice = SuppressionIssue(Span("train.py", 7, 30), "unused", "unused suppression (DP102)")
    result = failed_project.result
    result.suppression_issues.append(notice)
    result.errors.append(ScanError("", "internal error: boom"))
    lines = render_github(result, rules=RULES).splitlines()
    assert lines[-3:] == [
        "::warning file=train.py,line=7,col=30,title=dpcheck unused suppression::"
        "unused suppression (DP102)",
        "::error file=data/blob.py::cannot read: Permission denied",
        "::error::internal error: boom",
    ]


def test_no_findings_no_output() -> None:
    assert render_github(ScanResult(files_scanned=3), rules=RULES) == ""


def test_run_warnings_are_warning_annotations() -> None:
    result = ScanResult(warnings=["nothing was scanned: no Python file found in src"])
    (line,) = render_github(result, rules=RULES).splitlines()
    assert _parse(line) == (
        "warning", {"title": "dpcheck"}, "nothing was scanned: no Python file found in src"
    )
