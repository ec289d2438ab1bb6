"""GitHub Actions workflow-command annotations: one line per finding, suppression issue, error.

``::error file=F,line=L,col=C,endLine=L2,endColumn=C2,title=DP101 [error] rule-name::message``;
warnings use ``::warning`` and info findings ``::notice``. An annotation is all a runner without
code scanning shows, and it is read on the diff, so it stays short: the finding's message, the
bound's one-line summary and the link to the rule page, each on its own (escaped) line. The
evidence is in the SARIF report and the text output; a verified fix adds one line (what it
does, and the command that applies it). Paths are relative to the repository (the
scan root), as the runner expects. Escaping follows the Actions runner: ``%``, CR and LF in the
message; additionally ``:`` and ``,`` in property values.

A finding in a Jupyter notebook is annotated on the notebook file without a line (a line of the
notebook's JSON is not a line of its code); its message starts with the cell location,
``cell 7:12:5:``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from dpcheck.locations import CellLayout, Location, locate, location_text
from dpcheck.model import Finding, ScanError, ScanResult, Severity, Span
from dpcheck.report.meta import (
    DEFAULT_DOCS_URL,
    RuleMeta,
    SuppressionNotice,
    bound_line,
    rule_page_url,
    rules_by_id,
)

_COMMAND: dict[Severity, str] = {
    Severity.ERROR: "error",
    Severity.WARNING: "warning",
    Severity.INFO: "notice",
}
_DATA_ESCAPES: tuple[tuple[str, str], ...] = (("%", "%25"), ("\r", "%0D"), ("\n", "%0A"))
_PROPERTY_ESCAPES: tuple[tuple[str, str], ...] = _DATA_ESCAPES + ((":", "%3A"), (",", "%2C"))


def _escape(text: str, escapes: tuple[tuple[str, str], ...]) -> str:
    for raw, escaped in escapes:
        text = text.replace(raw, escaped)
    return text


def escape_data(text: str) -> str:
    """Escape a command's message (the part after ``::``)."""
    return _escape(text, _DATA_ESCAPES)


def escape_property(text: str) -> str:
    """Escape a command property value (``file=``, ``title=``...)."""
    return _escape(text, _PROPERTY_ESCAPES)


def workflow_command(command: str, properties: dict[str, object], message: str) -> str:
    """``::command k=v,...::message`` with every value and the message escaped."""
    props = ",".join(f"{key}={escape_property(str(value))}" for key, value in properties.items())
    return f"::{command}{' ' + props if props else ''}::{escape_data(message)}"


def _position(span: Span, cells: Mapping[str, CellLayout]) -> tuple[dict[str, object], str]:
    """The annotation's position properties and the prefix its message needs: the file, line
    and columns of a Python file; the notebook file alone, the cell location in the message."""
    location = locate(span, cells.get(span.path))
    if location.cell is not None:
        return {"file": span.path}, f"{_in_cell(location)}: "
    properties: dict[str, object] = {"file": span.path, "line": span.line, "col": span.column}
    if span.end_line is not None:
        properties["endLine"] = span.end_line
    if span.end_column is not None:
        properties["endColumn"] = span.end_column
    return properties, ""


def _in_cell(location: Location) -> str:
    """``cell 7:12:5`` (the location text without its path)."""
    return location_text(location).removeprefix(f"{location.path}:")


def _finding_command(finding: Finding, rules: dict[str, RuleMeta], docs_url: str,
                     cells: Mapping[str, CellLayout]) -> str:
    properties, prefix = _position(finding.span, cells)
    rule = rules.get(finding.rule)
    severity = f"[{finding.severity.value}]"
    properties["title"] = " ".join([finding.rule, severity, *([rule.name] if rule else [])])
    lines = [prefix + finding.message]
    if (bound := bound_line(finding.bound)) is not None:
        lines.append(f"bound: {bound}")
    if finding.fix is not None:
        flags = "--fix" if finding.fix.safety == "safe" else "--fix --unsafe-fixes"
        lines.append(f"fix: {finding.fix.message} (dpcheck scan {flags})")
    if rule is not None:
        lines.append(f"rule: {rule_page_url(rule, docs_url)}")
    return workflow_command(_COMMAND[finding.severity], properties, "\n".join(lines))


def _suppression_command(notice: SuppressionNotice, cells: Mapping[str, CellLayout]) -> str:
    properties, prefix = _position(notice.span, cells)
    properties["title"] = f"dpcheck {notice.kind} suppression"
    return workflow_command("warning", properties, prefix + notice.message)


def _error_command(error: ScanError) -> str:
    return workflow_command("error", {"file": error.path} if error.path else {}, error.message)


def render_github(
    result: ScanResult, *, rules: Sequence[RuleMeta], docs_url: str = DEFAULT_DOCS_URL
) -> str:
    """All annotations (findings in the result's order, suppression issues, scan errors,
    warnings)."""
    index = rules_by_id(rules)
    lines = [_finding_command(f, index, docs_url, result.cells) for f in result.findings]
    lines += [_suppression_command(n, result.cells) for n in result.suppression_issues]
    lines += [_error_command(e) for e in result.errors]
    lines += [workflow_command("warning", {"title": "dpcheck"}, w) for w in result.warnings]
    return "".join(line + "\n" for line in lines)
