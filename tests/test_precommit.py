"""The pre-commit hook, run for real: ``pre-commit try-repo`` against a snapshot of this checkout.

The snapshot is a fresh git repository holding the working tree's files (tracked and untracked,
not ignored), so the test checks the hook definition and the package as they are now; try-repo
alone would only see committed and tracked changes. pre-commit builds the hook's virtualenv with
pip (the package and its build backend come from the configured package index); when that index
cannot be reached the environment cannot be built and the end-to-end tests are skipped, saying so.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

import git
import pytest
import yaml

from identify import identify

from dpcheck.discover.files import SOURCE_SUFFIXES, is_dependency_file

REPO_ROOT = Path(__file__).resolve().parents[1]
FIXTURES = REPO_ROOT / "fixtures"
HOOKS_FILE = REPO_ROOT / ".pre-commit-hooks.yaml"
_INDEX_FAILURES = (
    "Could not find a version that satisfies",
    "No matching distribution found",
    "Failed to establish a new connection",
    "Temporary failure in name resolution",
    "Network is unreachable",
)


def _hook(hook_id: str = "dpcheck") -> dict:
    [hook] = [h for h in yaml.safe_load(HOOKS_FILE.read_text()) if h["id"] == hook_id]
    return hook


def test_the_fix_hook_is_the_scan_hook_with_fix() -> None:
    """``dpcheck-fix`` selects the same files and runs the same scan, with ``--fix``."""
    scan, fix = _hook(), _hook("dpcheck-fix")
    assert [h["id"] for h in yaml.safe_load(HOOKS_FILE.read_text())] == ["dpcheck", "dpcheck-fix"]
    assert fix["entry"] == "dpcheck scan --fix --output-format concise"
    same = ("language", "additional_dependencies", "types_or", "files", "pass_filenames",
            "require_serial", "minimum_pre_commit_version")
    assert {k: fix[k] for k in same} == {k: scan[k] for k in same}


def test_hook_definition_is_the_core_install_passing_file_names() -> None:
    hook = _hook()
    assert hook["id"] == "dpcheck" and hook["language"] == "python"
    assert hook["entry"] == "dpcheck scan --output-format concise"
    assert hook["additional_dependencies"] == []
    assert hook["pass_filenames"] is True
    assert hook["require_serial"] is True  # one process: dpcheck resolves the whole project anyway


@pytest.mark.parametrize(
    "path",
    [
        "train.py",
        "pkg/sub/model.py",
        "requirements.txt",
        "requirements-dev.txt",
        "ci/requirements_gpu.txt",
        "requirements/base.txt",
        "pyproject.toml",
        "sub/setup.py",
        "setup.cfg",
        "environment.yml",
        "envs/environment.yaml",
        "Pipfile",
        "README.md",
        "notes.txt",
        "data/requirements.csv",
        "Pipfile.lock",
        "pyproject.toml.bak",
        "train.pyc",
        "tutorial.ipynb",
        "notebooks/02 training.ipynb",
        "notebook.ipynb.bak",
        "data/table.json",
    ],
)
def test_the_hook_selects_python_notebooks_and_exactly_the_dependency_files(path: str) -> None:
    """pre-commit runs a hook on a file its ``files`` pattern matches and whose identify tags
    meet ``types_or``; both are checked, the tags with pre-commit's own classifier."""
    hook = _hook()
    expected = path.endswith(SOURCE_SUFFIXES) or is_dependency_file(PurePosixPath(path))
    tags = identify.tags_from_filename(path)
    selected = bool(re.search(hook["files"], path)) and bool(tags & set(hook["types_or"]))
    assert selected is expected


def _snapshot(dest: Path) -> Path:
    """Commit the checkout's current files (tracked and untracked-not-ignored) in a new repo."""
    source = git.Repo(REPO_ROOT)
    names = source.git.ls_files("--cached", "--others", "--exclude-standard", "-z").split("\0")
    for name in filter(None, names):
        path = REPO_ROOT / name
        if path.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, dest / name)
    return _commit_tree(dest)


