"""Every fixture project under ``fixtures/`` is scanned by the real engine and compared with its
``expected.json`` (mechanism, sampling, the sampler kind where listed, accountant, listed params,
the exact set of findings). A finding in a notebook is expected at its cell and the line in that
cell."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dpcheck import engine
from dpcheck.locations import locate
from dpcheck.model import Pipeline
from tests.fixture_projects import FIXTURES, fixture_project

CASES = sorted(p.parent for p in FIXTURES.glob("*/expected.json"))


def _relative(folder: Path) -> Callable[[str], str]:
    """Result paths are relative to the scan root, the fixture's own folder (it is scanned as a
    copy outside the checkout); expected paths are relative to the fixture folder too."""
    return lambda path: path


def _by_path(pipelines: list[Pipeline], relative: Callable[[str], str]) -> dict[str, Pipeline]:
    found: dict[str, Pipeline] = {}
    for pipeline in pipelines:
        found.setdefault(relative(pipeline.path), pipeline)
    return found


def test_there_are_at_least_twenty_fixture_projects() -> None:
    assert len(CASES) >= 20


@pytest.mark.parametrize("folder", CASES, ids=[c.name for c in CASES])
def test_fixture_scan_matches_expected(folder: Path) -> None:
    expected: dict[str, Any] = json.loads((folder / "expected.json").read_text("utf-8"))
    result = engine.scan(engine.ScanOptions(paths=[fixture_project(folder.name)], use_cache=False, jobs=1))
    assert not [e for e in result.errors if "internal error" in e.message], result.errors
    relative = _relative(folder)
    pipelines = _by_path(result.pipelines, relative)
    assert sorted(pipelines) == sorted(p["path"] for p in expected["pipelines"])
    for want in expected["pipelines"]:
        got = pipelines[want["path"]]
        assert (got.mechanism, got.sampling) == (want["mechanism"], want["sampling"]), got.evidence
        if "sampler" in want:
            assert got.sampler == want["sampler"], got.evidence
        if "accountant" in want:
            assert got.accountant.name == want["accountant"]["name"]
            assert got.accountant.assumes == want["accountant"]["assumes"]
        for name, value in want.get("params", {}).items():
            assert name in got.params, (name, sorted(got.params))
            assert math.isclose(got.params[name].value, value, rel_tol=1e-9), (name, got.params[name])
    located = [(f.rule, locate(f.span, result.cells.get(f.span.path))) for f in result.findings]
    fired = {(rule, relative(at.path), at.cell, at.line) for rule, at in located}
    wanted = {(f["rule"], f["path"], f.get("cell"), f["line"]) for f in expected["findings"]}
    assert fired == wanted, [f.message for f in result.findings]
