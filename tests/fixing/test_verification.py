"""Verified, not hoped: the verifier re-scans the project with a proposal's edits in memory and
refuses it when the finding stays, when something at or above its severity is new, when a file
stops parsing, or when the fix's own check fails; fixes that fail together are applied one at a
time. Real fixture projects, real scans; the proposals are written here to be wrong on purpose."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from dpcheck.engine import ScanOptions, settle
from dpcheck.fixing import plan_fixes
from dpcheck.fixing.plan import Candidate, FixOutcome, Verifier, _settle
from dpcheck.gate import scan_named
from dpcheck.model import ScanResult
from dpcheck.rules.fixes.fix import Outcome, Proposal, edit_between
from tests.fixture_projects import FIXTURES


@pytest.fixture
def steps_project(tmp_path: Path) -> tuple[object, ScanResult, Candidate, str]:
    """accountant_steps_mismatch (DP103: epochs=30 given, 60 run), scanned, with its fix."""
    root = tmp_path / "project"
    shutil.copytree(FIXTURES / "accountant_steps_mismatch", root,
                    ignore=shutil.ignore_patterns("expected.json"))
    settings = settle(ScanOptions(paths=[root], use_cache=False, jobs=1))
    before = scan_named(settings)
    [outcome] = plan_fixes(settings, before, before.findings).outcomes
    assert outcome.candidate is not None
    text = (root / "train.py").read_text("utf-8")
    return settings, before, outcome.candidate, text


def _verifier(settings: object, before: ScanResult) -> Verifier:
    return Verifier(settings, before, plan_fixes(settings, before, []).texts)  # type: ignore[arg-type]


def _proposing(candidate: Candidate, text: str, new: str, **kw: object) -> Candidate:
    return replace(candidate, proposal=Proposal(edit_between("train.py", text, new),
                                                "a test proposal", **kw))  # type: ignore[arg-type]


def test_the_real_fix_holds(steps_project) -> None:  # type: ignore[no-untyped-def]
    settings, before, candidate, _ = steps_project
    assert _verifier(settings, before).judge([candidate]) is None


def test_an_edit_that_leaves_the_finding_is_refused(steps_project) -> None:  # type: ignore[no-untyped-def]
    settings, before, candidate, text = steps_project
    wrong = _proposing(candidate, text, text.replace("epochs=30", "epochs=45"))
    reason = _verifier(settings, before).judge([wrong])
    assert reason == ("DP103 is still reported after it: steps = 10800 given to the accountant, "
                      "14400 in the code")


def test_an_edit_that_breaks_parsing_is_refused_whatever_the_severity(steps_project) -> None:  # type: ignore[no-untyped-def]
    """DP001 is a warning like the DP103 fixed, but a fix must never break a file."""
    settings, before, candidate, text = steps_project
    broken = _proposing(candidate, text, text.replace("epochs=30, delta", "epochs=EPOCHS delta"))
    reason = _verifier(settings, before).judge([broken])
    assert reason is not None and reason.startswith("it would bring DP001 [warning] at train.py:")


def test_an_edit_whose_own_check_fails_is_refused(steps_project) -> None:  # type: ignore[no-untyped-def]
    settings, before, candidate, text = steps_project
    seen: list[Outcome] = []

    def check(outcome: Outcome) -> str | None:
        seen.append(outcome)
        return "the promise is not kept"

    picky = _proposing(candidate, text, text.replace("epochs=30", "epochs=EPOCHS"), check=check)
    assert _verifier(settings, before).judge([picky]) == "the promise is not kept"
    [outcome] = seen
    assert outcome.pipeline is not None and outcome.pipeline.entry == candidate.finding.pipeline
    assert outcome.findings == ()  # the DP103 is gone; the check still decides


def test_fixes_that_fail_together_are_applied_one_at_a_time(steps_project) -> None:  # type: ignore[no-untyped-def]
    """Two edits of the same text cannot both be made: the first is kept, the other left out
    with why."""
    settings, before, candidate, text = steps_project
    good = FixOutcome(candidate.finding, candidate)
    rival = FixOutcome(candidate.finding, _proposing(candidate, text,
                                                     text.replace("epochs=30", "epochs=60")))
    plan = plan_fixes(settings, before, [])
    plan.outcomes = [good, rival]
    _settle(plan, _verifier(settings, before))
    assert plan.applied == [good]
    [left] = plan.left_out
    assert left.reason is not None and "overlaps the edit of another fix" in left.reason


@pytest.fixture
def two_programs(tmp_path: Path) -> tuple[object, ScanResult]:
    """Two independent training programs in one project (steps/: a DP103 with its fix; asgm/:
    a DP101), scanned."""
    root = tmp_path / "project"
    shutil.copytree(FIXTURES / "accountant_steps_mismatch", root / "steps",
                    ignore=shutil.ignore_patterns("expected.json"))
    shutil.copytree(FIXTURES / "torch_loop_asgm_len_batch", root / "asgm",
                    ignore=shutil.ignore_patterns("expected.json"))
    settings = settle(ScanOptions(paths=[root], use_cache=False, jobs=1))
    return settings, scan_named(settings)


def test_one_scan_together_confirms_the_fixes_it_can_tell_apart(two_programs) -> None:  # type: ignore[no-untyped-def]
    """The real DP103 fix and an edit that breaks the other program's file, applied together:
    what the broken file brings is laid at the edit that broke it, so the real fix is confirmed
    by that one scan and only the breaking edit is left to be judged alone (and refused)."""
    settings, before = two_programs
    [outcome] = [o for o in plan_fixes(settings, before, before.findings).outcomes
                 if o.finding.rule == "DP103"]
    [asgm] = [f for f in before.findings if f.rule == "DP101"]
    text = (settings.root / "asgm/dpsgd.py").read_text("utf-8")
    breaking = Candidate(asgm, outcome.candidate.fix, Proposal(  # type: ignore[union-attr]
        edit_between("asgm/dpsgd.py", text, text.replace("def main():", "def main(:")), "breaks"))
    verifier = _verifier(settings, before)
    assert verifier.held_together([outcome.candidate, breaking]) == {0}  # type: ignore[list-item]
    assert verifier.judge([breaking]).startswith("it would bring DP001")  # type: ignore[union-attr]


def test_the_re_analysis_links_only_what_the_edit_can_change(two_programs) -> None:  # type: ignore[no-untyped-def]
    """A project of two independent training programs: the re-analysis of a fix in one links
    that one's import neighbourhood, not the other program (whose pipeline is absent from the
    re-scan, not reported as gone), and the fix still holds."""
    settings, before = two_programs
    assert {p.path for p in before.pipelines} == {"steps/train.py", "asgm/dpsgd.py"}
    [outcome] = [o for o in plan_fixes(settings, before, before.findings).outcomes
                 if o.finding.rule == "DP103"]
    assert outcome.candidate is not None
    verifier = _verifier(settings, before)
    after = verifier.after([outcome.candidate])
    assert isinstance(after, ScanResult)
    assert {p.path for p in after.pipelines} == {"steps/train.py"}
    assert verifier.judge([outcome.candidate]) is None
