"""The ``render`` dispatcher: every format, and a clear error for an unknown one."""

from __future__ import annotations

import json

import pytest

from dpcheck.errors import DpcheckError
from dpcheck.report import FORMATS, render
from dpcheck.report import output_format as output_format_of
from dpcheck.report.github import render_github
from dpcheck.report.json_report import render_json
from dpcheck.report.sarif import render_sarif
from dpcheck.report.text import render_text
from tests.report.conftest import RULES, Project


def test_each_format_dispatches_to_its_renderer(project: Project) -> None:
    kwargs = {"sources": project.sources, "rules": RULES, "root": project.root}
    assert render(project.result, "text", **kwargs, quiet=True) == render_text(
        project.result, sources=project.sources, quiet=True
    )
    assert render(project.result, "json", **kwargs) == render_json(project.result)
    assert render(project.result, "sarif", **kwargs) == render_sarif(
        project.result, rules=RULES, root=project.root
    )
    assert render(project.result, "github", **kwargs) == render_github(project.result, rules=RULES)
    assert json.loads(render(project.result, "sarif", **kwargs))["version"] == "2.1.0"
    assert set(FORMATS) == {"text", "json", "sarif", "github"}


def test_no_sources_means_no_frames(project: Project) -> None:
    out = render(project.result, "text", sources=None, rules=RULES)
    assert " | " not in out and "DP101" in out


def test_color_is_passed_to_text_only(project: Project) -> None:
    assert "\x1b[" in render(project.result, "text", sources=None, rules=RULES, color=True)
    assert "\x1b[" not in render(project.result, "github", sources=None, rules=RULES, color=True)


def test_unknown_format_is_a_user_error(project: Project) -> None:
    expected = "unknown report format 'xml'.*full, concise, json, sarif, github"
    with pytest.raises(DpcheckError, match=expected):
        render(project.result, "xml", sources=None, rules=RULES)


def test_full_and_concise_are_the_text_styles(project: Project) -> None:
    kwargs = {"sources": project.sources, "rules": RULES}
    assert render(project.result, "full", **kwargs) == render(project.result, "text", **kwargs)
    concise = render(project.result, "concise", **kwargs)
    assert concise == render_text(project.result, sources=project.sources, style="concise")
    assert len(concise.splitlines()) == len(project.result.findings) + 1


@pytest.mark.parametrize(
    ("fmt", "output_format", "configured", "expected"),
    [
        (None, None, None, "full"),  # the default
        (None, None, "concise", "concise"),  # [tool.dpcheck] output-format
        (None, None, "json", "json"),
        ("text", None, "concise", "concise"),  # --format text keeps the project's text style
        ("text", None, "sarif", "full"),  # ... and is text even when the project chose SARIF
        ("json", None, "concise", "json"),  # the command line wins over the configuration
        (None, "full", "concise", "full"),
        ("text", "concise", None, "concise"),  # compatible: text in the concise style
        ("sarif", "sarif", None, "sarif"),
    ],
)
def test_output_format_from_flags_and_config(
    fmt: str | None, output_format: str | None, configured: str | None, expected: str
) -> None:
    assert output_format_of(fmt, output_format, configured) == expected


@pytest.mark.parametrize(("fmt", "output_format"), [("json", "concise"), ("text", "sarif"), ("github", "json")])
def test_conflicting_format_flags_are_a_usage_error(fmt: str, output_format: str) -> None:
    with pytest.raises(DpcheckError, match=f"--format {fmt} and --output-format {output_format}"):
        output_format_of(fmt, output_format, None)
