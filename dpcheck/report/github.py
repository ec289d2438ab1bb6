"""GitHub Actions workflow-command annotations: one line per finding, suppression issue, error.

``::error file=F,line=L,col=C,endLine=L2,endColumn=C2,title=DP101 rule-name::message``; warnings
use ``::warning`` and info findings ``::notice``. The message carries the evidence and the bound
summary on further (escaped) lines, since an annotation is all a runner without code scanning
shows. Escaping follows the Actions runner: ``%``, CR and LF in the message; additionally ``:``
and ``,`` in property values.

A finding in a Jupyter notebook is annotated on the notebook file without a line (a line of the
notebook's JSON is not a line of its code); its message starts with the cell location,
``cell 7:12:5:``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from dpcheck.locations import CellLayout, Location, locate, location_text
from dpcheck.model import Finding, ScanError, ScanResult, Severity, Span
from dpcheck.report.meta import RuleMeta, SuppressionNotice, bound_summary, rules_by_id

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


def _finding_command(
    finding: Finding, rules: dict[str, RuleMeta], cells: Mapping[str, CellLayout]
) -> str:
    properties, prefix = _position(finding.span, cells)
    rule = rules.get(finding.rule)
    properties["title"] = f"{finding.rule} {rule.name}" if rule else finding.rule
    details = [
        f"evidence: {location_text(locate(e.span, cells.get(e.span.path)), column=False)}: {e.note}"
        for e in finding.evidence
    ]
    details += [f"bound: {line}" for line in bound_summary(finding.bound)]
    return workflow_command(
        _COMMAND[finding.severity], properties, "\n".join([prefix + finding.message, *details])
    )


def _suppression_command(notice: SuppressionNotice, cells: Mapping[str, CellLayout]) -> str:
    properties, prefix = _position(notice.span, cells)
    properties["title"] = f"dpcheck {notice.kind} suppression"
    return workflow_command("warning", properties, prefix + notice.message)


def _error_command(error: ScanError) -> str:
    return workflow_command("error", {"file": error.path} if error.path else {}, error.message)


def render_github(result: ScanResult, *, rules: Sequence[RuleMeta]) -> str:
    """All annotations (findings in the result's order, suppression issues, scan errors)."""
    index = rules_by_id(rules)
    lines = [_finding_command(f, index, result.cells) for f in result.findings]
    lines += [_suppression_command(n, result.cells) for n in result.suppression_issues]
    lines += [_error_command(e) for e in result.errors]
    return "".join(line + "\n" for line in lines)
