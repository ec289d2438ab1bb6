"""dpcheck never imports or runs the code it scans, proven with canaries.

``fixtures/never_execute_canaries`` holds a ``setup.py``, a ``conftest.py``, a package
``__init__.py`` and a training script, each of which, when imported or run, writes a marker
file, connects to a port this test listens on and ends its process at once (``os._exit``, which
no handler can catch: had dpcheck imported one in-process, this test's process would be gone).
The first test shows the canaries are live; the second runs a scan (serial and with worker
processes), ``--new-since``, ``baseline write``, ``--diff``/``--fix`` and ``history`` over them
and finds no trace.

The fixture lies outside ``testpaths`` (``tests/``), so pytest never collects its
``conftest.py``; the tests only ever use copies of it in temp dirs."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.hardening.conftest import FIXTURES, Cli, assert_valid_report, commit_all

CANARIES = FIXTURES / "never_execute_canaries"
CANARY_FILES = ("setup.py", "conftest.py", "lotsize/__init__.py", "train.py")


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.setblocking(False)
    yield server
    server.close()


@pytest.fixture
def canary_env(tmp_path: Path, listener: socket.socket, monkeypatch: pytest.MonkeyPatch) -> Path:
    markers = tmp_path / "markers"
    markers.mkdir()
    monkeypatch.setenv("DPCHECK_CANARY_DIR", str(markers))
    monkeypatch.setenv("DPCHECK_CANARY_PORT", str(listener.getsockname()[1]))
    return markers


def _connections(listener: socket.socket) -> int:
    count = 0
    while True:
        try:
            listener.accept()[0].close()
        except BlockingIOError:
            return count
        count += 1


def _copy(dest: Path) -> Path:
    shutil.copytree(CANARIES, dest, ignore=shutil.ignore_patterns("expected.json"))
    return dest


def _traces(root: Path, markers: Path) -> list[str]:
    return sorted(p.name for p in [*markers.iterdir(), *root.rglob("EXECUTED-*")])


def test_every_canary_fires_when_its_file_is_run_or_imported(
    tmp_path: Path, canary_env: Path, listener: socket.socket
) -> None:
    root = _copy(tmp_path / "project")
    runs = {
        "setup.py": [sys.executable, "setup.py", "--name"],
        "conftest.py": [sys.executable, "-c", "import conftest"],
        "lotsize/__init__.py": [sys.executable, "-c", "import lotsize"],
        "train.py": [sys.executable, "train.py"],
    }
    assert sorted(runs) == sorted(CANARY_FILES)
    for name, argv in runs.items():
        done = subprocess.run(argv, cwd=root, capture_output=True, timeout=60)
        assert done.returncode == 97, (name, done.stderr)
    assert _traces(root, canary_env) == sorted(
        f"EXECUTED-{name.replace('/', '_')}" for name in CANARY_FILES
    )
    assert _connections(listener) == len(CANARY_FILES)


def test_scan_gate_baseline_and_history_never_run_the_scanned_code(
    tmp_path: Path, canary_env: Path, listener: socket.socket, cli: Cli
) -> None:
    root = _copy(tmp_path / "project")
    for i in range(40):  # enough files for a parallel scan to use worker processes
        (root / "lotsize" / f"part{i:02d}.py").write_text(f"PART = {i}\n", "utf-8")
    repo = commit_all(root, "base")
    repo.create_tag("v1.0.0")
    train = root / "train.py"
    train.write_text(train.read_text("utf-8").replace("0.1 * (noisy", "0.05 * (noisy"), "utf-8")
    commit_all(root, "smaller step")
    for jobs in ("1", "2"):
        code, out, _ = cli("scan", "--no-cache", "--jobs", jobs, "--format", "json", root)
        assert code == 1 and [f["rule"] for f in assert_valid_report(out)["findings"]] == ["DP101"]
    code, out, err = cli("scan", "--no-cache", "--new-since", "HEAD~1", root)
    assert code == 1 and "0 findings also present at HEAD~1" in err  # its line was edited
    assert cli("baseline", "write", "--no-cache", tmp_path / "b.json", root)[0] == 0
    # the fix stage reads, rewrites and re-analyses text; it runs nothing either
    code, out, err = cli("scan", "--no-cache", "--diff", "--unsafe-fixes", root)
    assert code in (0, 1) and "DP101 fix not applied" in err
    assert cli("scan", "--no-cache", "--fix", "--unsafe-fixes", root)[0] == 1
    code, out, _ = cli("history", "--no-cache", "--package", "lotsize", "--format", "json", root)
    assert code == 0 and '"tag": "v1.0.0"' in out
    assert _traces(root, canary_env) == []
    assert _connections(listener) == 0


def test_pytest_collecting_this_suite_never_imports_the_canaries(
    tmp_path: Path, canary_env: Path, listener: socket.socket
) -> None:
    """The fixture's conftest.py sits outside ``testpaths``: collecting the whole suite from the
    repository root (what ``python -m pytest`` does) must not import it."""
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"],
        cwd=FIXTURES.parent, capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "tests collected" in done.stdout
    assert _traces(CANARIES, canary_env) == [] and _connections(listener) == 0
