"""A loader written as a conditional expression (``a if flag else b``) takes the arm its test
selects when the test is decided, a flag the caller binds included; an undecided test keeps both
arms, and arms that sample differently leave the sampling undecided, never silently."""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

from dpcheck.engine import ScanOptions, scan
from dpcheck.sites.ir import Encoder, Source
from dpcheck.sites.nodes import Name, Opaque, node
from tests.fixture_projects import FIXTURES, fixture_project

FIXTURE = "helper_conditional_loader_training_flag_asgm"


def test_a_conditional_keeps_its_test_apart_from_its_values() -> None:
    source = "a if flag else b"
    expr = node(Encoder(Source(source), lambda *_: None).encode(
        ast.parse(source, mode="eval").body))
    assert isinstance(expr, Opaque) and expr.kind == "ifexp"
    assert [p.dotted for p in expr.parts if isinstance(p, Name)] == ["a", "b"]
    assert isinstance(expr.test, Name) and expr.test.dotted == "flag"


def test_the_flag_the_caller_binds_selects_the_poisson_loader() -> None:
    result = scan(ScanOptions(paths=(fixture_project(FIXTURE),), use_cache=False, jobs=1))
    [pipeline] = result.pipelines
    assert (pipeline.mechanism, pipeline.sampling) == ("ASGM", "poisson")
    assert [(f.rule, f.span.path, f.span.line) for f in result.findings] == [("DP101", "run.py", 22)]


def test_an_undecided_flag_keeps_both_arms_and_says_so(tmp_path: Path) -> None:
    project = tmp_path / "project"
    shutil.copytree(FIXTURES / FIXTURE, project, ignore=shutil.ignore_patterns("expected.json"))
    script = project / "run.py"
    script.write_text(script.read_text("utf-8").replace(
        "training=True", "training=torch.cuda.is_available()"), "utf-8")
    result = scan(ScanOptions(paths=(project,), use_cache=False, jobs=1))
    [pipeline] = result.pipelines
    assert pipeline.sampling == "unknown"
    assert [f.rule for f in result.findings] == ["DP106"]


def test_a_sampler_built_only_for_training_is_read_in_the_training_arm(tmp_path: Path) -> None:
    project = tmp_path / "project"
    shutil.copytree(FIXTURES / FIXTURE, project, ignore=shutil.ignore_patterns("expected.json"))
    helper = project / "batches.py"
    helper.write_text(helper.read_text("utf-8").replace(
        "sample_rate=rate)", "sample_rate=rate) if training else None"), "utf-8")
    result = scan(ScanOptions(paths=(project,), use_cache=False, jobs=1))
    [pipeline] = result.pipelines
    assert (pipeline.mechanism, pipeline.sampling) == ("ASGM", "poisson")
    assert [(f.rule, f.span.line) for f in result.findings] == [("DP101", 22)]
