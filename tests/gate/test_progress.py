"""The stderr progress line: drawn on a terminal only, throttled, erased before the report."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

from dpcheck.progress import LineProgress, labelled, progress_display

REPO_ROOT = Path(__file__).resolve().parents[2]
CLEAR = "\r\x1b[2K"


def test_line_progress_redraws_one_line_and_clears_it() -> None:
    stream = io.StringIO()
    display = LineProgress(stream, min_interval=0.0)
    display("analysing files", 1, 4)
    display("analysing files", 4, 4)
    display.clear()
    assert stream.getvalue() == (
        f"{CLEAR}dpcheck: analysing files 1/4 (25%){CLEAR}dpcheck: analysing files 4/4 (100%){CLEAR}"
    )


def test_line_progress_skips_redraws_within_the_interval_but_never_the_last() -> None:
    stream = io.StringIO()
    display = LineProgress(stream, min_interval=3600.0)
    for done in range(11):
        display("analysing files", done, 10)
    assert stream.getvalue().count(CLEAR) == 2
    assert stream.getvalue().endswith("10/10 (100%)")


def test_labelled_prefixes_the_stage_and_keeps_none() -> None:
    stream = io.StringIO()
    labelled(LineProgress(stream, min_interval=0.0), "at main")("analysing files", 2, 2)  # type: ignore[misc]
    assert "dpcheck: at main: analysing files 2/2" in stream.getvalue()
    assert labelled(None, "at main") is None


def test_no_display_unless_a_terminal_and_not_quiet() -> None:
    master, slave = os.openpty()
    try:
        with open(slave, "w", closefd=False) as tty:
            with progress_display(quiet=False, stream=tty) as shown:
                assert isinstance(shown, LineProgress)
            with progress_display(quiet=True, stream=tty) as hidden:
                assert hidden is None
        with progress_display(quiet=False, stream=io.StringIO()) as piped:
            assert piped is None
    finally:
        os.close(master)
        os.close(slave)


def _scan_stderr_on_tty(project: Path, *flags: str) -> str:
    """Run the real CLI with stderr on a pseudo-terminal and return what it wrote there."""
    master, slave = os.openpty()
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    proc = subprocess.run(
        [sys.executable, "-m", "dpcheck", "scan", "--no-cache", *flags, str(project)],
        stdout=subprocess.PIPE,
        stderr=slave,
        env=env,
        timeout=120,
    )
    os.close(slave)
    chunks = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(master)
    assert proc.returncode in (0, 1)
    return b"".join(chunks).decode()


def test_scan_shows_progress_on_a_terminal_only(tmp_path: Path) -> None:
    for i in range(3):
        (tmp_path / f"m{i}.py").write_text(f"X = {i}\n")
    shown = _scan_stderr_on_tty(tmp_path)
    assert "dpcheck: analysing files 3/3 (100%)" in shown and shown.endswith(CLEAR)
    assert _scan_stderr_on_tty(tmp_path, "--quiet") == ""
    piped = subprocess.run(
        [sys.executable, "-m", "dpcheck", "scan", "--no-cache", str(tmp_path)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
        timeout=120,
    )
    assert piped.stderr == "" and "analysing" not in piped.stdout


def test_engine_reports_each_analysed_file_serial_parallel_and_cached(tmp_path: Path) -> None:
    from dpcheck.engine import ScanOptions, run, settle

    project = tmp_path / "many"
    project.mkdir()
    for i in range(40):  # above the engine's threshold for a process pool
        (project / f"m{i:02}.py").write_text(f"import torch\nX = {i}\n")
    for jobs in (1, 2):
        calls: list[tuple[str, int, int]] = []
        options = ScanOptions(paths=(project,), jobs=jobs, use_cache=False)
        run(settle(options), progress=lambda *call: calls.append(call))
        assert [done for _, done, _ in calls] == list(range(41))
        assert {(stage, total) for stage, _, total in calls} == {("analysing files", 40)}
    cached: list[tuple[str, int, int]] = []
    options = ScanOptions(paths=(project,), cache_dir=tmp_path / "cache")
    run(settle(options))
    run(settle(options), progress=lambda *call: cached.append(call))
    assert cached == [("analysing files", 40, 40)]
