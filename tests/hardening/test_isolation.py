"""No input file ends a scan: a dpcheck bug met in one stage of one file, pipeline or finding
becomes an internal error of that file, and the rest of the scan stands.

There is no known input that trips dpcheck (each one found was fixed), so these tests inject the
fault: one real stage function is wrapped to raise for one named file or pipeline, everything
else (parsing, linking, rules, bounds) runs for real on real fixture projects."""

from __future__ import annotations

import multiprocessing
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import dpcheck.bounds.attach
import dpcheck.engine
import dpcheck.parse.analyzer
import dpcheck.parse.analysis
import dpcheck.rules
import dpcheck.sites
from dpcheck.pipelines.build import PipelineBuilder
from tests.hardening.conftest import Cli, assert_valid_report, copy_fixture, write_files


class Injected(Exception):
    """The fault the tests inject."""


def _two_pipelines(root: Path) -> Path:
    """Two independent projects in one root: DP101 in ``asgm/dpsgd.py`` and DP102 in
    ``shuffle/train.py``, plus ``helper.py``, which mentions Opacus (a candidate file)."""
    copy_fixture("torch_loop_asgm_len_batch", root / "asgm")
    copy_fixture("shuffle_fixed_batch_rdp", root / "shuffle")
    write_files(root, {"helper.py": "import opacus\n\nLOT = 128\n"})
    return root


def _failing_on(real: Callable[..., Any], match: Callable[..., bool]) -> Callable[..., Any]:
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        if match(*args, **kwargs):
            raise Injected("injected fault")
        return real(*args, **kwargs)

    return wrapped


def _scan(cli: Cli, root: Path, *flags: str) -> tuple[int, dict, str]:
    code, out, err = cli("scan", "--no-cache", "--jobs", "1", "--format", "json", *flags, root)
    return code, assert_valid_report(out), err


def _rules(report: dict) -> list[tuple[str, str]]:
    return sorted((f["rule"], f["path"]) for f in report["findings"])


BOTH = [("DP101", "asgm/dpsgd.py"), ("DP102", "shuffle/train.py")]


def test_the_fixture_pair_finds_both_without_faults(tmp_path: Path, cli: Cli) -> None:
    code, report, _ = _scan(cli, _two_pipelines(tmp_path))
    assert code == 1 and _rules(report) == BOTH and report["errors"] == []


@pytest.mark.parametrize(
    ("module", "name", "stage"),
    [
        (dpcheck.parse.analysis, "decode_source", "decoding"),
        (dpcheck.parse.analysis, "find_suppressions", "reading suppressions"),
        (dpcheck.parse.analysis, "parse_python", "parsing"),
        (dpcheck.sites, "summarize_tree", "summarising"),
    ],
)
def test_a_bug_in_one_files_analysis_costs_that_file_only(
    tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch, module: Any, name: str, stage: str
) -> None:
    root = _two_pipelines(tmp_path)
    real = getattr(module, name)

    def is_helper(*args: Any, **kwargs: Any) -> bool:
        return any("LOT = 128" in a or a == "helper.py" for a in args if isinstance(a, str)) or (
            isinstance(args[0], bytes) and b"LOT = 128" in args[0]
        )

    monkeypatch.setattr(module, name, _failing_on(real, is_helper))
    code, report, err = _scan(cli, root)
    assert code == 1 and _rules(report) == BOTH  # exit by findings, both still found
    [error] = report["errors"]
    assert error["path"] == "helper.py" and error["internal"] is True
    assert error["message"] == f"internal error while {stage}: Injected: injected fault"
    assert "helper.py: internal error" in err  # the text of a bug reaches stderr in any format


def test_a_bug_linking_one_pipeline_costs_that_pipeline_only(
    tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _two_pipelines(tmp_path)
    real = PipelineBuilder._pipelines
    monkeypatch.setattr(PipelineBuilder, "_pipelines", _failing_on(
        real, lambda self, entry, ctx, scopes: entry.startswith("shuffle/")))
    code, report, _ = _scan(cli, root)
    assert code == 1 and _rules(report) == BOTH[:1]
    assert [p["path"] for p in report["pipelines"]] == ["asgm/dpsgd.py"]
    # the script entry, then its function entry (no longer covered): each reported, each lost
    assert {e["path"] for e in report["errors"]} == {"shuffle/train.py"}
    assert all(e["internal"] for e in report["errors"])
    messages = sorted(e["message"] for e in report["errors"])
    assert messages[0].startswith("internal error while linking pipeline shuffle/train.py: ")


def test_a_bug_in_the_rules_of_one_pipeline_costs_that_pipeline_only(
    tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _two_pipelines(tmp_path)
    monkeypatch.setattr(dpcheck.rules, "evaluate", _failing_on(
        dpcheck.rules.evaluate, lambda pipelines, project: pipelines[0].path.startswith("asgm/")))
    code, report, _ = _scan(cli, root)
    assert code == 1 and _rules(report) == BOTH[1:]
    assert len(report["pipelines"]) == 2  # the pipeline itself is still reported
    [error] = report["errors"]
    assert error["path"] == "asgm/dpsgd.py" and error["internal"]
    assert "applying the rules to pipeline asgm/dpsgd.py" in error["message"]


def test_a_bug_in_one_bound_keeps_its_finding_without_a_bound(
    tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _two_pipelines(tmp_path)
    monkeypatch.setattr(dpcheck.bounds.attach, "attach_bounds", _failing_on(
        dpcheck.bounds.attach.attach_bounds, lambda findings, pipelines, *_: findings[0].rule == "DP101"))
    code, report, _ = _scan(cli, root)
    assert code == 1 and _rules(report) == BOTH
    bounds = {f["rule"]: f["bound"] for f in report["findings"]}
    assert bounds["DP101"] is None and bounds["DP102"] is not None
    [error] = report["errors"]
    assert error["path"] == "asgm/dpsgd.py" and "bounding DP101 at line 49" in error["message"]


_PARENT = 0
_REAL_ANALYZE_JOB = dpcheck.parse.analyzer.analyze_job


def _crash_in_a_worker(job: Any) -> Any:
    """``analyze_job``, except that a worker process given ``filler/m07.py`` dies outright
    (as on a segfault or the OOM killer). Module-level: the pool pickles it by name."""
    if os.getpid() != _PARENT and job[0] == "filler/m07.py":
        os._exit(3)
    return _REAL_ANALYZE_JOB(job)


@pytest.mark.skipif(multiprocessing.get_start_method() != "fork",
                    reason="the injected crash reaches the workers through fork")
def test_a_worker_process_that_dies_loses_no_file(
    tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _two_pipelines(tmp_path)
    write_files(root, {f"filler/m{i:02d}.py": f"X{i} = {i}\n" for i in range(40)})
    monkeypatch.setattr(sys.modules[__name__], "_PARENT", os.getpid())
    monkeypatch.setattr(dpcheck.parse.analyzer, "analyze_job", _crash_in_a_worker)
    code, report, _ = _scan(cli, root, "--jobs", "2")
    assert code == 1 and _rules(report) == BOTH and report["errors"] == []
    assert report["files_scanned"] == 43


def test_exit_code_2_only_when_nothing_could_be_read(tmp_path: Path, cli: Cli) -> None:
    root = write_files(tmp_path / "project", {"ok.py": "x = 1\n"})
    (root / "gone.py").symlink_to(root / "nowhere.py")
    assert cli("scan", "--no-cache", root)[0] == 0  # a broken link beside a readable file
    code, _, err = cli("scan", "--no-cache", root / "gone.py")
    assert code == 2 and "gone.py: no such file or directory" in err
