"""The text report: header lines, 1-based columns, code frames, sections and the summary."""

from __future__ import annotations

import re
from dataclasses import replace

from dpcheck.model import Finding, ParamValue, Pipeline, ScanError, ScanResult, Severity, Span
from dpcheck.report.locations import PathView
from dpcheck.report.text import render_text, summary_line
from dpcheck.suppress import SuppressionIssue
from tests.report.conftest import Project, make_result, node_span

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _row_text(row: str) -> str:
    """The source part of a frame row (after the ``| `` gutter)."""
    return row.split("| ", 1)[1] if "| " in row else ""


def test_header_uses_one_based_columns_from_the_parser(project: Project) -> None:
    out = render_text(project.result, sources=project.sources)
    line = project.sources["train.py"].splitlines()[13]
    column = line.index("len(batch)") + 1
    assert f"train.py:14:{column}: DP101 [error] update divides the noisy sum" in out
    assert "requirements.txt:3:1: DP105 [info] opacus is not pinned" in out


def test_code_frame_has_context_line_and_caret_under_the_column(project: Project) -> None:
    lines = render_text(project.result, sources=project.sources).splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("train.py:14:"))
    context, anchor, carets = lines[header + 1 : header + 4]
    source_lines = project.sources["train.py"].splitlines()
    assert context.lstrip().startswith("13 | ") and _row_text(context) == source_lines[12]
    assert anchor.lstrip().startswith("14 | ") and _row_text(anchor) == source_lines[13]
    caret_text = _row_text(carets)
    start = caret_text.index("^")
    assert _row_text(anchor)[start:].startswith("len(batch)")
    assert caret_text[start:] == "^" * len("len(batch)")
    assert carets.index("|") == anchor.index("|")


def test_caret_keeps_tabs_so_it_aligns_after_tab_expansion(tmp_path) -> None:
    source = "def step(noisy, batch):\n\tupdate = noisy / len(batch)\n\treturn update\n"
    (tmp_path / "step.py").write_text(source, encoding="utf-8")
    text = (tmp_path / "step.py").read_text(encoding="utf-8")
    span = node_span(text, "step.py", "len(batch)")
    finding = Finding("DP101", Severity.ERROR, span, "divides by |B|", context="x")
    lines = render_text(ScanResult(findings=[finding]), sources={"step.py": text}).splitlines()
    anchor, carets = lines[2], lines[3]
    code_at = _row_text(anchor).expandtabs().index("len(batch)")
    assert _row_text(carets).expandtabs().index("^") == code_at
    assert _row_text(carets).startswith("\t")


def test_frame_of_first_line_has_no_context_and_multiline_span_gets_one_caret() -> None:
    source = "total = grads.sum(0) + (\n    noise)\n"
    span = Span("m.py", 1, 9, 2, 11)
    finding = Finding("DP101", Severity.ERROR, span, "msg")
    lines = render_text(ScanResult(findings=[finding]), sources={"m.py": source}).splitlines()
    assert lines[1] == "  1 | total = grads.sum(0) + ("
    assert lines[2] == "    |         ^"
    assert lines[3] == ""


def test_no_frame_without_source_or_for_a_line_past_the_end(project: Project) -> None:
    without = render_text(project.result, sources={}).splitlines()
    header = next(i for i, line in enumerate(without) if line.startswith("train.py:14:"))
    assert without[header + 1].startswith("  = evidence:")
    stale = {"train.py": "x = 1\n", "requirements.txt": "opacus\n"}
    assert " | " not in render_text(project.result, sources=stale)


def test_crlf_and_form_feed_do_not_shift_lines() -> None:
    source = "a = 1\r\n\x0cb = 2\r\nc = noisy / n\r\n"
    finding = Finding("DP101", Severity.ERROR, Span("m.py", 3, 5, 3, 14), "msg")
    out = render_text(ScanResult(findings=[finding]), sources={"m.py": source})
    assert "  3 | c = noisy / n\n" in out
    assert "  2 | \ufffdb = 2\n" in out
    assert "\r" not in out and "\x0c" not in out


def test_control_characters_in_the_source_are_not_printed() -> None:
    source = "x = 1\ny = '\x1b[2J\x00' + noisy\n"
    column = source.splitlines()[1].index("noisy") + 1
    finding = Finding("DP101", Severity.ERROR, Span("m.py", 2, column, 2, column + 5), "msg")
    out = render_text(ScanResult(findings=[finding]), sources={"m.py": source})
    assert f"  2 | y = '\ufffd[2J\ufffd' + noisy\n    | {' ' * (column - 1)}^^^^^\n" in out


