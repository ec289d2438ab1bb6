"""IPython syntax made neutral line for line (``dpcheck.parse.magics``): every IPython form
leaves a cell CPython parses with the same number of lines, and no Python line is ever taken for
IPython (checked over every Python file of this repository)."""

from __future__ import annotations

import ast
import io
import json
import tokenize
from pathlib import Path

import pytest

from dpcheck.parse import magics
from dpcheck.parse.magics import NEUTRAL, MagicTable, magic_table, python_cell

REPO = Path(__file__).resolve().parents[2]
CORPUS = sorted([*(REPO / "dpcheck").rglob("*.py"), *(REPO / "fixtures").rglob("*.py"),
                 *(REPO / "tests").rglob("*.py")])


def _parses(lines: tuple[str, ...]) -> bool:
    ast.parse("".join(f"{line}\n" for line in lines))
    return True


@pytest.mark.parametrize(
    "line",
    [
        "%pip install -q opacus==1.4.0",
        "%matplotlib inline",
        "!nvidia-smi",
        "!!ls -la",
        "files = !ls data/",
        "result = %timeit -o sum(range(10))",
        "a, b = !echo 1 2",
        "model.fit?",
        "torch.nn??",
        "?DataLoader",
        "%%time",  # a cell magic that is not on the cell's first line is a line magic's error
        "/print 1 2",
        "%env CUDA_VISIBLE_DEVICES=0",
    ],
)
def test_ipython_lines_become_pass(line: str) -> None:
    cell = python_cell(["import torch", line, "x = 1"])
    assert cell.lines == ("import torch", NEUTRAL, "x = 1")
    assert _parses(cell.lines)


@pytest.mark.parametrize(
    "lines",
    [
        ['message = ("epoch %d loss %.3f"', "           % (3, 0.5))"],
        ['NOTES = """', "!important: rerun the data cell", "%s of the runs", '"""'],
        ["total = values[0] + \\", "    values[1]"],
        ["ok = a != b", 'print("a=!b")', "x = 1  # why?", "y = {'%': 1}"],
        ["s = 'it''s'", "t = r'\\''", "u = f'{x!r}'"],
        ["query = '''", "?", "'''"],
    ],
)
def test_python_that_looks_like_ipython_is_kept(lines: list[str]) -> None:
    assert python_cell(lines).lines == tuple(lines)


@pytest.mark.parametrize(
    "line", ["cd noise-in-dpsgd-2020", "pip install -q opacus==1.4.0", "matplotlib inline",
             "load_ext autoreload", "ls -la data/ | head"],
)
def test_magics_typed_without_percent_are_automagic(line: str) -> None:
    cell = python_cell(["import torch", line, "x = 1"])
    assert cell.lines == ("import torch", NEUTRAL, "x = 1")


def test_automagic_run_and_time_act_like_their_percent_forms() -> None:
    cell = python_cell(["run helpers.py", "time train(model)"])
    assert cell.lines == (NEUTRAL, "train(model)")
    assert cell.runs == ((1, "helpers.py"),) and cell.shifts == ((2, len("time ")),)


@pytest.mark.parametrize(
    "lines",
    [
        ["time.sleep(1)", "cd = 3", "ls", "save(model, 'model.pt')", "who is None"],
        ["config = dict(", "    sigma=1.1,", ")"],
        ["run = (experiment", "       .start())"],
    ],
)
def test_python_starting_with_a_magic_name_is_kept(lines: list[str]) -> None:
    assert python_cell(lines).lines == tuple(lines)


def test_a_magic_in_a_block_keeps_the_block_and_its_continuations_are_neutral() -> None:
    lines = ["if gpu:", "    !pip install cupy \\", "        numba", "    %env A=1", "done = True"]
    cell = python_cell(lines)
    assert cell.lines == ("if gpu:", "    pass", "    pass", "    pass", "done = True")
    assert _parses(cell.lines)


