"""Fuzzing the scan: generated programs and mutated fixtures never break it.

Inputs: syntactically valid programs from ``hypothesmith`` (from the grammar, and from libcst
nodes), and the fixture projects with one file mutated (``tests.fuzz.mutations``: token deletion
and duplication, swapped lines, random bytes, truncation, CRLF, BOMs, tabs, NUL bytes). Each
input is scanned as a project that also holds links to a secret file outside it, and rendered
in every format. For every input: nothing raises, no dpcheck bug is met (no internal error), no
output holds the secret, every output encodes as UTF-8 and the JSON report validates against
``docs/report.schema.json``. "Never hangs" is the per-file time budget's job; Hypothesis'
deadline fails an input that takes more than a minute all the same.

The default suite runs a short, derandomised budget; ``-m slow`` runs the long one, whose
counts are recorded in ``bench/RESULTS.md`` (set ``DPCHECK_FUZZ_STATS`` to a file to get them).
"""

from __future__ import annotations

import json
import os
import shutil
from collections import Counter
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import hypothesmith
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpcheck import engine
from dpcheck.cli.scan import _read_text
from dpcheck.discover.files import is_dependency_file
from dpcheck.errors import ConfigError
from dpcheck.report import FORMATS, render
from tests.fuzz.mutations import KINDS, Mutation, mutate
from tests.hardening.conftest import FIXTURES, SECRET, SECRET_TEXT, assert_valid_report

PROJECTS = sorted(p.parent for p in FIXTURES.glob("*/expected.json"))
TARGETS = sorted(
    (project.name, path.relative_to(project).as_posix())
    for project in PROJECTS
    for path in project.rglob("*")
    if path.is_file() and (path.suffix == ".py" or is_dependency_file(path.relative_to(project)))
)
LINKS = ("leak.py", "requirements-leak.txt")
pytestmark = pytest.mark.filterwarnings("ignore::SyntaxWarning")  # hypothesmith's own compile()

SHORT = settings(
    max_examples=25,
    deadline=timedelta(seconds=60),
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
LONG = settings(SHORT, max_examples=1_500, derandomize=False)
STATS: Counter[str] = Counter()


class Arena:
    """A folder holding the secret and a project rebuilt for every input."""

    def __init__(self, base: Path) -> None:
        self.secret = base / "outside" / "secret.txt"
        self.secret.parent.mkdir(parents=True)
        self.secret.write_text(SECRET_TEXT, encoding="utf-8")
        self.root = base / "project"

    def fresh(self, fixture: str | None = None) -> Path:
        """An empty project (or a copy of ``fixture``) with the links out of it."""
        shutil.rmtree(self.root, ignore_errors=True)
        if fixture is None:
            self.root.mkdir()
        else:
            shutil.copytree(FIXTURES / fixture, self.root,
                            ignore=shutil.ignore_patterns("expected.json"))
        for name in LINKS:
            (self.root / name).symlink_to(self.secret)
        return self.root


@pytest.fixture(scope="module")
def arena(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Arena]:
    yield Arena(tmp_path_factory.mktemp("fuzz"))
    if path := os.environ.get("DPCHECK_FUZZ_STATS"):
        Path(path).write_text(json.dumps(dict(sorted(STATS.items())), indent=2) + "\n")


def check_scan(root: Path) -> None:
    """Scan ``root``, render every format, and check every promise on the outputs. A broken
    ``pyproject.toml`` at the root is a configuration error (exit 2 by contract): it must
    name the file and quote nothing from outside."""
    try:
        settings_ = engine.settle(engine.ScanOptions(paths=[root], jobs=1, use_cache=False))
    except ConfigError as exc:
        assert str(exc).startswith(f"{root / 'pyproject.toml'}: ") and SECRET not in str(exc)
        STATS["inputs"] += 1
        STATS["configuration errors"] += 1
        return
    result = engine.run(settings_)
    sources = {f.span.path: text for f in result.findings
               if (text := _read_text(settings_.root, f.span.path)) is not None}
    outputs = {
        fmt: render(result, fmt, sources=sources, rules=settings_.catalog.rules, root=root)
        for fmt in FORMATS
    }
    bugs = [f"{e.path}: {e.message}" for e in result.errors if e.internal]
    assert not bugs, bugs
    for fmt, text in outputs.items():
        assert SECRET not in text, fmt
        text.encode("utf-8")
    report = assert_valid_report(outputs["json"])
    skipped = {e["path"] for e in report["errors"] if e["message"].startswith("symbolic link")}
    assert skipped == set(LINKS)
    json.loads(outputs["sarif"])
    STATS["inputs"] += 1
    STATS["findings"] += len(result.findings)
    STATS.update(f"rule {f.rule}" for f in result.findings)


mutations = st.lists(
    st.tuples(st.sampled_from(KINDS), st.floats(0, 1, exclude_max=True),
              st.floats(0, 1, exclude_max=True)),
    min_size=1,
    max_size=4,
)


def _mutated(arena: Arena, target: tuple[str, str], edits: list[Mutation]) -> None:
    fixture, relative = target
    root = arena.fresh(fixture)
    data = (root / relative).read_bytes()
    for edit in edits:
        data = mutate(data, edit)
    (root / relative).write_bytes(data)
    STATS.update(f"mutation {kind}" for kind, _, _ in edits)
    check_scan(root)


def _generated(arena: Arena, program: str) -> None:
    root = arena.fresh()
    # a trailing comment naming a DP library makes the file a candidate: it is summarised too
    (root / "generated.py").write_text(program + "\n# opacus\n", encoding="utf-8")
    check_scan(root)


@SHORT
@given(target=st.sampled_from(TARGETS), edits=mutations)
def test_mutated_fixtures_never_break_the_scan(
    arena: Arena, target: tuple[str, str], edits: list[Mutation]
) -> None:
    _mutated(arena, target, edits)


@settings(SHORT, max_examples=15)
@given(program=hypothesmith.from_grammar())
def test_programs_from_the_grammar_never_break_the_scan(arena: Arena, program: str) -> None:
    _generated(arena, program)


@settings(SHORT, max_examples=10)
@given(program=hypothesmith.from_node())
def test_programs_from_libcst_nodes_never_break_the_scan(arena: Arena, program: str) -> None:
    _generated(arena, program)


@pytest.mark.slow
@LONG
@given(target=st.sampled_from(TARGETS), edits=mutations)
def test_long_run_mutated_fixtures(
    arena: Arena, target: tuple[str, str], edits: list[Mutation]
) -> None:
    _mutated(arena, target, edits)


@pytest.mark.slow
@settings(LONG, max_examples=400)
@given(program=hypothesmith.from_grammar() | hypothesmith.from_node())
def test_long_run_generated_programs(arena: Arena, program: str) -> None:
    _generated(arena, program)
