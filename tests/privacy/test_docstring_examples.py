"""The docstrings of ``dpcheck.privacy`` as documentation: every Examples section runs (doctest)
and prints what the code computes, and every function another module of the package imports from
it documents its Parameters, Returns and Examples (numpydoc, as scipy.stats does)."""

from __future__ import annotations

import ast
import doctest
import importlib
import inspect
import pkgutil
from pathlib import Path

import pytest

import dpcheck.privacy

ROOT = Path(__file__).resolve().parents[2]
MODULES = sorted(m.name for m in pkgutil.iter_modules(dpcheck.privacy.__path__) if not m.name.startswith("_"))
SECTIONS = ("Parameters\n    ----------", "Returns\n    -------", "Examples\n    --------")


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_print_what_the_code_computes(name: str) -> None:
    module = importlib.import_module(f"dpcheck.privacy.{name}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, report=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples of {module.__name__} failed"


def _imported_from_privacy() -> dict[str, set[str]]:
    """Public functions of the public ``dpcheck.privacy`` modules that another module of the package
    or a benchmark imports, by module."""
    wanted: dict[str, set[str]] = {}
    for path in [*ROOT.glob("dpcheck/**/*.py"), *ROOT.glob("bench/*.py")]:
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if not (isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("dpcheck.privacy.")):
                continue
            owner = node.module.rsplit(".", 1)[1]
            if owner.startswith("_") or path.stem == owner and path.parent.name == "privacy":
                continue
            wanted.setdefault(owner, set()).update(a.name for a in node.names)
    return wanted


def test_every_imported_function_has_numpydoc_sections() -> None:
    undocumented, functions = [], 0
    for owner, names in sorted(_imported_from_privacy().items()):
        module = importlib.import_module(f"dpcheck.privacy.{owner}")
        for name in sorted(names):
            value = getattr(module, name)
            if not inspect.isfunction(value):
                continue
            functions += 1
            doc = value.__doc__ or ""
            missing = [s.split("\n")[0] for s in SECTIONS if s not in doc]
            if missing or ">>> " not in doc:
                undocumented.append(f"{owner}.{name}: {', '.join(missing) or 'no example'}")
    assert functions >= 40
    assert undocumented == []
