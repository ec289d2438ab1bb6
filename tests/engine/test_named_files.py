"""A scan of named files (what the pre-commit hook runs) links only their import neighbourhood
(``dpcheck.sites.modules``), and reports exactly what a scan of the whole project reports for
those files."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import git
import pytest

from dpcheck import engine
from dpcheck.sites.modules import import_neighbourhood, resolve_module

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
PROJECTS = sorted(p.parent for p in FIXTURES.glob("*/expected.json"))


def _repository(tmp_path: Path, fixture: Path) -> Path:
    root = tmp_path / fixture.name
    shutil.copytree(fixture, root)
    files = [p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()]
    git.Repo.init(root).index.add(files)
    return root


def _findings(paths: list[Path]) -> set[tuple[str, str, int, str]]:
    result = engine.scan(engine.ScanOptions(paths=paths, use_cache=False, jobs=1))
    return {(f.rule, f.span.path, f.span.line, f.message) for f in result.findings}


@pytest.mark.parametrize("fixture", PROJECTS, ids=[p.name for p in PROJECTS])
def test_each_named_file_reports_what_the_whole_project_reports_for_it(
    tmp_path: Path, fixture: Path
) -> None:
    root = _repository(tmp_path, fixture)
    whole = _findings([root])
    for source in sorted(root.rglob("*.py")):
        rel = source.relative_to(root).as_posix()
        assert _findings([source]) == {f for f in whole if f[1] == rel}, rel


def _imports(files: dict[str, str]) -> dict[str, list[str]]:
    """The import targets of small modules, read by a plain text split (independent of
    dpcheck's summary): ``import a`` / ``from a import b``."""
    found: dict[str, list[str]] = {}
    for path, text in files.items():
        targets = []
        for line in text.splitlines():
            words = line.split()
            if words[:1] == ["import"]:
                targets.append(words[1])
            elif words[:1] == ["from"]:
                targets.extend(f"{words[1]}.{name.strip(',')}" if not words[1].endswith(".")
                               else f"{words[1]}{name.strip(',')}" for name in words[3:])
        found[path] = targets
    return found


def test_the_neighbourhood_is_importers_and_what_they_import() -> None:
    files = {
        "app/train.py": "from app import steps\nimport config\n",
        "app/steps.py": "from . import noise\n",
        "app/noise.py": "import numpy\n",
        "app/other.py": "import numpy\n# train noise, not an import of it\n",
        "config.py": "import defaults\n",
        "defaults.py": "SIGMA = 1.0\n",
        "unrelated.py": "import app.other\n",
    }
    imports = _imports(files)
    contents = {path: text.encode() for path, text in files.items()}
    linked = import_neighbourhood(["app/noise.py"], contents, imports.__getitem__)
    # noise <- steps <- train (two imports up), then what they import, transitively
    assert linked == {"app/noise.py", "app/steps.py", "app/train.py", "config.py",
                      "defaults.py"}


def test_imports_resolve_beside_the_importer_then_above() -> None:
    paths = frozenset({"proj/train.py", "proj/utils/__init__.py", "proj/utils/data.py",
                       "config.py"})
    assert resolve_module("proj/train.py", "utils.data.load", paths) == \
        ("proj/utils/data.py", "load")
    assert resolve_module("proj/utils/data.py", "..train", paths) == ("proj/train.py", "")
    assert resolve_module("proj/train.py", "config.SIGMA", paths) == ("config.py", "SIGMA")
    assert resolve_module("proj/train.py", "numpy.random", paths) is None


def test_a_package_in_a_src_layout_is_imported_by_its_name_from_anywhere() -> None:
    paths = frozenset({"src/dpkit/__init__.py", "src/dpkit/engine.py",
                       "examples/nlg/fine_tune.py", "src/dpkit/sampler.py"})
    assert resolve_module("examples/nlg/fine_tune.py", "dpkit.engine.Trainer", paths) == \
        ("src/dpkit/engine.py", "Trainer")
    assert resolve_module("src/dpkit/engine.py", "dpkit.sampler", paths) == \
        ("src/dpkit/sampler.py", "")
    # relative imports are not looked up in src/
    assert resolve_module("examples/nlg/fine_tune.py", ".dpkit", paths) is None


@pytest.mark.parametrize("name", ["caller_module_without_marker_asgm", "notebook_imports_project_module"])
def test_a_named_file_scan_on_a_whole_project_cache_links_the_same_neighbourhood(
    tmp_path: Path, name: str
) -> None:
    """After a cached scan of the whole project, whose cache records the imports of the files
    it summarised, a scan of each named file (its neighbourhood found from that record) reports
    what the same scan reports without a cache."""
    root = _repository(tmp_path, FIXTURES / name)
    cache = tmp_path / "cache"
    engine.scan(engine.ScanOptions(paths=[root], cache_dir=cache, jobs=1))
    [imports] = cache.rglob("*.imports.json")
    recorded = {key.split(":")[1] for key in json.loads(imports.read_text("utf-8"))}
    assert recorded >= {p.relative_to(root).as_posix() for p in root.rglob("*.py")}
    for source in sorted([*root.rglob("*.py"), *root.rglob("*.ipynb")]):
        cached = engine.scan(engine.ScanOptions(paths=[source], cache_dir=cache, jobs=1))
        assert {(f.rule, f.span.path, f.span.line) for f in cached.findings} == {
            (rule, path, line) for rule, path, line, _ in _findings([source])}
