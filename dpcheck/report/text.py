"""The human report, in two styles: ``full`` (the default) and ``concise`` (one line a finding).

Findings are sorted by path, line, column and rule. Every finding line carries its severity.
``full`` adds a code frame, the evidence and the bound under each finding, the pipelines
overview (unless quiet), and sections for suppression issues and scan errors::

    train.py:14:30: DP101 [error] update divides the noisy sum by the realized batch size (ASGM), ...
      13 |             noisy = grads.sum(0) + torch.normal(0.0, SIGMA * CLIP, grads.shape[1:])
      14 |             update = noisy / len(batch)
         |                              ^^^^^^^^^^
      = evidence: train.py:9: RDP accountant assumes SGM + Poisson
      = evidence: sigma = 1.1 (override from --param)
      = bound: claimed eps = 2.97 (SGM, RDP, delta = 1e-05)
      = bound: corrected eps <= 8.41 (ASGM witness)
      = fix: divide by BATCH (the batch-size hyper-parameter) instead of len(batch) [safe]

    Pipelines:
      train.py:8: mechanism ASGM, sampling poisson, accountant opacus-rdp (assumes ...), entry train

    Suppressions:
      train.py:7:30: [warning] unused suppression (DP102): no finding on its own line

    Errors:
      data/blob.py: [error] cannot read: Permission denied

    Found 1 finding (1 error) in 12 files; 1 suppressed; 1 suppression issue; 1 scan error.
    [*] 1 fixable with `dpcheck scan --fix`.

``concise`` prints only the finding lines (with ``show_evidence``, each followed by its evidence
and bound lines), one line per suppression issue and scan error, and the summary. Paths are shown
relative to the current folder (:mod:`dpcheck.report.locations`); columns are 1-based. A finding
whose fix ``--fix`` applies (a safe one, or any with ``unsafe_fixes``) is marked ``[*]`` after its
severity, as ruff marks fixable violations; ``full`` lists under each finding its fix (``= fix:``,
with a ``= fix note:`` when the fix has one) or why it has none (``= no fix:``), and a last line
counts the fixable findings. A span in
a notebook is printed in its cell, ``tutorial.ipynb:cell 7:12:5:``, and its code frame shows that
cell's lines, numbered in the cell. Colour (ANSI) is used only when asked for.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

from dpcheck.model import (
    Evidence,
    Finding,
    ParamValue,
    Pipeline,
    ScanError,
    ScanResult,
    Severity,
    Span,
)
from dpcheck.locations import CellLayout, locate
from dpcheck.report.frames import code_frame, source_lines
from dpcheck.report.locations import PathView, location
from dpcheck.report.meta import SuppressionNotice, bound_summary

TEXT_STYLES: tuple[str, ...] = ("full", "concise")

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
    style: str = "full",
    show_evidence: bool = False,
    paths: PathView = PathView(),
    unsafe_fixes: bool = False,
) -> str:
    """Render ``result`` for a terminal in ``style`` (``full`` or ``concise``).

    ``quiet`` leaves out the pipelines overview of ``full``; ``show_evidence`` adds the evidence
    and bound lines to ``concise`` (``full`` always has them); ``unsafe_fixes`` marks the unsafe
    fixes fixable too.
    """
    if style not in TEXT_STYLES:
        raise ValueError(f"unknown text style {style!r}")
    writer = _Writer(_Style(color), paths, _overrides(result.pipelines), result.cells,
                     unsafe_fixes)
    if style == "concise":
        lines: list[str] = []
        for finding in sorted(result.findings, key=Finding.sort_key):
            lines.append(writer.header(finding))
            if show_evidence:
                lines.extend(writer.details(finding))
        lines += [writer.notice(n) for n in result.suppression_issues]
        lines += [writer.error(e) for e in result.errors]
        return "".join(f"{line}\n" for line in [*lines, summary_line(result),
                                                  *fixable_lines(result, unsafe_fixes)])
    blocks: list[list[str]] = []
    for finding in sorted(result.findings, key=Finding.sort_key):
        blocks.append(list(writer.finding(finding, sources.get(finding.span.path))))
    if result.pipelines and not quiet:
        blocks.append(writer.pipelines(result.pipelines))
    if result.suppression_issues:
        blocks.append(writer.section("Suppressions:", [writer.notice(n) for n in result.suppression_issues]))
    if result.errors:
        blocks.append(writer.section("Errors:", [writer.error(e) for e in result.errors]))
    blocks.append([summary_line(result), *fixable_lines(result, unsafe_fixes)])
    return "\n\n".join("\n".join(block) for block in blocks) + "\n"


def _overrides(pipelines: Sequence[Pipeline]) -> dict[str, list[ParamValue]]:
    """Per pipeline entry, the parameters a ``--param`` or the config's ``params`` supplied."""
    return {
        p.entry: [v for _, v in sorted(p.params.items()) if v.source == "override"]
        for p in pipelines
    }


