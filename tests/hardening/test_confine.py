"""The one rule every reader applies: a regular file whose real path is inside the project."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from dpcheck.discover.confine import (
    NOT_REGULAR,
    OUTSIDE,
    ReadRefused,
    read_inside,
    read_named,
    refusal,
)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "a.py").write_text("A = 1\n")
    (tmp_path / "outside.txt").write_text("secret\n")
    return root


def test_a_file_and_a_link_that_stays_inside_are_read(project: Path) -> None:
    (project / "alias.py").symlink_to(project / "pkg" / "a.py")
    (project / "dir").symlink_to(project / "pkg", target_is_directory=True)
    assert read_inside(project / "pkg" / "a.py", project) == b"A = 1\n"
    assert read_inside(project / "alias.py", project) == b"A = 1\n"
    assert read_inside(project / "dir" / "a.py", project) == b"A = 1\n"


def test_links_out_of_the_project_are_refused_without_naming_the_target(
    project: Path, tmp_path: Path
) -> None:
    (project / "passwd.py").symlink_to(tmp_path / "outside.txt")
    (project / "up").symlink_to(tmp_path, target_is_directory=True)
    (project / "relative.py").symlink_to(Path("..") / "outside.txt")
    for path in (project / "passwd.py", project / "up" / "outside.txt", project / "relative.py"):
        assert refusal(path, project) == OUTSIDE
        with pytest.raises(ReadRefused) as refused:
            read_inside(path, project)
        assert "outside.txt" not in str(refused.value) and "secret" not in str(refused.value)


def test_devices_fifos_and_sockets_are_never_opened(project: Path) -> None:
    os.mkfifo(project / "fifo.py")  # opening it for reading would block forever
    (project / "zero.py").symlink_to("/dev/zero")  # outside the project anyway
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(str(project / "sock.py"))
        assert refusal(project / "fifo.py", project) == NOT_REGULAR
        assert refusal(project / "sock.py", project) == NOT_REGULAR
        for name in ("fifo.py", "sock.py", "zero.py"):
            with pytest.raises(ReadRefused):
                read_inside(project / name, project)
    finally:
        server.close()


def test_a_limit_reads_one_byte_past_it_and_no_more(project: Path) -> None:
    (project / "big.py").write_bytes(b"x" * 10_000)
    assert len(read_inside(project / "big.py", project, limit=100)) == 101
    assert len(read_inside(project / "big.py", project)) == 10_000


def test_a_named_file_outside_the_project_is_the_users_choice(project: Path, tmp_path: Path) -> None:
    assert read_named(tmp_path / "outside.txt", project) == b"secret\n"
    (project / "baseline.json").symlink_to(tmp_path / "outside.txt")
    with pytest.raises(ReadRefused):
        read_named(project / "baseline.json", project)
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(ReadRefused):
        read_named(tmp_path / "pipe", project)


def test_missing_files_and_folders_are_ordinary_read_errors(project: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_inside(project / "gone.py", project)
    with pytest.raises(IsADirectoryError):
        read_inside(project / "pkg", project)