def test_a_line_magic_running_python_keeps_its_statement_and_the_columns_it_lost() -> None:
    cell = python_cell(["for epoch in range(3):", "    %time train(model, loader)",
                        "%timeit -n 3 train(model, loader)"])
    assert cell.lines == ("for epoch in range(3):", "    train(model, loader)", NEUTRAL)
    kept = "    %time train(model, loader)"
    assert cell.shifts == ((2, kept.index("train") - "    train".index("train")),)


@pytest.mark.parametrize(
    "line, target",
    [
        ("%run helpers.py", "helpers.py"),
        ("%run -i ../common/setup.py --fast", "../common/setup.py"),
        ("%run -m tools.prepare", "tools/prepare.py"),
        ("%run config", "config"),
        ("%run $script", None),
        ("%run 'unclosed.py", None),
        ("%runner x.py", None),
    ],
)
def test_run_targets_are_recorded_as_written(line: str, target: str | None) -> None:
    cell = python_cell(["x = 1", line])
    assert cell.lines[1] == NEUTRAL
    assert cell.runs == (((2, target),) if target else ())


def test_a_cell_magic_keeps_a_python_body_and_skips_any_other() -> None:
    timed = python_cell(["", "%%time", "for i in range(3):", "    step(i)"])
    assert timed.lines == ("", NEUTRAL, "for i in range(3):", "    step(i)")
    captured = python_cell(["%%capture out", "noisy = grad + noise"])
    assert captured.lines == (NEUTRAL, "noisy = grad + noise")
    bash = python_cell(["%%bash", "for f in *.py; do", "  python $f", "done"])
    assert bash.lines == ("", "", "", "")
    html = python_cell(["%%html", "<b>not python</b>"])
    assert html.lines == ("", "")


def test_no_python_line_of_this_repository_is_taken_for_ipython() -> None:
    changed = []
    for path in CORPUS:
        lines = path.read_text(encoding="utf-8").split("\n")
        cell = python_cell(lines)
        changed += [(path.name, n, a) for n, (a, b) in enumerate(zip(lines, cell.lines), 1) if a != b]
    assert len(CORPUS) > 300 and changed == []


def _continuation_lines(text: str) -> set[int]:
    """Lines (1-based) that continue a statement begun on an earlier line, by ``tokenize``."""
    inside: set[int] = set()
    start: int | None = None
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type in (tokenize.NL, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT,
                          tokenize.ENDMARKER) and start is None:
            continue
        if start is None:
            start = token.start[0]
        if token.type == tokenize.NEWLINE:
            inside.update(range(start + 1, token.end[0] + 1))
            start = None
    return inside


def test_statement_starts_agree_with_tokenize() -> None:
    """Where the scanner says a statement may start is where ``tokenize`` starts one (or a
    blank or comment line between statements), on every Python file of this repository that
    tokenizes."""
    disagree = []
    for path in CORPUS:
        text = path.read_text(encoding="utf-8")
        try:
            inside = _continuation_lines(text)
        except (tokenize.TokenError, SyntaxError):
            continue  # the fixtures' deliberately broken files
        scanner = magics._Scanner()
        for number, line in enumerate(text.split("\n"), start=1):
            if scanner.at_statement_start != (number not in inside):
                disagree.append((path.name, number, line))
            scanner.feed(line)
    assert disagree == []


def test_the_shipped_table_and_its_validation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    table = magic_table()
    assert isinstance(table, MagicTable)
    assert {"time", "timeit"} <= table.python_line and "capture" in table.python_cell
    assert "bash" not in table.python_cell and "run" not in table.python_line
    assert {"cd", "pip", "run"} <= table.automagic
    (tmp_path / "ipython_magics.json").write_text(
        json.dumps({"python_line_magics": ["time"], "python_cell_magics": "capture",
                    "automagic_names": ["cd"]})
    )
    monkeypatch.setattr(magics.resources, "files", lambda package: tmp_path)
    with pytest.raises(ValueError, match="python_cell_magics"):
        magic_table.__wrapped__()