class _Writer:
    """The lines of one text report, sharing its colour, path view and overrides."""

    def __init__(self, style: _Style, paths: PathView, overrides: dict[str, list[ParamValue]],
                 cells: Mapping[str, CellLayout], unsafe_fixes: bool = False) -> None:
        self.style = style
        self.paths = paths
        self.overrides = overrides
        self.cells = cells
        self.unsafe_fixes = unsafe_fixes

    def where(self, span: Span, *, column: bool = True) -> str:
        """The span's location as a person opens it (a notebook's in its cell)."""
        return location(span, self.paths, self.cells, column=column)

    def header(self, finding: Finding) -> str:
        """``path:line:col: DP101 [error] message``."""
        color = _SEVERITY_COLOR[finding.severity]
        where = self.style(f"{self.where(finding.span)}:", _BOLD)
        rule = self.style(finding.rule, color)
        severity = self.style(f"[{finding.severity.value}]", color)
        mark = " [*]" if applies(finding, self.unsafe_fixes) else ""
        return f"{where} {rule} {severity}{mark} {finding.message}"

    def finding(self, finding: Finding, source: str | None) -> Iterator[str]:
        """Header, code frame, evidence and bound summary of one finding."""
        yield self.header(finding)
        if source is not None:
            yield from self._frame(source, finding)
        yield from self.details(finding)

    def details(self, finding: Finding) -> Iterator[str]:
        """The evidence (overridden parameters included) and the bound summary lines."""
        for evidence in finding.evidence:
            yield f"  = evidence: {self._evidence(evidence)}"
        for value in self.overrides.get(finding.pipeline or "", ()):
            origin = (value.expression or "").rpartition(": ")[0] or "an override"
            yield f"  = evidence: {value.name} = {value.value} (override from {origin})"
        for line in bound_summary(finding.bound):
            yield f"  = bound: {line}"
        if finding.fix is not None:
            flags = "--fix" if finding.fix.safety == "safe" else "--fix --unsafe-fixes"
            yield f"  = fix: {finding.fix.message} [{finding.fix.safety}: dpcheck scan {flags}]"
            if finding.fix.note:
                yield f"  = fix note: {finding.fix.note}"
        elif finding.fix_reason:
            yield f"  = no fix: {finding.fix_reason}"

    def _frame(self, source: str, finding: Finding) -> Iterator[str]:
        """The code frame with a gutter wide enough for the largest line number shown; in a
        notebook, the lines of the finding's cell numbered in the cell."""
        span = finding.span
        layout = self.cells.get(span.path)
        placed = locate(span, layout)
        lines = layout.cell_lines(placed.cell) if layout and placed.cell is not None else None
        if lines is not None:
            first, count = lines
            source = "\n".join(source_lines(source)[first - 1: first - 1 + count])
            span = Span(span.path, placed.line, placed.column, placed.end_line, placed.end_column)
        rows = code_frame(source, span)
        width = max((len(str(n)) for n, _ in rows if n is not None), default=1)
        for number, text in rows:
            if number is None:
                yield f"  {' ' * width} | {self.style(text, _SEVERITY_COLOR[finding.severity])}"
            else:
                yield f"  {self.style(str(number).rjust(width), _DIM)} | {text}"

    def _evidence(self, evidence: Evidence) -> str:
        return f"{self.where(evidence.span, column=False)}: {evidence.note}"

    def pipelines(self, pipelines: Sequence[Pipeline]) -> list[str]:
        """One line per pipeline; the entry is named only when it is not the file itself."""
        lines = []
        for p in pipelines:
            where = self.where(Span(p.path, p.line), column=False)
            entry = f", entry {p.entry}" if p.entry != p.path else ""
            lines.append(
                f"  {where}: mechanism {p.mechanism}, sampling {p.sampling}, accountant "
                f"{p.accountant.name} (assumes {p.accountant.assumes}){entry}"
            )
        return self.section("Pipelines:", [line.strip() for line in lines])

    def notice(self, notice: SuppressionNotice) -> str:
        return f"{self.where(notice.span)}: [warning] {notice.message}"

    def error(self, error: ScanError) -> str:
        where = f"{self.paths.show(error.path)}: " if error.path else ""
        return f"{where}[error] {error.message}"

    def section(self, title: str, lines: Sequence[str]) -> list[str]:
        return [self.style(title, _BOLD), *(f"  {line}" for line in lines)]


def _count(n: int, noun: str, plural: str | None = None) -> str:
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def applies(finding: Finding, unsafe_fixes: bool) -> bool:
    """Whether ``dpcheck scan --fix`` (with ``--unsafe-fixes`` when ``unsafe_fixes``) applies the
    finding's fix."""
    return finding.fix is not None and (unsafe_fixes or finding.fix.safety == "safe")


def fixable_lines(result: ScanResult, unsafe_fixes: bool) -> list[str]:
    """ruff's last line: how many findings ``--fix`` fixes, and how many more unsafe fixes
    would (nothing when there are none)."""
    fixable = sum(applies(f, unsafe_fixes) for f in result.findings)
    hidden = sum(f.fix is not None for f in result.findings) - fixable
    if not fixable and not hidden:
        return []
    flags = "--fix --unsafe-fixes" if unsafe_fixes else "--fix"
    more = f" ({hidden} more with `--unsafe-fixes`)" if hidden else ""
    if not fixable:
        return [f"{_count(hidden, 'unsafe fix', 'unsafe fixes')} available with "
                "`dpcheck scan --fix --unsafe-fixes`."]
    return [f"[*] {fixable} fixable with `dpcheck scan {flags}`{more}."]


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
