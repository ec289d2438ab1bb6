"""Repository hygiene: no binary over 1 MB is committed, except the README's images.

Tools are installed, not vendored (a profiler wheel once sat at the root); a large binary in
the repository bloats every clone and hides what changed. Text files may be large (the SARIF
schema, recorded results); images for the docs live in ``docs/img/``."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import git
import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
MAX_BINARY_BYTES = 1_000_000
ALLOWED_FOLDER = "docs/img/"
_SKIPPED_DIRS = {".git", "__pycache__", ".pytest_cache", ".hypothesis", ".dpcheck_cache", ".venv"}


def committed_files(root: Path) -> list[str]:
    """The files git tracks (the index: committed or staged) under ``root``; outside a git
    checkout (an sdist), every file below it but caches."""
    try:
        repo = git.Repo(root)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        found = []
        for folder, dirs, files in os.walk(root):
            dirs[:] = [d for d in dirs if d not in _SKIPPED_DIRS and not d.endswith(".egg-info")]
            found += [Path(folder, f).relative_to(root).as_posix() for f in files]
        return sorted(found)
    return sorted(name for name in repo.git.ls_files("-z").split("\0") if name)


def is_binary(path: Path) -> bool:
    """Whether a file is binary: a NUL byte in its first 8 KiB, or not UTF-8 text."""
    with path.open("rb") as handle:
        head = handle.read(8192)
    if b"\0" in head:
        return True
    try:
        path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


def oversized_binaries(root: Path) -> list[str]:
    """Committed binaries over ``MAX_BINARY_BYTES`` outside ``ALLOWED_FOLDER``."""
    return [
        name
        for name in committed_files(root)
        if not name.startswith(ALLOWED_FOLDER)
        and (root / name).is_file()
        and (root / name).stat().st_size > MAX_BINARY_BYTES
        and is_binary(root / name)
    ]


def test_no_binary_over_1_mb_is_committed_outside_docs_img() -> None:
    assert oversized_binaries(REPO_ROOT) == []


def test_the_check_finds_a_committed_wheel_and_allows_large_text_and_doc_images(
    tmp_path: Path,
) -> None:
    repo = git.Repo.init(tmp_path)
    (tmp_path / "docs" / "img").mkdir(parents=True)
    wheel = b"PK\x03\x04" + os.urandom(1_200_000)
    (tmp_path / "tool-1.0-py3-none-any.whl").write_bytes(wheel)
    (tmp_path / "docs" / "img" / "plot.png").write_bytes(b"\x89PNG\r\n\x1a\n" + wheel)
    (tmp_path / "schema.json").write_text('{"a": "' + "x" * 1_500_000 + '"}', "utf-8")
    (tmp_path / "small.bin").write_bytes(b"\0" * 1000)
    (tmp_path / "untracked.whl").write_bytes(wheel)
    repo.git.add("tool-1.0-py3-none-any.whl", "docs", "schema.json", "small.bin")
    assert oversized_binaries(tmp_path) == ["tool-1.0-py3-none-any.whl"]
    subprocess.run(["git", "rm", "-q", "--cached", "tool-1.0-py3-none-any.whl"], cwd=tmp_path,
                   check=True)
    assert oversized_binaries(tmp_path) == []


@pytest.mark.skipif(not (REPO_ROOT / ".git").exists(), reason="not a git checkout")
def test_the_repository_listing_is_gits_own() -> None:
    assert "pyproject.toml" in committed_files(REPO_ROOT)
    assert not any(name.startswith(".git/") for name in committed_files(REPO_ROOT))
