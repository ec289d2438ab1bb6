"""Render the history table as Markdown, JSON, CSV, plain text, or the shipped version table.

JSON always carries every row's evidence (path:line at that tag); Markdown and text show it
with ``evidence=True``; CSV adds an ``evidence`` column then. With groups, each line is a range
of consecutive tags with equal rows (the layout of Wang, Cui, Cui, Yuan 2026, Table 2 and
Appendix A).
"""

from __future__ import annotations

import csv
import io
import json
import textwrap
from collections.abc import Callable, Sequence
from typing import Any

from dpcheck.history import FORMATS
from dpcheck.history.rows import CELLS, Group, HistoryRow
from dpcheck.history.table import version_table

__all__ = ["FORMATS", "render"]

HEADERS = ("tags", "commit", "mean", "sum", "Poisson built-in", "Poisson default",
           "accountant", "mechanism")

#: What the short codes of the ``mean`` and ``sum`` columns mean; printed under the text and
#: Markdown tables (CSV and JSON readers take the vocabulary from dpcheck/data/README.md).
LEGEND = (
    "mean / sum: what the library divides the noisy gradient sum by with "
    'loss_reduction="mean" / "sum": A = the realized batch size |B| (ASGM), '
    "EA = the expected batch size N·q (EASGM), FEA = ⌊N·q⌋ (FEASGM), none = nothing (the "
    "sum is released: SGM); Poisson built-in / default: whether the release ships a Poisson "
    "sampler / uses it by default."
)


def _show(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def _cells(group: Group) -> list[str]:
    row = group.rows[-1]
    values = [_show(row.cells[cell]) for cell in CELLS]
    for variant in row.variants:
        values[-1] += f" ({variant['mechanism']} with {variant['when']})"
    first, last = (r.release.commit.hexsha[:8] for r in (group.rows[0], row))
    return [group.label, first if first == last else f"{first}..{last}", *values]


def _evidence_lines(group: Group) -> list[str]:
    row = group.rows[-1]
    lines = [f"{e.role}: {e.path}:{e.line} @ {e.commit[:8]}  {e.text}" for e in row.evidence]
    lines += [f"{cell} unknown: {reason}" for cell, reason in row.reasons.items()]
    return lines


def _markdown(groups: Sequence[Group], evidence: bool) -> str:
    out = ["| " + " | ".join(HEADERS) + " |", "|" + "---|" * len(HEADERS)]
    for group in groups:
        out.append("| " + " | ".join(c.replace("|", "\\|") for c in _cells(group)) + " |")
    if evidence:
        out.append("")
        for group in groups:
            out.append(f"**{group.label}**")
            out.extend(f"- `{line}`" for line in _evidence_lines(group))
            out.append("")
    out += ["", LEGEND]
    return "\n".join(out).rstrip("\n") + "\n"


def _text(groups: Sequence[Group], evidence: bool) -> str:
    table = [list(HEADERS), *(_cells(g) for g in groups)]
    widths = [max(len(r[i]) for r in table) for i in range(len(HEADERS))]
    out = []
    for index, cells in enumerate(table):
        out.append("  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip())
        if evidence and index:
            out.extend(f"    {line}" for line in _evidence_lines(groups[index - 1]))
    out += ["", *textwrap.wrap(LEGEND, 100)]
    return "\n".join(out) + "\n"


def _csv(groups: Sequence[Group], evidence: bool) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([*HEADERS, *(["evidence"] if evidence else [])])
    for group in groups:
        extra = ["; ".join(_evidence_lines(group))] if evidence else []
        writer.writerow([*_cells(group), *extra])
    return buffer.getvalue()


def _json(rows: Sequence[HistoryRow], groups: Sequence[Group] | None) -> str:
    document: dict[str, Any] = {"rows": [row.to_json() for row in rows]}
    if groups is not None:
        document["groups"] = [{"tags": [r.release.tag for r in g.rows],
                               **{cell: g.rows[-1].cells[cell] for cell in CELLS}}
                              for g in groups]
    return json.dumps(document, indent=2) + "\n"


def render(rows: Sequence[HistoryRow], fmt: str, grouped: bool, evidence: bool,
           group_of: Callable[[Sequence[HistoryRow]], list[Group]],
           library: str = "opacus", repository: str = "https://github.com/pytorch/opacus") -> str:
    """The table in ``fmt``; ``group_of`` merges rows when ``grouped`` (else one per tag).
    ``version-table`` is the shipped table's shape (``library`` and ``repository`` name it)."""
    if fmt == "version-table":
        return json.dumps(version_table(rows, library, repository), indent=2) + "\n"
    groups = group_of(rows) if grouped else [Group((row,)) for row in rows]
    if fmt == "json":
        return _json(rows, groups if grouped else None)
    return {"md": _markdown, "text": _text, "csv": _csv}[fmt](groups, evidence)
