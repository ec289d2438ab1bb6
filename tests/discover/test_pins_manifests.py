"""read_pins on real pyproject.toml, Pipfile, setup.py, setup.cfg and environment.yml files."""

from __future__ import annotations

from pathlib import Path

from dpcheck.discover.pins import Pin, read_pins


def rows(pins: tuple[Pin, ...]) -> list[tuple[str, str, str | None, int]]:
    return [(p.library, p.specifier, p.version, p.span.line) for p in pins]


def read(root: Path, name: str):
    return read_pins(root, [root / name])


PEP621 = """\
[project]
name = "trainer"
description = "uses opacus"
dependencies = [
    "torch>=2",
    "opacus==1.4.0",
    'dp_accounting>=0.4; python_version >= "3.9"',
]

[project.optional-dependencies]
tf = ["tensorflow-privacy==0.8.12"]

[dependency-groups]
dev = ["prv-accountant", {include-group = "tf"}]
"""


def test_pyproject_pep621_optional_and_dependency_groups(tmp_path, write_tree):
    write_tree(tmp_path, {"pyproject.toml": PEP621})
    result = read(tmp_path, "pyproject.toml")
    assert result.problems == ()
    assert rows(result.pins) == [
        ("opacus", "==1.4.0", "1.4.0", 6),
        ("dp-accounting", ">=0.4", None, 7),
        ("tensorflow-privacy", "==0.8.12", "0.8.12", 11),
        ("prv-accountant", "", None, 14),
    ]
    assert {p.span.path for p in result.pins} == {"pyproject.toml"}


POETRY = """\
[tool.poetry]
name = "trainer"

[tool.poetry.dependencies]
python = "^3.10"
opacus = "^1.4"
tensorflow_privacy = "0.8.12"
"dp-accounting" = { version = "0.4.4", optional = true }
jax-privacy = { git = "https://github.com/google-deepmind/jax_privacy.git", tag = "v0.3.0" }

[tool.poetry.group.dev.dependencies]
prv-accountant = "*"

[tool.poetry.dev-dependencies]
opacus = [
    { version = "1.4.1", python = ">=3.10" },
    { version = "~1.3", python = "<3.10" },
]
"""


def test_pyproject_poetry_caret_bare_table_git_groups_and_multiple_constraints(
    tmp_path, write_tree
):
    write_tree(tmp_path, {"pyproject.toml": POETRY})
    result = read(tmp_path, "pyproject.toml")
    assert result.problems == ()
    assert rows(result.pins) == [
        ("opacus", ">=1.4,<2.0", None, 6),
        ("tensorflow-privacy", "==0.8.12", "0.8.12", 7),
        ("dp-accounting", "==0.4.4", "0.4.4", 8),
        ("jax-privacy", "@v0.3.0", None, 9),
        ("opacus", "==1.4.1", "1.4.1", 15),
        ("opacus", ">=1.3,<1.4", None, 15),
        ("prv-accountant", "", None, 12),
    ]
    assert result.pins[0].raw == 'opacus = "^1.4"'


def test_malformed_toml_and_wrong_types_are_problems(tmp_path, write_tree):
    write_tree(
        tmp_path,
        {
            "bad/pyproject.toml": "[project\ndependencies = [",
            "typed/pyproject.toml": '[project]\ndependencies = "opacus==1.4.0"\n',
            "poetry/pyproject.toml": '[tool.poetry.dependencies]\nopacus = "not a version"\n',
        },
    )
    for name, fragment in [
        ("bad/pyproject.toml", "invalid TOML"),
        ("typed/pyproject.toml", "expected a list"),
        ("poetry/pyproject.toml", "invalid version constraint"),
    ]:
        result = read(tmp_path, name)
        assert result.pins == ()
        assert [(path, fragment in message) for path, message in result.problems] == [
            (tmp_path / name, True)
        ], name


PIPFILE = """\
[[source]]
url = "https://pypi.org/simple"
name = "pypi"

[packages]
opacus = "==1.4.0"
dp-accounting = "*"

[dev-packages]
prv-accountant = {version = ">=0.2"}
jax-privacy = {git = "https://github.com/google-deepmind/jax_privacy.git", ref = "main"}

[requires]
python_version = "3.11"
"""


def test_pipfile_packages_and_dev_packages(tmp_path, write_tree):
    write_tree(tmp_path, {"Pipfile": PIPFILE})
    result = read(tmp_path, "Pipfile")
    assert result.problems == ()
    assert rows(result.pins) == [
        ("opacus", "==1.4.0", "1.4.0", 6),
        ("dp-accounting", "", None, 7),
        ("prv-accountant", ">=0.2", None, 10),
        ("jax-privacy", "@main", None, 11),
    ]


