"""A hostile checkout cannot make dpcheck read, or print, anything outside the project.

Each project is a real git repository in a temp dir holding a real DP101 finding and symbolic
links to a file outside it (``SECRET``): as Python sources, dependency files, an include, a
folder, the config, the baseline and the cache. Every output format, the gate's ``--new-since``
and ``baseline write`` runs are searched for the secret and for the target's path."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dpcheck import engine
from tests.hardening.conftest import (
    SECRET,
    Cli,
    assert_valid_report,
    commit_all,
    copy_fixture,
    write_files,
)

LINKS = ("passwd.py", "extra/requirements.txt", "setup.cfg", "pkg/included.txt")
"""Links to the secret file a scan would read; a tracked link to a folder (``linked``) is one
file to git, never descended into, so it needs no report."""


def _hostile(root: Path, secret: Path) -> Path:
    """The ASGM fixture (DP101 at dpsgd.py:49) plus links out of the project, committed."""
    copy_fixture("torch_loop_asgm_len_batch", root)
    (root / "extra").mkdir()
    (root / "pkg").mkdir()
    for name in LINKS:
        (root / name).symlink_to(secret)
    (root / "linked").symlink_to(secret.parent, target_is_directory=True)
    with (root / "requirements.txt").open("a") as handle:
        handle.write("-r pkg/included.txt\n-r ../outside/secret.txt\n")
    commit_all(root)
    return root


def _assert_nothing_from_outside(text: str, secret: Path) -> None:
    assert SECRET not in text
    assert str(secret) not in text  # nor where a link leads


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github"])
def test_links_out_of_a_git_project_are_skipped_once_and_never_printed(
    tmp_path: Path, secret_file: Path, cli: Cli, fmt: str
) -> None:
    root = _hostile(tmp_path / "project", secret_file)
    code, out, err = cli("scan", "--no-cache", "--format", fmt, root)
    _assert_nothing_from_outside(out + err, secret_file)
    assert code == 1  # the DP101 error still fails the gate: the links cost nothing else
    assert "dpsgd.py" in out
    if fmt == "json":
        report = assert_valid_report(out)
        skipped = [e for e in report["errors"] if e["message"].startswith("symbolic link")]
        assert sorted(e["path"] for e in skipped) == sorted(LINKS)  # each once, its own path
        includes = [e["message"] for e in report["errors"] if e["path"] == "requirements.txt"]
        assert all("is outside the project; not read" in m for m in includes) and len(includes) == 2
        assert not any(e["internal"] for e in report["errors"])
        assert [f["rule"] for f in report["findings"]] == ["DP101"]
        assert report["findings"][0]["bound"] is not None  # the project's own pin still read
    else:
        for name in LINKS:
            assert name in out


def test_the_gate_and_the_baseline_never_read_through_the_links(
    tmp_path: Path, secret_file: Path, cli: Cli
) -> None:
    root = _hostile(tmp_path / "project", secret_file)
    (root / "later.py").symlink_to(secret_file)
    commit_all(root, "another link")
    code, out, err = cli("scan", "--no-cache", "--format", "json", "--new-since", "HEAD~1", root)
    _assert_nothing_from_outside(out + err, secret_file)
    assert code == 0 and assert_valid_report(out)["findings"] == []  # DP101 known at HEAD~1
    baseline = tmp_path / "baseline.json"
    code, out, err = cli("baseline", "write", "--no-cache", baseline, root)
    _assert_nothing_from_outside(out + err + baseline.read_text("utf-8"), secret_file)
    code, out, err = cli("scan", "--no-cache", "--baseline", baseline, root)
    assert code == 0 and "No findings" in out


def test_a_named_link_out_of_the_project_reads_nothing_and_exits_2(
    tmp_path: Path, secret_file: Path, cli: Cli
) -> None:
    root = _hostile(tmp_path / "project", secret_file)
    code, out, err = cli("scan", "--no-cache", root / "passwd.py")
    _assert_nothing_from_outside(out + err, secret_file)
    assert code == 2  # nothing could be read: a clean exit would claim a checked file
    assert "passwd.py: [error] symbolic link to a path outside the project" in out


def test_config_and_baseline_that_lead_out_of_the_project_are_refused(
    tmp_path: Path, secret_file: Path, cli: Cli
) -> None:
    root = _hostile(tmp_path / "project", secret_file)
    (root / "pyproject.toml").symlink_to(secret_file)  # the default config: skipped, reported
    (root / "dpcheck.toml").symlink_to(secret_file)
    (root / "accepted.json").symlink_to(secret_file)
    code, out, err = cli("scan", "--no-cache", "--format", "json", root)
    _assert_nothing_from_outside(out + err, secret_file)
    assert code == 1
    assert "pyproject.toml" in {e["path"] for e in assert_valid_report(out)["errors"]}
    for flag, name in (("--config", "dpcheck.toml"), ("--baseline", "accepted.json")):
        code, out, err = cli("scan", "--no-cache", flag, root / name, root)
        _assert_nothing_from_outside(out + err, secret_file)
        assert code == 2 and f"{name}: symbolic link to a path outside the project" in err


def test_a_linked_cache_folder_or_marker_is_never_written_through(
    tmp_path: Path, secret_file: Path, cli: Cli
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    linked = copy_fixture("torch_loop_asgm_len_batch", tmp_path / "linked")
    (linked / ".dpcheck_cache").symlink_to(elsewhere, target_is_directory=True)
    code, out, _ = cli("scan", linked)
    assert code == 1 and ".dpcheck_cache: [error] symbolic link" in out
    assert list(elsewhere.iterdir()) == []
    marked = copy_fixture("torch_loop_asgm_len_batch", tmp_path / "marked")
    (marked / ".dpcheck_cache").mkdir()
    (marked / ".dpcheck_cache" / ".gitignore").symlink_to(secret_file)
    before = secret_file.read_text("utf-8")
    code, _, _ = cli("scan", marked)
    assert code == 1 and secret_file.read_text("utf-8") == before


def test_devices_fifos_and_sockets_in_a_walked_folder_are_never_opened(
    tmp_path: Path, secret_file: Path
) -> None:
    root = copy_fixture("torch_loop_asgm_len_batch", tmp_path / "project")
    os.mkfifo(root / "fifo.py")  # an open() for reading would block the scan forever
    os.mkfifo(root / "requirements-dev.txt")
    (root / "zero.py").symlink_to("/dev/zero")  # reading it would never end
    server = __import__("socket").socket(__import__("socket").AF_UNIX)
    server.bind(str(root / "sock.py"))
    try:
        for argv in ([root], [root / "fifo.py"]):
            done = subprocess.run(
                [sys.executable, "-m", "dpcheck", "scan", "--no-cache", *map(str, argv)],
                capture_output=True, text=True, timeout=300,
            )
            if argv == [root]:
                assert done.returncode == 1, done.stderr
                for name in ("fifo.py", "requirements-dev.txt", "sock.py"):
                    assert f"{name}: [error] not a regular file" in done.stdout
                assert "zero.py: [error] symbolic link to a path outside the project" in done.stdout
            else:
                assert done.returncode == 2 and "fifo.py: [error] not a regular file" in done.stdout
    finally:
        server.close()


def test_history_reads_regular_blobs_only(tmp_path: Path, secret_file: Path, cli: Cli) -> None:
    root = write_files(tmp_path / "lib", {
        "fakedp/__init__.py": "",
        "fakedp/optimizer.py": "class DPOptimizer:\n    def step(self):\n        return None\n",
    })
    (root / "fakedp" / "leak.py").symlink_to(secret_file)
    repo = commit_all(root, "release")
    repo.create_tag("v1.0.0")
    code, out, err = cli("history", "--no-cache", "--evidence", "--format", "json", root)
    _assert_nothing_from_outside(out + err, secret_file)
    assert code == 0 and '"tag": "v1.0.0"' in out


def test_a_project_virtualenvs_metadata_linked_out_is_not_read(tmp_path: Path, cli: Cli) -> None:
    """The installed version decides an unpinned library; a checkout's virtualenv whose
    METADATA leads out of the project must not put that file's Version header in a report."""
    root = copy_fixture("opacus_unpinned", tmp_path / "project")
    site = root / ".venv" / "lib" / "python3.11" / "site-packages"
    (root / ".venv").mkdir()
    (root / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (site / "opacus").mkdir(parents=True)
    (site / "opacus" / "__init__.py").write_text("")
    (site / "opacus-1.4.0.dist-info").mkdir()
    metadata = site / "opacus-1.4.0.dist-info" / "METADATA"
    outside = tmp_path / "outside-metadata"
    outside.write_text(f"Metadata-Version: 2.1\nName: opacus\nVersion: 1.4.0+{SECRET}\n")
    shutil.copy(outside, metadata)
    _, out, _ = cli("scan", "--no-cache", "--format", "json", root)
    assert f'"library": "opacus==1.4.0+{SECRET}"' in out  # a real file inside is read
    metadata.unlink()
    metadata.symlink_to(outside)
    code, out, err = cli("scan", "--no-cache", "--format", "json", root)
    assert SECRET not in out + err and '"library": "opacus"' in out


def test_a_syntax_error_never_makes_the_parser_read_a_file_by_its_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """CPython quotes a syntax error's line by opening the file a parse is named after, relative
    to the current folder, and measures the error's column on that file's text. A file of that
    name where dpcheck runs (outside the project) must not be read: the column is the scanned
    text's, and no outside text reaches the report."""
    line = "x = 1; " * 100 + "y = ("
    root = write_files(tmp_path / "project", {"train.py": line + "\n"})
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    (elsewhere / "train.py").write_text("SECRET_TOKEN = (\n", encoding="utf-8")
    monkeypatch.chdir(elsewhere)
    result = engine.scan(engine.ScanOptions(paths=[root], use_cache=False, jobs=1))
    [finding] = [f for f in result.findings if f.rule == "DP001"]
    assert (finding.span.line, finding.span.column) == (1, len(line))
    assert "SECRET_TOKEN" not in json.dumps(result.to_json("test"))
