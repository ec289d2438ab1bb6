"""A fix writes only where a scan may read: a regular file whose real path lies in the project;
and its verification reads the edited text from memory, writing nothing."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from dpcheck.discover.confine import ReadRefused, overlaid, read_inside, write_inside
from dpcheck.engine import ScanOptions, settle
from dpcheck.fixing import plan_fixes, write_changes
from dpcheck.gate import scan_named
from tests.fixture_projects import FIXTURES


def test_write_inside_replaces_the_content_and_keeps_the_inode(tmp_path: Path) -> None:
    target = tmp_path / "train.py"
    target.write_bytes(b"x = 1\r\n" * 3)
    inode = target.stat().st_ino
    write_inside(target, tmp_path, b"y = 2\n")
    assert target.read_bytes() == b"y = 2\n" and target.stat().st_ino == inode


def test_write_inside_never_writes_through_a_link_out_of_the_project(tmp_path: Path) -> None:
    project, outside = tmp_path / "project", tmp_path / "outside.py"
    project.mkdir()
    outside.write_text("SECRET = 1\n")
    (project / "train.py").symlink_to(outside)
    with pytest.raises(ReadRefused, match="outside the project; not written"):
        write_inside(project / "train.py", project, b"pwned\n")
    assert outside.read_text() == "SECRET = 1\n"


def test_write_inside_follows_a_link_that_stays_in_the_project(tmp_path: Path) -> None:
    (tmp_path / "real.py").write_text("a = 1\n")
    (tmp_path / "alias.py").symlink_to(tmp_path / "real.py")
    write_inside(tmp_path / "alias.py", tmp_path, b"a = 2\n")
    assert (tmp_path / "real.py").read_text() == "a = 2\n" and (tmp_path / "alias.py").is_symlink()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_write_inside_never_opens_a_fifo(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.py")
    with pytest.raises(ReadRefused, match="not a regular file"):
        write_inside(tmp_path / "pipe.py", tmp_path, b"x\n")


def test_overlaid_reads_answer_from_memory_inside_the_context_only(tmp_path: Path) -> None:
    path = tmp_path / "train.py"
    path.write_bytes(b"on disk\n")
    with overlaid({path: b"in memory\n"}):
        assert read_inside(path, tmp_path) == b"in memory\n"
        assert read_inside(path, tmp_path, limit=2) == b"in "
        with overlaid({tmp_path / "other.py": b"other\n"}):
            assert read_inside(path, tmp_path) == b"in memory\n"
    assert read_inside(path, tmp_path) == b"on disk\n"


def test_a_file_swapped_for_a_link_out_of_the_project_before_writing_is_left_alone(
        tmp_path: Path) -> None:
    """The check is made when writing, not only when reading: a file that became a link to
    somewhere else between the scan and the write is refused, and the target stays intact."""
    root = tmp_path / "project"
    shutil.copytree(FIXTURES / "accountant_steps_mismatch", root,
                    ignore=shutil.ignore_patterns("expected.json"))
    settings = settle(ScanOptions(paths=[root], use_cache=False, jobs=1))
    before = scan_named(settings)
    plan = plan_fixes(settings, before, before.findings, applying=True)
    changes = plan.changes()
    assert list(changes) == ["train.py"]
    outside = tmp_path / "elsewhere.py"
    outside.write_bytes((root / "train.py").read_bytes())
    (root / "train.py").unlink()
    (root / "train.py").symlink_to(outside)
    failed = write_changes(root, changes, plan.texts.encoded)
    assert failed == {"train.py": "symbolic link to a path outside the project; not written"}
    assert outside.read_bytes() == changes["train.py"][0].encode("utf-8")


def test_verifying_a_fix_writes_nothing(tmp_path: Path) -> None:
    root = tmp_path / "project"
    shutil.copytree(FIXTURES / "torch_loop_named_batch_asgm_fixable", root,
                    ignore=shutil.ignore_patterns("expected.json"))
    stat = (root / "train.py").stat()
    settings = settle(ScanOptions(paths=[root], use_cache=False, jobs=1))
    before = scan_named(settings)
    plan = plan_fixes(settings, before, before.findings, applying=True)
    assert [o.candidate is not None for o in plan.outcomes] == [True]
    after = (root / "train.py").stat()
    assert (after.st_mtime_ns, after.st_size) == (stat.st_mtime_ns, stat.st_size)
    assert sorted(p.name for p in root.iterdir()) == ["requirements.txt", "train.py"]

