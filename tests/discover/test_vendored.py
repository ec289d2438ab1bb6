"""A DP library bundled in the project's tree (a vendored fork with its own setup.py)."""

from __future__ import annotations

from dpcheck.discover.facts import collect_facts
from dpcheck.discover.vendored import find_bundled
from dpcheck.pipelines.versions import resolve_opacus
from tests.pipelines.builder import make_project

FORK = {
    "requirements.txt": "torch==2.1.0\n",
    "third/setup.py": "from setuptools import setup\n"
                      "setup(name='opacus', install_requires=open('r.txt').read().split())\n",
    "third/requirements.txt": "opacus==0.9.0\n",
    "third/opacus/__init__.py": "from .engine import PrivacyEngine\n",
    "third/opacus/version.py": "__version__ = '1.1.3'\n",
    "train.py": "from opacus import PrivacyEngine\n",
}


def _dependency_files(root):
    return [root / "requirements.txt", root / "third/setup.py", root / "third/requirements.txt"]


def test_a_bundled_fork_is_the_installed_library_with_the_version_of_its_version_file(
        tmp_path, write_tree):
    write_tree(tmp_path, FORK)
    facts = collect_facts(tmp_path, _dependency_files(tmp_path))
    opacus = facts.installed_library("opacus")
    assert opacus is not None and opacus.version == "1.1.3"
    assert opacus.path == tmp_path / "third/opacus"
    assert facts.bundled_folders() == ("third",)


def test_the_dependency_files_of_a_bundled_fork_give_no_pins_and_no_problems(
        tmp_path, write_tree):
    write_tree(tmp_path, FORK)
    facts = collect_facts(tmp_path, _dependency_files(tmp_path))
    assert facts.problems == ()
    assert facts.pin("opacus") is None
    assert [p.library for p in facts.pins] == []


def test_the_version_falls_back_to_the_package_init_and_may_be_unknown(tmp_path, write_tree):
    write_tree(tmp_path, {"a/setup.py": "", "a/opacus/__init__.py": "__version__ = \"1.4.0\"\n",
                          "b/pyproject.toml": "",
                          "b/tensorflow_privacy/__init__.py": "VERSION = 2\n"})
    found = {b.library: b.version for b in find_bundled(
        tmp_path, [tmp_path / "a/setup.py", tmp_path / "b/pyproject.toml"])}
    assert found == {"opacus": "1.4.0", "tensorflow-privacy": None}


def test_a_scan_of_the_library_itself_bundles_the_package_not_the_root(tmp_path, write_tree):
    """The library's own repository: its package is the library for the tutorials beside it,
    and the root's dependency files stay the project's pins."""
    write_tree(tmp_path, {"setup.py": "", "requirements.txt": "torch==2.1.0\nopacus==1.3.0\n",
                          "opacus/__init__.py": "__version__ = '1.4.0'\n",
                          "tutorials/train.py": "from opacus import PrivacyEngine\n"})
    [found] = find_bundled(tmp_path, [tmp_path / "setup.py"])
    assert (found.library, found.version, found.distribution) == ("opacus", "1.4.0", tmp_path / "opacus")
    facts = collect_facts(tmp_path, [tmp_path / "setup.py", tmp_path / "requirements.txt"])
    assert facts.bundled_folders() == ("opacus",)
    assert [p.library for p in facts.pins] == ["opacus"]


def test_a_fork_with_its_own_setup_wins_over_the_root_folder_of_the_same_name(tmp_path, write_tree):
    """``opacus/`` at the root holding a fork (``opacus/setup.py`` + ``opacus/opacus/``) is that
    fork, whatever the root's own dependency file says."""
    write_tree(tmp_path, {"pyproject.toml": "", "opacus/__init__.py": "",
                          "opacus/setup.py": "", "opacus/opacus/__init__.py": "",
                          "opacus/opacus/version.py": "__version__ = '1.2.0'\n"})
    [found] = find_bundled(tmp_path, [tmp_path / "pyproject.toml", tmp_path / "opacus/setup.py"])
    assert (found.version, found.path, found.distribution) == ("1.2.0", tmp_path / "opacus/opacus",
                                                               tmp_path / "opacus")


def test_a_folder_without_the_package_is_not_a_bundled_library(tmp_path, write_tree):
    write_tree(tmp_path, {"examples/requirements.txt": "opacus==1.4.0\n",
                          "examples/train.py": "import opacus\n"})
    facts = collect_facts(tmp_path, [tmp_path / "examples/requirements.txt"])
    assert facts.bundled_folders() == ()
    assert facts.pin("opacus") is not None


def test_a_bundled_release_missing_from_the_version_table_is_unknown_without_dp105(tmp_path):
    files = {**FORK, "third/opacus/version.py": "__version__ = '9.9.9'\n",
             "third/setup.py": "from setuptools import setup\nsetup(name='opacus')\n"}
    files.pop("third/requirements.txt")
    project = make_project(tmp_path, {**files, "third/pyproject.toml": ""})
    resolution = resolve_opacus(project, "train.py")
    assert resolution.row is None and resolution.pinned
    assert "9.9.9 bundled in the project at third/" in resolution.reason
    assert "not in dpcheck's version table" in resolution.reason


def test_a_bundled_fork_serves_its_own_project_folder_only(tmp_path):
    files = {f"proj/{name}": text for name, text in FORK.items()}
    files["proj/third/pyproject.toml"] = ""
    files["other/train.py"] = "from opacus import PrivacyEngine\n"
    project = make_project(tmp_path, files)
    assert resolve_opacus(project, "proj/train.py").library == "opacus==1.1.3"
    sibling = resolve_opacus(project, "other/train.py")
    assert sibling.row is None and not sibling.pinned


def test_the_root_package_of_any_library_of_the_dp_library_table_is_bundled(tmp_path, write_tree):
    """A library's own repository is that library whether or not dpcheck reads its releases:
    fastDP is in the DP-library table but is no pinned library, and is bundled all the same;
    a package of the project that is no DP library is not."""
    write_tree(tmp_path, {"setup.py": "", "fastDP/__init__.py": "__version__ = '2.0.0'\n",
                          "helpers/__init__.py": "", "examples/run.py": "import fastDP\n"})
    found = find_bundled(tmp_path, [tmp_path / "setup.py"])
    assert [(b.library, b.version, b.distribution) for b in found] == [
        ("fastdp", "2.0.0", tmp_path / "fastDP")]
    facts = collect_facts(tmp_path, [tmp_path / "setup.py"])
    assert facts.bundled_folders() == ("fastDP",)
    assert facts.pins == ()