def test_evidence_and_bound_summary_lines(project: Project) -> None:
    out = render_text(project.result, sources=project.sources)
    divisor_line = project.result.findings[1].span.line
    note = "noisy sum divided by the realized batch size |B|"
    assert f"  = evidence: train.py:{divisor_line}: {note}\n" in out
    assert "  = evidence: train.py:9: RDP accountant assumes SGM + Poisson\n" in out
    assert "  = bound: claimed eps = 2.97 (SGM, RDP, delta = 1e-05)\n" in out
    assert "  = bound: corrected eps <= 8.41 (ASGM witness)\n" in out
    assert out.count("= bound:") == 2  # the DP102 bound has no summary: nothing printed


def test_bound_summary_that_is_not_a_list_of_strings_prints_nothing() -> None:
    bounds = [{"summary": "eps = 3"}, {"summary": [1.0, 2.0]}, {"epsilon": 3.0}, None]
    for bound in bounds:
        finding = Finding("DP101", Severity.ERROR, Span("m.py", 1), "msg", bound=bound)
        assert "= bound" not in render_text(ScanResult(findings=[finding]), sources={})


def test_findings_are_grouped_by_file_in_path_order() -> None:
    def at(path: str, line: int) -> Finding:
        return Finding("DP102", Severity.WARNING, Span(path, line, 1), f"{path} {line}")

    result = ScanResult(findings=[at("b.py", 1), at("a.py", 9), at("b.py", 3), at("a.py", 2)])
    headers = [line for line in render_text(result, sources={}).splitlines() if ": DP102 " in line]
    assert [h.split(":")[0] + ":" + h.split(":")[1] for h in headers] == [
        "a.py:2", "a.py:9", "b.py:1", "b.py:3"
    ]


def test_pipelines_overview_unless_quiet(project: Project) -> None:
    line = (
        "  train.py:8: mechanism ASGM, sampling poisson, "
        "accountant opacus-rdp (assumes SGM+poisson), entry train"
    )
    assert "Pipelines:\n" + line + "\n" in render_text(project.result, sources=project.sources)
    quiet = render_text(project.result, sources=project.sources, quiet=True)
    assert "Pipelines:" not in quiet and "DP101" in quiet


def test_errors_and_suppression_issues_sections(failed_project: Project) -> None:
    notice = SuppressionIssue(Span("train.py", 7, 30), "unused", "unused suppression (DP102)")
    result = replace(failed_project.result, suppression_issues=[notice])
    out = render_text(result, sources=failed_project.sources, quiet=True)
    assert "\nSuppressions:\n  train.py:7:30: [warning] unused suppression (DP102)\n" in out
    assert "\nErrors:\n  data/blob.py: [error] cannot read: Permission denied\n" in out
    assert out.endswith(
        "\n\nFound 3 findings (1 error, 1 warning, 1 info) in 12 files; 1 suppressed; "
        "1 suppression issue; 1 scan error.\n"
    )


def test_summary_line_counts_and_plurals() -> None:
    def finding(severity: Severity) -> Finding:
        return Finding("DP101", severity, Span("t.py", 1), "m")

    three = ScanResult(
        findings=[finding(Severity.ERROR), finding(Severity.WARNING), finding(Severity.WARNING)],
        files_scanned=12,
        suppressed=1,
    )
    expected = "Found 3 findings (1 error, 2 warnings) in 12 files; 1 suppressed."
    assert summary_line(three) == expected
    one = ScanResult(findings=[finding(Severity.INFO)], files_scanned=1)
    assert summary_line(one) == "Found 1 finding (1 info) in 1 file."
    assert summary_line(ScanResult(files_scanned=0)) == "No findings in 0 files."
    errors = ScanResult(errors=[ScanError("", "boom"), ScanError("x.py", "bad")], files_scanned=2)
    assert summary_line(errors) == "No findings in 2 files; 2 scan errors."


def test_color_only_when_asked_and_only_adds_escape_codes(project: Project) -> None:
    plain = render_text(project.result, sources=project.sources)
    colored = render_text(project.result, sources=project.sources, color=True)
    assert "\x1b[" not in plain
    assert "\x1b[1;31mDP101\x1b[0m" in colored and "\x1b[1;33mDP102\x1b[0m" in colored
    assert ANSI.sub("", colored) == plain


def test_pipeline_without_accountant_and_empty_result() -> None:
    bare = Pipeline("main", "m.py", 3, "unknown", "unknown")
    out = render_text(ScanResult(pipelines=[bare], files_scanned=1), sources={})
    assert out == (
        "Pipelines:\n  m.py:3: mechanism unknown, sampling unknown, accountant none "
        "(assumes unknown), entry main\n\nNo findings in 1 file.\n"
    )


