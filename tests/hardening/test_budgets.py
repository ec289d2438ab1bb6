"""Bounded output and work per file: long lines are cut in every report, and a file over its
time or recursion budget is skipped with the reason (DP001), never a hang or a crash."""

from __future__ import annotations

import signal
import sys
import time
from pathlib import Path

import pytest

import dpcheck.parse.analysis
from dpcheck import engine
from dpcheck.parse.analysis import analyze_file
from dpcheck.parse.budget import BudgetExceeded, recursion_budget, time_budget
from tests.hardening.conftest import Cli, assert_valid_report, copy_fixture, write_files

MEGABYTE = 1_000_000


def _functions(count: int) -> str:
    """A module of ``count`` small functions that call a DP library (a candidate file)."""
    body = "".join(
        f"def f{i}(a, b):\n    return torch.sum(a) / len(b) + f{i + 1}(a, b)\n" for i in range(count)
    )
    return "import torch\nfrom opacus.accountants import RDPAccountant\n\n" + body


def test_a_one_megabyte_single_line_file_gives_a_short_report(
    tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    statement = "x = 1; "
    line = statement * (MEGABYTE // len(statement)) + "y = ("  # never closed, at its very end
    root = write_files(tmp_path / "project", {"minified.py": line + "\n"})
    monkeypatch.chdir(root)  # paths as a user in the project sees them, whatever tmp_path is
    code, out, err = cli("scan", "--no-cache", root)
    assert code == 0 and err == ""
    column = len(line) - 1 + 1
    header = out.split("\n", 1)[0]
    assert f"minified.py:1:{column}: DP001 [warning] cannot analyse minified.py" in header
    assert len(out) < 2_000 and max(map(len, out.splitlines())) < 200
    anchor, carets = out.splitlines()[1:3]
    assert anchor.endswith("y = (") and carets.index("^") == anchor.index("(")
    _, json_out, _ = cli("scan", "--no-cache", "--format", "json", root)
    report = assert_valid_report(json_out)
    assert len(json_out) < 4_000 and len(report["findings"][0]["context"]) <= 122


def test_a_finding_at_the_end_of_a_megabyte_line_keeps_its_column(tmp_path: Path, cli: Cli) -> None:
    root = copy_fixture("torch_loop_asgm_len_batch", tmp_path / "project")
    source = root / "dpsgd.py"
    pad = "x" * MEGABYTE
    anchor_line = "                grad_estimate = noisy / len(xb)\n"
    text = source.read_text("utf-8").replace(anchor_line, f"                _pad = '{pad}'; {anchor_line.lstrip()}")
    source.write_text(text, encoding="utf-8")
    column = 16 + len(f"_pad = '{pad}'; ") + 1
    code, out, _ = cli("scan", "--no-cache", root)
    assert code == 1 and f"dpsgd.py:49:{column}: DP101 [error]" in out.split("\n", 1)[0]
    frame = out.splitlines()[1:4]
    assert all(len(row) < 200 for row in frame)
    assert frame[2].index("^") == frame[1].index("grad_estimate")
    assert frame[2].count("^") == len("grad_estimate = noisy / len(xb)")


def test_a_file_over_its_time_budget_is_skipped_and_tried_again_next_time(tmp_path: Path) -> None:
    root = write_files(tmp_path / "project", {"generated.py": _functions(5_000), "ok.py": "A = 1\n"})
    cache = tmp_path / "cache"
    options = engine.ScanOptions(paths=[root], jobs=1, cache_dir=cache, file_time_budget=0.01)
    result = engine.scan(options)
    [skipped] = [f for f in result.findings if f.rule == "DP001"]
    assert skipped.span.path == "generated.py"
    assert skipped.message == (
        "cannot analyse generated.py: skipped: over the per-file time budget (0.01 s)"
    )
    assert result.files_scanned == 2 and result.errors == []
    # the skip depends on the machine's load, so it is not cached: with room, the file is read
    roomy = engine.scan(engine.ScanOptions(paths=[root], jobs=1, cache_dir=cache))
    assert [f for f in roomy.findings if f.rule == "DP001"] == []


@pytest.mark.parametrize(
    ("name", "source", "problem"),
    [
        ("chain", "x = " + "+".join(["a"] * 100_000) + "\n", "RecursionError"),
        ("unary", "x = " + "-" * 100_000 + "1\n", "MemoryError"),
        ("brackets", "x = " + "[" * 5_000 + "]" * 5_000 + "\n", "too many nested parentheses"),
        ("indent", "".join(" " * i + "if x:\n" for i in range(150)) + " " * 150 + "pass\n",
         "too many levels of indentation"),
        ("calls", "import opacus\nx = " + "f(" * 190 + ")" * 190 + "\n", None),
        ("defs", "import opacus\n" + "".join(" " * i + f"def f{i}():\n" for i in range(99))
         + " " * 99 + "return opacus.step(1 / len(x))\n", None),
    ],
)
def test_very_deep_nesting_ends_in_a_finding_or_a_summary(
    tmp_path: Path, name: str, source: str, problem: str | None
) -> None:
    root = write_files(tmp_path / "project", {f"{name}.py": source})
    result = engine.scan(engine.ScanOptions(paths=[root], jobs=1, use_cache=False))
    assert result.errors == [] and result.files_scanned == 1
    dp001 = [f.message for f in result.findings if f.rule == "DP001"]
    if problem is None:
        assert dp001 == []
    else:
        [message] = dp001
        assert problem in message


def test_recursion_budget_is_counted_from_the_callers_depth() -> None:
    def descend(n: int) -> int:
        return 0 if n == 0 else 1 + descend(n - 1)

    limit = sys.getrecursionlimit()
    with recursion_budget(200):
        assert descend(150) == 150
    with pytest.raises(BudgetExceeded, match="recursion budget"), recursion_budget(200):
        descend(250)
    assert sys.getrecursionlimit() == limit


def test_time_budget_cannot_be_swallowed_and_restores_an_outer_timer() -> None:
    fired: list[int] = []
    previous = signal.signal(signal.SIGALRM, lambda *_: fired.append(1))
    signal.setitimer(signal.ITIMER_REAL, 30.0)
    try:
        with pytest.raises(BudgetExceeded, match="time budget"), time_budget(0.05):
            while True:
                try:
                    time.sleep(0.001)
                except Exception:  # noqa: BLE001 - an analyser's own blanket handler
                    pass
        remaining = signal.getitimer(signal.ITIMER_REAL)[0]
        assert 25.0 < remaining < 30.0  # the caller's timer runs on, less the time spent
        assert signal.getsignal(signal.SIGALRM) is not None and fired == []
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def test_an_error_raised_in_place_of_the_timers_is_still_the_budgets(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """CPython's tree builder, interrupted by the timer mid-way, raises ``SystemError: AST
    constructor recursion depth mismatch`` instead of passing the timer's exception on (seen
    in this suite). Mimicked here by a parser that does the same."""

    def interrupted_parse(text: str, path: str) -> object:
        try:
            while True:
                time.sleep(0.001)
        except BudgetExceeded:
            raise SystemError("AST constructor recursion depth mismatch") from None

    monkeypatch.setattr(dpcheck.parse.analysis, "parse_python", interrupted_parse)
    analysis, summary = analyze_file("m.py", b"x = 1\n", ("opacus",), max_bytes=100,
                                     time_budget=0.05)
    assert summary is None and analysis.internal_error is None and not analysis.cacheable
    assert analysis.problem is not None
    assert analysis.problem.message == "skipped: over the per-file time budget (0.05 s)"

    def swallowing_parse(text: str, path: str) -> object:
        try:
            while True:
                time.sleep(0.001)
        except BudgetExceeded:
            return None  # a result made after the deadline is not trusted

    monkeypatch.setattr(dpcheck.parse.analysis, "parse_python", swallowing_parse)
    analysis, _ = analyze_file("m.py", b"x = 1\n", ("opacus",), max_bytes=100, time_budget=0.05)
    assert analysis.problem is not None and "time budget" in analysis.problem.message
