"""A non-private reference run that reuses the private run's names ends before the engine call:
what it steps is not the private optimizer, so its loader does not decide the private pipeline's
sampling, N or q (the definitions that reach the engine call decide them)."""

from __future__ import annotations

from dpcheck.engine import ScanOptions, scan
from dpcheck.model import Severity
from tests.fixture_projects import fixture_project


def test_reference_run_before_the_sweep_keeps_n_and_q() -> None:
    result = scan(ScanOptions(paths=(fixture_project("baseline_loop_before_private_sweep_feasgm"),),
                              use_cache=False, jobs=1))
    [pipeline] = result.pipelines
    assert (pipeline.mechanism, pipeline.sampling) == ("FEASGM", "poisson")
    assert pipeline.params["N"].value == 60000
    assert pipeline.params["q"].value == 1 / 469
    # no sampler evidence from the reference loop's shuffled loader
    assert not [e for e in pipeline.evidence if e.role == "sampler" and "shuffle" in e.note]
    assert [(f.rule, f.span.line, f.severity) for f in result.findings] == \
        [("DP101", 36, Severity.INFO)]
