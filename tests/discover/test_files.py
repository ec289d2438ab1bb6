"""discover_files on real trees: a plain walk, a real git repository, globs, links, errors."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dpcheck.discover.files import discover_files
from dpcheck.errors import DpcheckError

PROJECT = {
    "train.py": "",
    "pkg/__init__.py": "",
    "pkg/sub/model.py": "",
    "notes.txt": "",
    "stubs.pyi": "",
    "requirements.txt": "opacus==1.4.0\n",
    "requirements/dev.txt": "",
    "pkg/pyproject.toml": "",
    ".hidden/secret.py": "",
    "venv/lib/v.py": "",
    "myenv/pyvenv.cfg": "home = /usr/bin\n",
    "myenv/lib/python3.11/site-packages/x.py": "",
    "condaenv/conda-meta/history": "",
    "condaenv/c.py": "",
    "node_modules/n.py": "",
    "pkg/__pycache__/p.py": "",
    "build/b.py": "",
    "dist/d.py": "",
    "pkg/thing.egg-info/e.py": "",
    "site-packages/s.py": "",
}


def relative(root: Path, paths: tuple[Path, ...]) -> list[str]:
    return [p.relative_to(root).as_posix() for p in paths]


def test_walk_outside_git_skips_environments_and_build_outputs(tmp_path, write_tree):
    write_tree(tmp_path, PROJECT)
    found = discover_files([tmp_path])
    assert found.root == tmp_path.resolve()
    assert relative(found.root, found.files) == ["pkg/__init__.py", "pkg/sub/model.py", "train.py"]
    assert relative(found.root, found.dependency_files) == [
        "pkg/pyproject.toml",
        "requirements/dev.txt",
        "requirements.txt",
    ]
    assert found.problems == ()
    assert all(p.is_absolute() for p in found.files)


def test_root_of_a_file_outside_git_is_its_folder(tmp_path, write_tree):
    write_tree(tmp_path, {"a/one.py": "", "a/two.py": "", "requirements.txt": ""})
    found = discover_files([tmp_path / "a" / "one.py"])
    assert found.root == (tmp_path / "a").resolve()
    assert relative(found.root, found.files) == ["one.py"]


def test_explicit_files_are_listed_even_where_the_walk_skips(tmp_path, write_tree):
    write_tree(tmp_path, PROJECT)
    explicit = [tmp_path / "train.py", tmp_path / "build" / "b.py", tmp_path / "notes.txt"]
    found = discover_files(explicit)
    assert relative(found.root, found.files) == ["build/b.py", "notes.txt", "train.py"]
    # the dependency files of the folders holding the explicit files, not of the whole tree
    assert relative(found.root, found.dependency_files) == ["requirements.txt"]


def test_explicit_files_still_obey_exclude(tmp_path, write_tree):
    write_tree(tmp_path, {"tests/test_a.py": "", "src/a.py": ""})
    found = discover_files(
        [tmp_path / "tests" / "test_a.py", tmp_path / "src" / "a.py"], exclude=["tests/**"]
    )
    # outside git the root is the deepest folder holding all the paths
    assert found.root == tmp_path.resolve()
    assert relative(found.root, found.files) == ["src/a.py"]


def test_include_and_exclude_globs_relative_to_root(tmp_path, write_tree):
    write_tree(
        tmp_path,
        {
            "src/a.py": "",
            "src/vendor/v.py": "",
            "src/deep/vendor/w.py": "",
            "src/vendor/keep.txt": "",
            "tests/test_a.py": "",
            "scripts/run.py": "",
            "requirements.txt": "",
            "tests/requirements.txt": "",
        },
    )
    found = discover_files([tmp_path], exclude=["tests/**", "**/vendor/*.py"])
    assert relative(found.root, found.files) == ["scripts/run.py", "src/a.py"]
    assert relative(found.root, found.dependency_files) == ["requirements.txt"]

    restricted = discover_files([tmp_path], include=["src/**"], exclude=["**/vendor/*.py"])
    assert relative(restricted.root, restricted.files) == ["src/a.py"]
    # include restricts Python files only: dependency files describe the whole project
    assert relative(restricted.root, restricted.dependency_files) == [
        "requirements.txt",
        "tests/requirements.txt",
    ]


def test_missing_path_is_an_error_naming_it(tmp_path):
    missing = tmp_path / "nope"
    with pytest.raises(DpcheckError, match="nope"):
        discover_files([missing])


def test_symlink_loop_is_reported_not_followed(tmp_path, write_tree):
    write_tree(tmp_path, {"pkg/a.py": "", "outside/ext.py": ""})
    project = tmp_path / "project"
    write_tree(project, {"pkg/a.py": ""})
    (project / "pkg" / "loop").symlink_to(project, target_is_directory=True)
    (project / "self").symlink_to(project / "self")
    (project / "dangling.py").symlink_to(project / "gone.py")
    (project / "alias").symlink_to(project / "pkg", target_is_directory=True)
    (project / "ext").symlink_to(tmp_path / "outside", target_is_directory=True)
    found = discover_files([project])
    assert relative(found.root, found.files) == ["pkg/a.py"]
    problems = {p.relative_to(found.root).as_posix(): message for p, message in found.problems}
    assert set(problems) == {"pkg/loop", "self", "dangling.py", "ext"}
    assert "loop" in problems["pkg/loop"]
    assert "loop" in problems["self"]
    assert "broken" in problems["dangling.py"]
    # a directory link out of the project is not followed, and named by its own path only
    assert "outside the project" in problems["ext"]
    assert str(tmp_path / "outside") not in problems["ext"]


def test_link_to_a_folder_holding_the_project_is_not_followed(tmp_path, write_tree):
    project = write_tree(tmp_path / "outer" / "project", {"a.py": ""})
    (project / "up").symlink_to(tmp_path / "outer", target_is_directory=True)
    found = discover_files([project])
    assert relative(found.root, found.files) == ["a.py"]
    assert [p.relative_to(found.root).as_posix() for p, _ in found.problems] == ["up"]


def test_link_to_a_folder_elsewhere_in_the_project_is_followed_once(tmp_path, write_tree):
    write_tree(tmp_path, {"src/a.py": "", "vendor/lib/b.py": ""})
    (tmp_path / "src" / "lib").symlink_to(tmp_path / "vendor" / "lib", target_is_directory=True)
    found = discover_files([tmp_path / "src", tmp_path / "vendor"])
    assert found.problems == ()
    assert relative(found.root, found.files) == ["src/a.py", "src/lib/b.py", "vendor/lib/b.py"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a mode-000 folder anyway")
def test_unreadable_folder_is_a_problem(tmp_path, write_tree):
    write_tree(tmp_path, {"a.py": "", "locked/b.py": ""})
    locked = tmp_path / "locked"
    locked.chmod(0)
    try:
        found = discover_files([tmp_path])
    finally:
        locked.chmod(0o755)
    assert relative(found.root, found.files) == ["a.py"]
    assert [(p, "cannot read" in m) for p, m in found.problems] == [(locked, True)]


def test_git_lists_tracked_and_untracked_not_ignored(tmp_path, make_repo):
    tracked = {
        ".gitignore": "ignored.py\nignored_dir/\n",
        "train.py": "",
        "pkg/deep/nested/mod.py": "",
        ".github/scripts/tool.py": "",
        "requirements.txt": "opacus==1.4.0\n",
        "gone.py": "",
    }
    untracked = {
        "new.py": "",
        "ignored.py": "",
        "ignored_dir/x.py": "",
        "myvenv/pyvenv.cfg": "",
        "myvenv/lib/python3.11/site-packages/lib.py": "",
        "node_modules/n.py": "",
        ".cache/c.py": "",
        "pkg/setup.cfg": "",
    }
    make_repo(tmp_path, tracked, untracked)
    (tmp_path / "gone.py").unlink()
    found = discover_files([tmp_path])
    assert found.root == tmp_path.resolve()
    assert relative(found.root, found.files) == [
        ".github/scripts/tool.py",
        "new.py",
        "pkg/deep/nested/mod.py",
        "train.py",
    ]
    assert relative(found.root, found.dependency_files) == ["pkg/setup.cfg", "requirements.txt"]


def test_git_subfolder_scan_has_the_work_tree_top_as_root(tmp_path, make_repo):
    make_repo(
        tmp_path,
        {"pyproject.toml": "", "src/pkg/a.py": "", "src/other.py": "", "docs/conf.py": ""},
        {"src/pkg/b.py": ""},
    )
    found = discover_files([tmp_path / "src" / "pkg"])
    assert found.root == tmp_path.resolve()
    assert relative(found.root, found.files) == ["src/pkg/a.py", "src/pkg/b.py"]
    assert relative(found.root, found.dependency_files) == ["pyproject.toml"]


def test_git_explicit_ignored_file_is_listed(tmp_path, make_repo):
    make_repo(tmp_path, {".gitignore": "scratch.py\n", "a.py": ""}, {"scratch.py": ""})
    found = discover_files([tmp_path / "scratch.py"])
    assert relative(found.root, found.files) == ["scratch.py"]


def test_path_outside_the_root_is_a_problem(tmp_path, make_repo, write_tree):
    make_repo(tmp_path / "repo", {"a.py": ""}, {})
    write_tree(tmp_path / "elsewhere", {"b.py": ""})
    found = discover_files([tmp_path / "repo", tmp_path / "elsewhere"])
    assert relative(found.root, found.files) == ["a.py"]
    assert [(p.name, "outside the project root" in m) for p, m in found.problems] == [
        ("elsewhere", True)
    ]


def test_folder_ignored_by_git_is_walked_as_its_own_root(tmp_path, make_repo):
    make_repo(
        tmp_path,
        {".gitignore": "envs/\n", "a.py": ""},
        {"envs/py311/site/opacus/optim.py": "", "envs/py311/site/opacus/__init__.py": ""},
    )
    site = tmp_path / "envs" / "py311" / "site"
    found = discover_files([site])
    assert found.root == site.resolve()
    assert relative(found.root, found.files) == ["opacus/__init__.py", "opacus/optim.py"]
