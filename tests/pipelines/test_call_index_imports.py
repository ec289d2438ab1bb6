"""The call index reads the candidate files (those with a DP marker) and the project files they
import, a bounded number of imports away: a training step in a plain module still calls the
optimizer's methods, and what it sets on the optimizer must reach the classifier. Files nothing
imports, tests, and files too many imports away are not summarised for it."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from dpcheck.parse.source import is_candidate
from dpcheck.pipelines.calls import IMPORT_HOPS, MAX_IMPORTED_FILES
from dpcheck.pipelines.index import ProjectIndex
from dpcheck.pipelines.scope import Ctx
from dpcheck.project import Project
from dpcheck.sites import CANDIDATE_MARKERS
from tests.pipelines.builder import make_project

FILES = {
    "train.py": '''
        import torch
        from pkg import steps
        from tests.helpers import fake_batch

        def main(optimizer):
            noise = torch.randn(3)
            steps.run(optimizer, noise)
        ''',
    "pkg/__init__.py": "",
    "pkg/steps.py": '''
        from .inner import advance

        def run(optimizer, batch):
            optimizer.lot = len(batch)
            advance(optimizer)
        ''',
    "pkg/inner.py": '''
        from pkg.deep import finish

        def advance(optimizer):
            optimizer.release()
            finish(optimizer)
        ''',
    "pkg/deep.py": '''
        def finish(optimizer):
            optimizer.release()
        ''',
    "tests/helpers.py": '''
        def fake_batch(optimizer):
            optimizer.release()
        ''',
    "unrelated.py": '''
        def other(optimizer):
            optimizer.release()
        ''',
}


def _project(tmp_path: Path) -> Project:
    """The project with the engine's own candidate choice (the text pre-filter)."""
    return _project_of(tmp_path, FILES)


def _project_of(tmp_path: Path, files: dict[str, str]) -> Project:
    project = make_project(tmp_path, files)
    marked = frozenset(p for p in project.paths
                       if is_candidate((tmp_path / p).read_text("utf-8"), tuple(CANDIDATE_MARKERS)))
    return replace(project, candidates=marked)


def test_only_the_entry_script_carries_a_dp_marker(tmp_path: Path) -> None:
    assert _project(tmp_path).candidates == {"train.py"}


def test_imports_of_candidates_are_indexed_up_to_the_hop_limit(tmp_path: Path) -> None:
    assert IMPORT_HOPS == 2
    indexed = ProjectIndex(_project(tmp_path)).indexed_paths()
    assert indexed == ("pkg/inner.py", "pkg/steps.py", "train.py")


def test_calls_in_an_imported_plain_module_are_found(tmp_path: Path) -> None:
    index = ProjectIndex(_project(tmp_path))
    places = sorted((where.path, where.scope) for where, _ in index.calls_named("release"))
    assert places == [("pkg/inner.py", "advance")]
    runs = [where for where, _ in index.call_sites(Ctx("pkg/steps.py", "run"))]
    assert [(w.path, w.scope, w.line) for w in runs] == [("train.py", "main", 7)]



def test_imported_files_are_capped_nearest_first(tmp_path: Path) -> None:
    """A library-sized tree does not summarise every imported module for the call index: at
    most ``MAX_IMPORTED_FILES``, the direct imports first."""
    direct = [f"mod{i:03d}" for i in range(MAX_IMPORTED_FILES + 10)]
    files = {"train.py": "import torch\n" + "".join(f"import {m}\n" for m in direct)
             + "noise = torch.randn(3)\n"}
    files.update({f"{m}.py": f"import deep{m}\n" for m in direct})
    files.update({f"deep{m}.py": "" for m in direct})
    indexed = ProjectIndex(_project_of(tmp_path, files)).indexed_paths()
    assert len(indexed) == 1 + MAX_IMPORTED_FILES
    assert set(indexed) == {"train.py", *(f"{m}.py" for m in direct[:MAX_IMPORTED_FILES])}
