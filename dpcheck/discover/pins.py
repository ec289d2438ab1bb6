"""The pinned versions of the DP libraries, read statically from a project's dependency files.

``read_pins`` dispatches each file to its format's reader by file name (a ``.txt`` by its
content) and returns a ``PinsResult``: the pins, and the problems (unreadable or malformed files,
invalid entries, a missing ``-r`` include) that never stop the reading of the rest. Files are read shallowest first
(then by path), so a root-level ``requirements.txt`` comes before one in a subfolder; within a
file, pins keep their order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from dpcheck.discover.conda import is_package_list, read_environment, read_package_list
from dpcheck.discover.libraries import DP_LIBRARIES
from dpcheck.discover.requirement import (
    Pin,
    PinProblem,
    PinsResult,
    Source,
    combine,
    read_source,
)
from dpcheck.discover.requirements_txt import read_requirements
from dpcheck.discover.setuptools_manifests import read_setup_cfg, read_setup_py
from dpcheck.discover.toml_manifests import read_pipfile, read_pyproject

__all__ = ["DP_LIBRARIES", "Pin", "PinProblem", "PinsResult", "pins_of", "read_pins"]

_READERS: dict[str, Callable[[Source], PinsResult]] = {
    "pyproject.toml": read_pyproject,
    "Pipfile": read_pipfile,
    "setup.py": read_setup_py,
    "setup.cfg": read_setup_cfg,
    "environment.yml": read_environment,
    "environment.yaml": read_environment,
}


def read_pins(root: Path, dependency_files: Sequence[Path]) -> PinsResult:
    """Pins of the DP libraries in ``dependency_files`` (absolute paths under ``root``; any
    ``.txt`` is read as a requirements file). Spans are relative to ``root``."""
    ordered = sorted(dependency_files, key=lambda p: (len(p.parts), p))
    return combine(_read_one(root, path) for path in ordered)


def _read_one(root: Path, path: Path) -> PinsResult:
    source = read_source(root, path)
    return source if isinstance(source, PinsResult) else pins_of(source)


def pins_of(source: Source) -> PinsResult:
    """The pins of one dependency file's text, read by its format's reader: by file name, and
    for a ``.txt`` by its content (a conda package list saved as ``requirements.txt`` is read
    as conda's, anything else as pip requirements)."""
    text_reader = read_package_list if is_package_list(source.text) else read_requirements
    reader = _READERS.get(source.path.name,
                          text_reader if source.path.suffix == ".txt" else None)
    if reader is None:
        return PinsResult(problems=(PinProblem(source.path, "not a known dependency file kind"),))
    return reader(source)
