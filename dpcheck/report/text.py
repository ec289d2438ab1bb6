"""The human report: findings with code frames, pipelines, suppression issues, errors, summary.

Findings are grouped by file (sorted by path, line, column, rule), one block each. Shape::

    train.py:14:30: DP101 update divides the noisy sum by the realized batch size (ASGM), ...
      13 |             noisy = grads.sum(0) + torch.normal(0.0, SIGMA * CLIP, grads.shape[1:])
      14 |             update = noisy / len(batch)
         |                              ^^^^^^^^^^
      = evidence: train.py:9: RDP accountant assumes SGM + Poisson
      = bound: claimed eps = 2.97 (SGM, RDP, delta = 1e-05)
      = bound: corrected eps <= 8.41 (ASGM, Theorem 2)

    Pipelines:
      train.py:8 train: mechanism ASGM, sampling poisson, accountant opacus-rdp (assumes ...)

    Suppressions:
      train.py:7:30: unused suppression (DP102): no finding on line 7

    Errors:
      data/blob.py: cannot read: Permission denied

    Found 1 finding (1 error) in 12 files; 1 suppressed; 1 suppression issue; 1 scan error.

Columns are 1-based, as stored in the model. A span in a notebook is printed in its cell,
``tutorial.ipynb:cell 7:12:5:``, and its code frame shows that cell's lines, numbered in the cell.
Colour (ANSI) is used only when asked for.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

from dpcheck.locations import CellLayout, Location, locate, location_text
from dpcheck.model import Evidence, Finding, Pipeline, ScanError, ScanResult, Severity, Span
from dpcheck.report.frames import code_frame, source_lines
from dpcheck.report.meta import SuppressionNotice, bound_summary

_RESET = "\x1b[0m"
_BOLD = "\x1b[1m"
_DIM = "\x1b[2m"
_SEVERITY_COLOR: dict[Severity, str] = {
    Severity.ERROR: "\x1b[1;31m",
    Severity.WARNING: "\x1b[1;33m",
    Severity.INFO: "\x1b[1;36m",
}


class _Style:
    """Wraps text in ANSI codes when colour is on, and is the identity otherwise."""

    def __init__(self, color: bool) -> None:
        self.color = color

    def __call__(self, text: str, code: str) -> str:
        return f"{code}{text}{_RESET}" if self.color else text


def render_text(
    result: ScanResult,
    *,
    sources: Mapping[str, str],
    color: bool = False,
    quiet: bool = False,
) -> str:
    """Render ``result`` for a terminal; ``quiet`` leaves out the pipelines overview."""
    style = _Style(color)
    cells = result.cells
    blocks: list[list[str]] = []
    for finding in sorted(result.findings, key=Finding.sort_key):
        blocks.append(list(_finding_lines(finding, sources.get(finding.span.path), style, cells)))
    if result.pipelines and not quiet:
        blocks.append(_pipeline_lines(result.pipelines, style, cells))
    if result.suppression_issues:
        blocks.append(_suppression_lines(result.suppression_issues, style, cells))
    if result.errors:
        blocks.append(_error_lines(result.errors, style))
    blocks.append([summary_line(result)])
    return "\n\n".join("\n".join(block) for block in blocks) + "\n"


def _finding_lines(
    finding: Finding, source: str | None, style: _Style, cells: Mapping[str, CellLayout]
) -> Iterator[str]:
    """Header, code frame, evidence and bound summary of one finding."""
    location = locate(finding.span, cells.get(finding.span.path))
    header = style(f"{location_text(location)}:", _BOLD)
    rule = style(finding.rule, _SEVERITY_COLOR[finding.severity])
    yield f"{header} {rule} {finding.message}"
    if source is not None:
        yield from _frame_lines(_frame_source(source, location, cells), location, finding, style)
    for evidence in finding.evidence:
        yield f"  = evidence: {_evidence_text(evidence, cells)}"
    for line in bound_summary(finding.bound):
        yield f"  = bound: {line}"


def _frame_source(source: str, location: Location, cells: Mapping[str, CellLayout]) -> str:
    """The text the frame of ``location`` is cut from: the whole file, or in a notebook the
    lines of the location's cell (whose lines ``location`` counts)."""
    layout = cells.get(location.path)
    placed = layout.cell_lines(location.cell) if layout and location.cell is not None else None
    if placed is None:
        return source
    first, count = placed
    return "\n".join(source_lines(source)[first - 1 : first - 1 + count])


def _frame_lines(source: str, location: Location, finding: Finding, style: _Style) -> Iterator[str]:
    """The code frame with a gutter wide enough for the largest line number shown."""
    span = Span(location.path, location.line, location.column, location.end_line,
                location.end_column)
    rows = code_frame(source, span)
    width = max((len(str(n)) for n, _ in rows if n is not None), default=1)
    for number, text in rows:
        if number is None:
            yield f"  {' ' * width} | {style(text, _SEVERITY_COLOR[finding.severity])}"
        else:
            yield f"  {style(str(number).rjust(width), _DIM)} | {text}"


def _evidence_text(evidence: Evidence, cells: Mapping[str, CellLayout]) -> str:
    location = locate(evidence.span, cells.get(evidence.span.path))
    return f"{location_text(location, column=False)}: {evidence.note}"


def _pipeline_lines(
    pipelines: Sequence[Pipeline], style: _Style, cells: Mapping[str, CellLayout]
) -> list[str]:
    lines = [style("Pipelines:", _BOLD)]
    for p in pipelines:
        accountant = f"{p.accountant.name} (assumes {p.accountant.assumes})"
        where = location_text(locate(Span(p.path, p.line), cells.get(p.path)), column=False)
        lines.append(
            f"  {where} {p.entry}: mechanism {p.mechanism}, sampling {p.sampling}, "
            f"accountant {accountant}"
        )
    return lines


def _suppression_lines(
    notices: Sequence[SuppressionNotice], style: _Style, cells: Mapping[str, CellLayout]
) -> list[str]:
    lines = [style("Suppressions:", _BOLD)]
    lines.extend(
        f"  {location_text(locate(n.span, cells.get(n.span.path)))}: {n.message}" for n in notices
    )
    return lines


def _error_lines(errors: Sequence[ScanError], style: _Style) -> list[str]:
    lines = [style("Errors:", _BOLD)]
    lines.extend(f"  {e.path}: {e.message}" if e.path else f"  {e.message}" for e in errors)
    return lines


def _count(n: int, noun: str, plural: str | None = None) -> str:
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def summary_line(result: ScanResult) -> str:
    """E.g. ``Found 3 findings (1 error, 2 warnings) in 12 files; 1 suppressed.``"""
    files = _count(result.files_scanned, "file")
    if result.findings:
        by_severity = [
            _count(n, severity.value, "info" if severity is Severity.INFO else None)
            for severity in (Severity.ERROR, Severity.WARNING, Severity.INFO)
            if (n := sum(f.severity == severity for f in result.findings))
        ]
        head = f"Found {_count(len(result.findings), 'finding')} ({', '.join(by_severity)})"
    else:
        head = "No findings"
    tail = [f"{result.suppressed} suppressed"] if result.suppressed else []
    if result.suppression_issues:
        tail.append(_count(len(result.suppression_issues), "suppression issue"))
    if result.errors:
        tail.append(_count(len(result.errors), "scan error"))
    return f"{head} in {files}" + "".join(f"; {part}" for part in tail) + "."