SETUP_PY = """\
import setuptools

BASE = [
    "numpy",
    "opacus==1.4.0",
]
EXTRA_TF: list[str] = ["tensorflow-privacy>=0.8"]

setuptools.setup(
    name="trainer",
    install_requires=BASE + ["dp-accounting==0.4.4"],
    extras_require={"tf": EXTRA_TF, "prv": ("prv-accountant" "==0.2.0",)},
)
"""


def test_setup_py_literals_constants_concatenation_and_extras(tmp_path, write_tree):
    write_tree(tmp_path, {"setup.py": SETUP_PY})
    result = read(tmp_path, "setup.py")
    assert result.problems == ()
    assert rows(result.pins) == [
        ("opacus", "==1.4.0", "1.4.0", 5),
        ("dp-accounting", "==0.4.4", "0.4.4", 11),
        ("tensorflow-privacy", ">=0.8", None, 7),
        ("prv-accountant", "==0.2.0", "0.2.0", 12),
    ]


def test_setup_py_computed_requirements_are_unread_and_syntax_errors_are_problems(
    tmp_path, write_tree
):
    write_tree(
        tmp_path,
        {
            "computed/setup.py": (
                "from setuptools import setup\n"
                "setup(\n"
                "    install_requires=open('requirements.txt').read().splitlines(),\n"
                "    extras_require={'x': ['opacus==1.4.0']},\n"
                ")\n"
            ),
            "broken/setup.py": "from setuptools import setup\nsetup(install_requires=[\n",
        },
    )
    computed = read(tmp_path, "computed/setup.py")
    assert rows(computed.pins) == [("opacus", "==1.4.0", "1.4.0", 4)]
    # a computed list is valid setuptools input: not a problem, but pins dpcheck cannot read
    assert computed.problems == ()
    assert [(u.span.path, u.span.line, "install_requires" in u.what) for u in computed.unread] \
        == [("computed/setup.py", 3, True)]
    broken = read(tmp_path, "broken/setup.py")
    assert broken.pins == ()
    assert ["not valid Python" in m for _, m in broken.problems] == [True]


SETUP_CFG = """\
[metadata]
name = trainer

[options]
install_requires =
    numpy
    opacus==1.4.0
    dp_accounting>=0.4; python_version >= "3.9"

[options.extras_require]
tf = tensorflow-privacy==0.8.12
"""


def test_setup_cfg_install_requires_and_extras(tmp_path, write_tree):
    write_tree(tmp_path, {"setup.cfg": SETUP_CFG, "bad/setup.cfg": "install_requires = opacus\n"})
    result = read(tmp_path, "setup.cfg")
    assert result.problems == ()
    assert rows(result.pins) == [
        ("opacus", "==1.4.0", "1.4.0", 7),
        ("dp-accounting", ">=0.4", None, 8),
        ("tensorflow-privacy", "==0.8.12", "0.8.12", 11),
    ]
    bad = read(tmp_path, "bad/setup.cfg")
    assert bad.pins == ()
    assert ["invalid setup.cfg" in m for _, m in bad.problems] == [True]


ENVIRONMENT = """\
name: trainer
channels:
  - conda-forge
dependencies:
  - python=3.11
  - conda-forge::opacus=1.4.0=pyhd8ed1ab_0
  - dp-accounting==0.4.4
  - prv-accountant >=0.2
  - jax-privacy 0.3.0
  - pip
  - pip:
      - tensorflow-privacy==0.8.12
      - -r requirements-pip.txt
"""


def test_environment_yml_conda_specs_and_pip_sublist(tmp_path, write_tree):
    write_tree(
        tmp_path,
        {"environment.yml": ENVIRONMENT, "requirements-pip.txt": "\nopacus>=1.4\n"},
    )
    result = read(tmp_path, "environment.yml")
    assert result.problems == ()
    assert [(p.span.path, *row) for p, row in zip(result.pins, rows(result.pins))] == [
        ("environment.yml", "opacus", "==1.4.0", "1.4.0", 6),
        ("environment.yml", "dp-accounting", "==0.4.4", "0.4.4", 7),
        ("environment.yml", "prv-accountant", ">=0.2", None, 8),
        ("environment.yml", "jax-privacy", "==0.3.0", "0.3.0", 9),
        ("environment.yml", "tensorflow-privacy", "==0.8.12", "0.8.12", 12),
        ("requirements-pip.txt", "opacus", ">=1.4", None, 2),
    ]


def test_malformed_environment_files_are_problems(tmp_path, write_tree):
    write_tree(
        tmp_path,
        {
            "a/environment.yml": "dependencies: [opacus=1.4.0\n",
            "b/environment.yaml": "- opacus=1.4.0\n",
            "c/environment.yml": "dependencies: opacus\n",
        },
    )
    for name, fragment in [
        ("a/environment.yml", "invalid YAML"),
        ("b/environment.yaml", "expected a mapping"),
        ("c/environment.yml", "not a list"),
    ]:
        result = read(tmp_path, name)
        assert result.pins == ()
        assert [fragment in m for _, m in result.problems] == [True], name
