"""ProjectFacts end to end: discovery in a real git repository, pins, installed copies."""

from __future__ import annotations

from dpcheck.discover.facts import collect_facts
from dpcheck.discover.files import discover_files

METADATA = "Metadata-Version: 2.1\nName: opacus\nVersion: 1.3.0\n"


def test_facts_of_a_git_project_with_subprojects(tmp_path, make_repo):
    make_repo(
        tmp_path,
        {
            "requirements.txt": "opacus>=1.4\n",
            "pyproject.toml": '[project]\nname = "x"\ndependencies = ["opacus==1.4.0"]\n',
            "train.py": "",
            "exp/b/requirements/base.txt": "opacus==1.2.0\n",
            "exp/b/train.py": "",
            "exp/c/train.py": "",
        },
        {
            ".venv/lib/python3.11/site-packages/opacus/__init__.py": "",
            ".venv/lib/python3.11/site-packages/opacus-1.3.0.dist-info/METADATA": METADATA,
        },
    )
    found = discover_files([tmp_path])
    facts = collect_facts(found.root, found.dependency_files)
    assert facts.problems == ()
    assert facts.pin("OPACUS").span.path == "pyproject.toml"
    assert facts.pin("opacus").version == "1.4.0"
    assert facts.pin("opacus", near="exp/c/train.py").version == "1.4.0"
    assert facts.pin("opacus", near="exp/b/train.py").version == "1.2.0"
    assert facts.pin("prv-accountant") is None
    installed = facts.installed_library("opacus")
    assert installed is not None and installed.version == "1.3.0"
    assert installed.path == tmp_path.resolve() / ".venv/lib/python3.11/site-packages/opacus"


def test_range_pin_is_used_when_no_exact_pin_exists(tmp_path, write_tree):
    write_tree(tmp_path, {"requirements.txt": "opacus>=1.4\n"})
    facts = collect_facts(tmp_path, [tmp_path / "requirements.txt"])
    pin = facts.pin("opacus")
    assert pin is not None and (pin.specifier, pin.version) == (">=1.4", None)
    assert facts.pin("opacus", near="src/train.py") is pin


def test_conflicting_exact_pins_in_one_folder_are_a_problem(tmp_path, write_tree):
    write_tree(
        tmp_path,
        {
            "requirements.txt": "opacus==1.4.0\n",
            "setup.cfg": "[options]\ninstall_requires =\n    opacus==1.3.0\n",
            "Pipfile": '[packages]\nopacus = "==1.4"\n',
            "other/requirements.txt": "opacus==1.2.0\n",
        },
    )
    names = ("requirements.txt", "setup.cfg", "Pipfile", "other/requirements.txt")
    files = [tmp_path / name for name in names]
    facts = collect_facts(tmp_path, files)
    assert facts.pin("opacus").version == "1.4"
    assert len(facts.problems) == 1
    path, message = facts.problems[0]
    assert path == tmp_path / "Pipfile"
    assert "1.3.0 (setup.cfg:3)" in message and "other/" not in message


def test_problems_of_dependency_files_are_kept(tmp_path, write_tree):
    write_tree(tmp_path, {"pyproject.toml": "[project\n", "requirements.txt": "opacus==1.4.0\n"})
    facts = collect_facts(tmp_path, [tmp_path / "pyproject.toml", tmp_path / "requirements.txt"])
    assert facts.pin("opacus").version == "1.4.0"
    assert [p for p, _ in facts.problems] == [tmp_path / "pyproject.toml"]
