"""A relinked project reuses the cached linking when the edited files are ones linking never
read: the report is the one a scan without cache gives, and linking does not run again."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest

import dpcheck.pipelines
from dpcheck.cli import main
from dpcheck.linked import LinkInputs

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def _inputs(files: dict[str, str], candidates: set[str], read: set[str] = frozenset(), context: str = "c") -> LinkInputs:
    return LinkInputs(context, files, frozenset(candidates), frozenset(read))


def test_only_an_unread_non_candidate_edit_keeps_a_linking() -> None:
    before = _inputs({"train.py": "a", "config.py": "b", "plot.py": "c"}, {"train.py"}, {"train.py", "config.py"})
    assert before.changed_unread(_inputs({"train.py": "a", "config.py": "b", "plot.py": "C"}, {"train.py"})) \
        == {"plot.py"}
    assert before.changed_unread(_inputs({"train.py": "a", "config.py": "b", "plot.py": "c"}, {"train.py"})) \
        == frozenset()
    assert before.changed_unread(_inputs({"train.py": "A", "config.py": "b", "plot.py": "c"}, {"train.py"})) is None
    assert before.changed_unread(_inputs({"train.py": "a", "config.py": "B", "plot.py": "c"}, {"train.py"})) is None
    became_candidate = _inputs({"train.py": "a", "config.py": "b", "plot.py": "C"}, {"train.py", "plot.py"})
    assert before.changed_unread(became_candidate) is None
    new_file = _inputs({"train.py": "a", "config.py": "b", "plot.py": "c", "new.py": "d"}, {"train.py"})
    assert before.changed_unread(new_file) is None
    other_context = _inputs({"train.py": "a", "config.py": "b", "plot.py": "C"}, {"train.py"}, context="d")
    assert before.changed_unread(other_context) is None


@pytest.fixture
def linkings(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The projects linked (by the real ``link_project``) during a test."""
    seen: list[str] = []
    real = dpcheck.pipelines.link_project

    def counting(project, *args, **kwargs):  # type: ignore[no-untyped-def]
        seen.append(str(project.root))
        return real(project, *args, **kwargs)

    monkeypatch.setattr(dpcheck.pipelines, "link_project", counting)
    return seen


def _report(capsys: pytest.CaptureFixture[str], project: Path, *flags: str) -> dict:
    main(["scan", "--format", "json", *flags, str(project)])
    report = json.loads(capsys.readouterr().out)
    return report


EDITS = {
    "comment": lambda text: text + "# edited\n",
    "syntax error": lambda text: text + "def broken(:\n",
    "constant": lambda text: text.replace("1.25", "0.75").replace("= 64", "= 32"),
    "revert": None,
}


def test_random_edits_give_the_report_of_a_scan_without_cache(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], linkings: list[str]
) -> None:
    project = tmp_path / "proj"
    shutil.copytree(FIXTURES / "params_across_modules", project)
    (project / "plots.py").write_text("import matplotlib.pyplot as plt\n\nSIZE = 64\n")
    (project / "tests").mkdir()
    (project / "tests" / "test_shapes.py").write_text("def test_shape():\n    assert 1.25 > 1\n")
    cache = tmp_path / "cache"
    originals = {p: p.read_text() for p in project.rglob("*.py")}
    files = sorted(originals)
    rng = random.Random(7)
    assert _report(capsys, project, "--cache-dir", str(cache)) == _report(capsys, project, "--no-cache")
    unread = {project / "plots.py", project / "tests" / "test_shapes.py"}
    for _ in range(12):
        path, edit = rng.choice(files), rng.choice(sorted(EDITS))
        path.write_text(originals[path] if EDITS[edit] is None else EDITS[edit](path.read_text()))
        linkings.clear()
        cached = _report(capsys, project, "--cache-dir", str(cache))
        relinked = bool(linkings)
        assert cached == _report(capsys, project, "--no-cache"), (path.name, edit)
        if path in unread:
            assert not relinked, f"an edit of {path.name} ({edit}) relinked the project"
    (project / "plots.py").write_text("def broken(:\n")
    linkings.clear()
    report = _report(capsys, project, "--cache-dir", str(cache))
    assert not linkings and ("plots.py", "DP001") in {(f["path"], f["rule"]) for f in report["findings"]}
