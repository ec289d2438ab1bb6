"""Shared pieces of the hardening tests: a secret outside the project, real git repositories,
and the CLI run in-process with its output captured."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Mapping
from pathlib import Path

import git
import jsonschema
import pytest

from dpcheck.cli import main

REPO_ROOT = Path(__file__).resolve().parents[2]
FIXTURES = REPO_ROOT / "fixtures"
REPORT_SCHEMA = json.loads((REPO_ROOT / "docs" / "report.schema.json").read_text("utf-8"))

SECRET = "s3cr3t-9f3b2c-not-for-logs"
"""Text of a file outside the scanned project: it must never appear in any output."""
SECRET_TEXT = (
    f"root:x:0:0:{SECRET}:/root:/bin/bash\n"  # what /etc/passwd looks like: invalid Python
    f"opacus @ {SECRET}\n"  # an invalid requirement, whose error message would quote it
    f"{SECRET} = 1\n"
)

Cli = Callable[..., tuple[int, str, str]]


def copy_fixture(name: str, dest: Path) -> Path:
    """A fixture project's files (without its expected results) copied to ``dest``."""
    shutil.copytree(FIXTURES / name, dest, ignore=shutil.ignore_patterns("expected.json"),
                    dirs_exist_ok=True)
    return dest


def commit_all(root: Path, message: str = "snapshot") -> git.Repo:
    """Make ``root`` a git repository (if it is not one) and commit everything in it."""
    try:
        repo = git.Repo(root)
    except git.InvalidGitRepositoryError:
        repo = git.Repo.init(root)
        with repo.config_writer() as config:
            config.set_value("user", "name", "dpcheck tests")
            config.set_value("user", "email", "tests@dpcheck.invalid")
    repo.git.add("--all")
    repo.git.commit("--quiet", "--allow-empty", "-m", message)  # git itself: any file name
    return repo


def write_files(root: Path, files: Mapping[str, str]) -> Path:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def assert_valid_report(text: str) -> dict:
    """Parse a JSON report (strict UTF-8, strict JSON) and validate it against the documented
    schema, ``docs/report.schema.json``."""
    text.encode("utf-8")  # no lone surrogate: valid Unicode throughout
    document = json.loads(text, parse_constant=lambda c: pytest.fail(f"non-standard {c}"))
    jsonschema.validate(document, REPORT_SCHEMA, cls=jsonschema.Draft202012Validator)
    return document


@pytest.fixture
def secret_file(tmp_path: Path) -> Path:
    """A file outside every project the tests build, holding ``SECRET``."""
    path = tmp_path / "outside" / "secret.txt"
    path.parent.mkdir()
    path.write_text(SECRET_TEXT, encoding="utf-8")
    return path


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Cli:
    """Run ``dpcheck ARGS...`` in-process: (exit code, stdout, stderr)."""

    def run(*argv: str) -> tuple[int, str, str]:
        capsys.readouterr()
        code = main([str(a) for a in argv])
        out, err = capsys.readouterr()
        return code, out, err

    return run