def _commit_tree(root: Path) -> Path:
    repo = git.Repo.init(root)
    with repo.config_writer() as config:
        config.set_value("user", "name", "dpcheck tests").set_value("user", "email", "t@dpcheck.invalid")
    repo.git.add("--all")
    repo.index.commit("snapshot")
    return root


@pytest.fixture(scope="module")
def hook_runner(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """A function running the hook via ``pre-commit try-repo`` in a project folder. try-repo
    builds the hook's virtualenv afresh in a temporary store on every call (about 12 s here);
    ``PRE_COMMIT_HOME`` only keeps pre-commit's other files out of the user's cache."""
    if not (REPO_ROOT / ".git").exists():
        pytest.skip("not a git checkout of dpcheck: try-repo needs the repository")
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    pytest.importorskip("pre_commit")
    base = tmp_path_factory.mktemp("precommit")
    snapshot = _snapshot(base / "dpcheck")
    env = {**os.environ, "PRE_COMMIT_HOME": str(base / "home"), "PRE_COMMIT_COLOR": "never"}
    env.pop("PYTHONPATH", None)

    def run(project: Path, *selection: str, hook: str = "dpcheck") -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(
            [sys.executable, "-m", "pre_commit", "try-repo", str(snapshot), hook, *selection],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        output = proc.stdout + proc.stderr
        if "An unexpected error has occurred" in output and any(m in output for m in _INDEX_FAILURES):
            pytest.skip(f"pre-commit could not install the hook: package index unreachable\n{output[-1500:]}")
        return proc

    yield run


def _project(tmp_path: Path, fixture: str) -> Path:
    root = tmp_path / fixture
    shutil.copytree(FIXTURES / fixture, root, ignore=shutil.ignore_patterns("expected.json"))
    return _commit_tree(root)


def test_hook_fails_on_a_dp101_project(hook_runner, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    proc = hook_runner(_project(tmp_path, "opacus013_attach_asgm"), "--all-files")
    output = proc.stdout + proc.stderr
    assert proc.returncode == 1, output
    assert re.search(r"dpcheck\.+Failed", output)
    # concise: the finding's one line and the summary, no code frame
    assert "train_cifar.py:48:5: DP101 [error] " in output
    assert " | " not in output and "= evidence" not in output


def test_hook_reports_a_notebook_at_its_cell(hook_runner, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    proc = hook_runner(_project(tmp_path, "notebook_opacus_tutorial"), "--all-files")
    output = proc.stdout + proc.stderr
    assert proc.returncode == 1, output
    assert "tutorial.ipynb:cell 10:2:34: DP101" in output


def test_fix_hook_applies_the_verified_fix_and_fails_the_run(hook_runner, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """pre-commit fails a hook that changed a file: the fix is then reviewed and staged."""
    project = _project(tmp_path, "accountant_steps_mismatch")
    before = (project / "train.py").read_text("utf-8")
    proc = hook_runner(project, "--all-files", hook="dpcheck-fix")
    output = proc.stdout + proc.stderr
    assert proc.returncode == 1, output
    assert "files were modified by this hook" in output
    after = (project / "train.py").read_text("utf-8")
    assert after == before.replace("epochs=30, delta", "epochs=EPOCHS, delta")
    assert "DP103" not in output.split("files were modified by this hook")[-1]


def test_hook_passes_on_a_clean_project(hook_runner, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    proc = hook_runner(_project(tmp_path, "opacus1_sum_reduction_sgm"), "--all-files")
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output
    assert re.search(r"dpcheck\.+Passed", output)


@pytest.mark.slow
def test_hook_on_a_changed_pin_alone_reports_the_findings_citing_it(hook_runner, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    proc = hook_runner(_project(tmp_path, "opacus013_attach_asgm"), "--files", "requirements.txt")
    output = proc.stdout + proc.stderr
    assert proc.returncode == 1, output
    assert "train_cifar.py:48:5: DP101 [error]" in output and "Found 1 finding" in output
