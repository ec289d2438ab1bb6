"""Fixture projects scanned as what they are: projects of their own.

Scanned in place, a fixture is a folder of the dpcheck checkout, whose root is the scan root;
a virtualenv at that root (the README's ``.venv``, with the ``audit`` extra's Opacus in it)
would then count as the fixture's environment and decide unpinned releases, although a fixture
must never depend on what is installed where dpcheck runs. A copy outside the checkout (without
``expected.json``) has only its own files.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from functools import cache
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


@cache
def _workspace() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="dpcheck-fixtures-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder


@cache
def fixture_project(name: str) -> Path:
    """A copy of ``fixtures/<name>`` outside the checkout (made once per test process)."""
    target = _workspace() / name
    shutil.copytree(FIXTURES / name, target, ignore=shutil.ignore_patterns("expected.json"))
    return target
