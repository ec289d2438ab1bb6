"""Version constraints read as the sets of releases they allow: Poetry's caret and tilde (the
semantics of Poetry's documentation, checked release by release), unions, local version labels,
and lines of other libraries that PEP 440 rejects."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpcheck.discover.pins import read_pins


def _pins(root: Path, name: str, text: str):
    (root / name).write_text(text, encoding="utf-8")
    return read_pins(root, [root / name])


# (constraint, releases it allows, releases it does not): Poetry's "Caret requirements" and
# "Tilde requirements" tables, plus the 0.x series a caret keeps to.
POETRY_SERIES = [
    ("^1.2.3", ["1.2.3", "1.9.0"], ["1.2.2", "2.0.0"]),
    ("^1.2", ["1.2.0", "1.99"], ["1.1.9", "2.0.0"]),
    ("^1", ["1.0.0", "1.5.0"], ["0.9.9", "2.0.0"]),
    ("^0.2.3", ["0.2.3", "0.2.99"], ["0.2.2", "0.3.0"]),
    ("^0.14.0", ["0.14.0", "0.14.5"], ["0.13.0", "0.15.0", "1.0.0"]),
    ("^0.0.3", ["0.0.3"], ["0.0.2", "0.0.4"]),
    ("^0.0", ["0.0.0", "0.0.9"], ["0.1.0"]),
    ("^0", ["0.0.1", "0.9.9"], ["1.0.0"]),
    ("~1.2.3", ["1.2.3", "1.2.9"], ["1.2.2", "1.3.0"]),
    ("~1.2", ["1.2.0", "1.2.9"], ["1.1.0", "1.3.0"]),
    ("~1", ["1.0.0", "1.9.9"], ["0.9.0", "2.0.0"]),
    ("^1.0 || ^3.0", ["1.4.0", "3.1.0"], ["2.0.0", "4.0.0"]),
    (">=1.2 <1.5", ["1.2.0", "1.4.9"], ["1.5.0"]),
]


@pytest.mark.parametrize(("constraint", "allowed", "rejected"), POETRY_SERIES)
def test_poetry_caret_and_tilde_are_the_release_series_they_denote(
        tmp_path: Path, constraint: str, allowed: list[str], rejected: list[str]) -> None:
    result = _pins(tmp_path, "pyproject.toml",
                   f'[tool.poetry.dependencies]\nopacus = "{constraint}"\n')
    assert result.problems == ()
    (pin,) = result.pins
    assert pin.raw == f'opacus = "{constraint}"' and pin.version is None
    assert [pin.allows(v) for v in allowed] == [True] * len(allowed)
    assert [pin.allows(v) for v in rejected] == [False] * len(rejected)


def test_a_poetry_constraint_that_allows_no_release_is_a_problem(tmp_path: Path) -> None:
    result = _pins(tmp_path, "pyproject.toml",
                   '[tool.poetry.dependencies]\nopacus = "^1.4,<1.0"\n')
    assert result.pins == ()
    assert ["pyproject.toml:2" in m and "allows no release" in m for _, m in result.problems] \
        == [True]


def test_other_libraries_lines_pep_440_rejects_are_not_dpcheck_problems(tmp_path: Path) -> None:
    result = _pins(tmp_path, "requirements.txt",
                   "torch~=2.6.0+cu118\nnumpy~=1.26.4\ntorchvision~=0.21.0+cu118\n"
                   "opacus==1.5.2\n")
    assert result.problems == ()
    assert [(p.library, p.version, p.span.line) for p in result.pins] == [("opacus", "1.5.2", 4)]


def test_a_dp_library_with_a_local_label_is_read_as_its_public_release(tmp_path: Path) -> None:
    result = _pins(tmp_path, "requirements.txt", "opacus~=1.4.0+cu118\n")
    assert result.problems == ()
    (pin,) = result.pins
    assert pin.raw == "opacus~=1.4.0+cu118" and pin.span.line == 1
    assert (pin.allows("1.4.1"), pin.allows("1.5.0"), pin.allows("1.3.0")) == (True, False, False)


@pytest.mark.parametrize(("line", "fragment"), [
    ("opacus >>= 1.4", "the opacus version it asks for is unknown"),
    ("=> opacus 1.4", "what it asks for is unknown"),
])
def test_an_unreadable_dp_library_line_is_one_problem_naming_file_and_line(
        tmp_path: Path, line: str, fragment: str) -> None:
    result = _pins(tmp_path, "requirements.txt", f"torch==2.3.0\n{line}\ndp-accounting==0.4.4\n")
    assert [p.library for p in result.pins] == ["dp-accounting"]
    (problem,) = result.problems
    assert problem.path == tmp_path / "requirements.txt"
    assert problem.message.startswith("requirements.txt:2: invalid requirement")
    assert fragment in problem.message and "\n" not in problem.message


def test_a_scan_reports_no_scan_error_for_them_and_names_the_unread_setup_py(
        tmp_path: Path) -> None:
    """End to end: another library's PEP 440-rejected line and a computed install_requires
    are no scan errors; the Opacus release left undecided says where pins may hide (DP105)."""
    from dpcheck import engine

    files = {
        "requirements.txt": "torch~=2.6.0+cu118\nnumpy\n",
        "setup.py": ("import setuptools\n\n"
                     "with open('requirements.txt') as f:\n    DEPS = f.read().split()\n\n"
                     "setuptools.setup(name='study', install_requires=[d for d in DEPS])\n"),
        "train.py": ("import torch\nfrom opacus import PrivacyEngine\n"
                     "engine = PrivacyEngine(torch.nn.Linear(2, 2), batch_size=10, "
                     "sample_size=100, noise_multiplier=1.0, max_grad_norm=1.0, poisson=True)\n"
                     "engine.attach(torch.optim.SGD([], lr=0.1))\n"),
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    result = engine.scan(engine.ScanOptions(paths=[tmp_path], use_cache=False, jobs=1))
    assert result.errors == []
    [dp105] = [f for f in result.findings if f.rule == "DP105"]
    assert "setup.py:6: install_requires is computed" in dp105.message