def test_realistic_result_renders_every_finding_once(project: Project) -> None:
    out = render_text(make_result(project.sources["train.py"]), sources=project.sources)
    assert [out.count(f": {rule} ") for rule in ("DP101", "DP102", "DP105")] == [1, 1, 1]


def test_pipeline_named_after_its_file_is_not_repeated() -> None:
    script = Pipeline("train.py", "train.py", 12, "ASGM", "poisson")
    out = render_text(ScanResult(pipelines=[script], files_scanned=1), sources={})
    assert "  train.py:12: mechanism ASGM, sampling poisson, accountant none (assumes unknown)\n" in out
    assert out.count("train.py") == 1


def test_severity_on_every_finding_line_in_both_styles(project: Project) -> None:
    for style in ("full", "concise"):
        out = render_text(project.result, sources=project.sources, style=style)
        headers = [line for line in out.splitlines() if re.match(r"\S+:\d+:\d+: DP\d{3} ", line)]
        assert [h.split()[2] for h in headers] == ["[info]", "[error]", "[warning]"]


def test_concise_is_one_line_per_finding_then_the_summary(failed_project: Project) -> None:
    notice = SuppressionIssue(Span("train.py", 7, 30), "unused", "unused suppression (DP102)")
    result = replace(failed_project.result, suppression_issues=[notice])
    lines = render_text(result, sources=failed_project.sources, style="concise").splitlines()
    column = failed_project.sources["train.py"].splitlines()[13].index("len(batch)") + 1
    assert lines == [
        "requirements.txt:3:1: DP105 [info] opacus is not pinned",
        f"train.py:14:{column}: DP101 [error] update divides the noisy sum by the realized batch "
        "size (ASGM), but opacus-rdp assumes the SGM",
        f"train.py:15:{result.findings[2].span.column}: DP102 [warning] the loader shuffles "
        "fixed-size batches; the accountant assumes Poisson",
        "train.py:7:30: [warning] unused suppression (DP102)",
        "data/blob.py: [error] cannot read: Permission denied",
        summary_line(result),
    ]


def test_show_evidence_adds_evidence_and_bound_to_concise(project: Project) -> None:
    full = render_text(project.result, sources=project.sources)
    concise = render_text(project.result, sources=project.sources, style="concise", show_evidence=True)
    details = [line for line in full.splitlines() if line.startswith("  = ")]
    assert [line for line in concise.splitlines() if line.startswith("  = ")] == details
    assert len(details) == 4 and " | " not in concise and "Pipelines:" not in concise


def test_parameter_overrides_show_as_evidence(project: Project) -> None:
    pipeline = project.result.pipelines[0]
    override = ParamValue("sigma", 2.0, "override", None, "--param: sigma=2")
    configured = ParamValue("N", 50000, "override", None, "pyproject.toml [tool.dpcheck.params]: N=50000")
    changed = replace(pipeline, entry="train.py::train",  # the finding's pipeline
                      params={**pipeline.params, "sigma": override, "N": configured})
    out = render_text(replace(project.result, pipelines=[changed]), sources=project.sources)
    dp101 = out[out.index(": DP101 "):out.index(": DP102 ")]
    assert "  = evidence: N = 50000 (override from pyproject.toml [tool.dpcheck.params])\n" in dp101
    assert "  = evidence: sigma = 2.0 (override from --param)\n" in dp101
    assert "override" not in out[out.index(": DP105 "):out.index(": DP101 ")]  # no pipeline


def test_paths_are_shown_from_the_current_folder(project: Project) -> None:
    root = project.root
    below = PathView(root.parent, root.parent)  # the scan root is the parent: paths gain a folder
    moved = replace(project.result, findings=[
        replace(f, span=replace(f.span, path=f"{root.name}/{f.span.path}"),
                evidence=tuple(replace(e, span=replace(e.span, path=f"{root.name}/{e.span.path}"))
                               for e in f.evidence))
        for f in project.result.findings
    ])
    sources = {f"{root.name}/{k}": v for k, v in project.sources.items()}
    out = render_text(moved, sources=sources, paths=PathView(root.parent, root), style="full")
    assert "\ntrain.py:14:" in out and "  = evidence: train.py:9: RDP" in out
    elsewhere = render_text(moved, sources=sources, paths=PathView(root.parent, root / "sub"))
    assert f"\n{root.as_posix()}/train.py:14:" in elsewhere  # not below the cwd: absolute
    same = render_text(moved, sources=sources, paths=below)
    assert f"\n{root.name}/train.py:14:" in same
