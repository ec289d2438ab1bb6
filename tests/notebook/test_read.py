"""Reading a notebook as one module (``dpcheck.parse.notebook``): the layout of its code cells,
what makes it unreadable, broken cells, suppressions per cell, ``%run`` targets, and what is
never read (outputs, execution counts, metadata, attachments)."""

from __future__ import annotations

import ast
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpcheck.parse.notebook import (
    NotebookSource,
    display_text,
    notebook_suppressions,
    parse_notebook,
    read_notebook,
    run_imports,
)
from dpcheck.parse.source import SourceProblem
from tests.notebook.conftest import FIXTURES, code, markdown, notebook, stream

LIMIT = 5 * 1024 * 1024


def _read(document: dict) -> NotebookSource:
    source = read_notebook(json.dumps(document).encode(), LIMIT)
    assert isinstance(source, NotebookSource)
    return source


def test_code_cells_in_order_form_one_module_numbered_over_all_cells() -> None:
    source = _read(notebook([
        markdown("# Title"),
        code("import torch\nx = 1\n"),
        markdown("text"),
        code(""),
        code("y = x + 1"),
    ]))
    assert source.module == "import torch\nx = 1\ny = x + 1\n"
    assert source.layout.cells == ((2, 1, 2), (4, 3, 0), (5, 3, 1))
    assert source.layout.cell_at(3) == (5, 3) and source.layout.cell_at(2) == (2, 1)
    assert source.layout.cell_at(4) is None


def test_source_as_one_string_and_crlf_line_breaks() -> None:
    cell = {"cell_type": "code", "source": "a = 1\r\nb = 2\rc = 3", "outputs": [], "metadata": {},
            "execution_count": None}
    source = _read(notebook([cell]))
    assert source.module == "a = 1\nb = 2\nc = 3\n" and source.layout.cells == ((1, 1, 3),)


def test_magics_are_neutral_in_the_module_and_kept_in_the_text() -> None:
    source = _read(notebook([code("%pip install opacus\nimport opacus"),
                             code("%time fit(model)")]))
    assert source.module == "pass\nimport opacus\nfit(model)\n"
    assert source.text == "%pip install opacus\nimport opacus\n%time fit(model)\n"
    assert source.layout.shifts == ((3, len("%time ")),)


def test_reports_quote_the_cells_as_written() -> None:
    data = json.dumps(notebook([code("%pip install opacus\nimport opacus"), markdown("# x"),
                                code("!ls")])).encode()
    assert display_text("nb.ipynb", data) == "%pip install opacus\nimport opacus\n!ls\n"
    assert display_text("nb.ipynb", b'{"cells": [') == '{"cells": ['
    assert display_text("t.py", "x = 'é'\n".encode()) == "x = 'é'\n"


def test_outputs_counts_metadata_and_attachments_are_never_read() -> None:
    plain = notebook([code("import torch\nnoisy = s + torch.normal(0, 1.0, s.shape)")])
    busy = json.loads(json.dumps(plain))
    cell = busy["cells"][0]
    cell["execution_count"] = 42
    cell["outputs"] = [
        stream("noisy / len(batch)\nx = (\n"),
        {"output_type": "error", "ename": "SyntaxError", "evalue": "x", "traceback": ["def f(:"]},
        {"output_type": "display_data", "data": {"image/png": "iVBORw0KGgo=",
                                                 "text/plain": ["%%bash"]}, "metadata": {}},
    ]
    cell["metadata"] = {"tags": ["parameters"], "collapsed": True}
    busy["cells"].append({"cell_type": "markdown", "source": ["![x](attachment:a.png)"],
                          "metadata": {}, "attachments": {"a.png": {"image/png": "AAAA"}}})
    busy["metadata"]["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}}}
    assert _read(busy) == _read(plain)


@pytest.mark.parametrize(
    "data, message, position",
    [
        (b'{"cells": [', "invalid JSON", (1, 12)),
        (b'{"cells": "\xff"}', "cannot read its JSON", (1, 1)),
        (b"[]", "no `nbformat`", (1, 1)),
        (json.dumps({"nbformat": 3, "worksheets": []}).encode(), "nbformat 3", (1, 1)),
        (json.dumps({"nbformat": 4, "cells": {}}).encode(), "`cells` is not a list", (1, 1)),
        (json.dumps({"nbformat": 4, "cells": [{"cell_type": "code", "source": 7}]}).encode(),
         "cell 1: `source`", (1, 1)),
    ],
)
def test_unreadable_notebooks_are_problems(data: bytes, message: str,
                                           position: tuple[int, int]) -> None:
    problem = read_notebook(data, LIMIT)
    assert isinstance(problem, SourceProblem) and message in problem.message
    assert (problem.line, problem.column) == position


def test_too_large_and_non_python_notebooks() -> None:
    data = json.dumps(notebook([code("x = 1")])).encode()
    problem = read_notebook(data, 10)
    assert isinstance(problem, SourceProblem) and "too large" in problem.message
    assert read_notebook(json.dumps(notebook([code("x <- 1")], "R")).encode(), LIMIT) is None
    unspecified = notebook([code("x = 1")])
    unspecified["metadata"] = {}
    assert isinstance(read_notebook(json.dumps(unspecified).encode(), LIMIT), NotebookSource)


def test_a_broken_cell_is_its_own_problem_and_the_others_parse() -> None:
    source = _read(notebook([
        code("SIGMA = 1.1"),
        markdown("broken below"),
        code("def evaluate(model):\n    for x in loader\n        pass"),
        code("noise = SIGMA * 2"),
    ]))
    tree, skipped = parse_notebook(source, "nb.ipynb")
    assert isinstance(tree, ast.Module)
    assert [type(node).__name__ for node in tree.body] == ["Assign", "Assign"]
    assert tree.body[1].lineno == 5
    (problem,) = skipped
    assert problem.message.startswith("cell 3: syntax error") and "other cells" in problem.message
    assert (problem.line, problem.column) == (3, 20)


def test_an_unclosed_bracket_does_not_swallow_the_next_cells() -> None:
    source = _read(notebook([code("params = dict(sigma=1.1,"), code("clip = 1.0"),
                             code("steps = (1,"), code("q = 0.01")]))
    tree, skipped = parse_notebook(source, "nb.ipynb")
    assert isinstance(tree, ast.Module)
    assert [n.targets[0].id for n in tree.body] == ["clip", "q"]
    assert [p.line for p in skipped] == [1, 3]


def test_a_notebook_whose_cells_all_fail_is_an_empty_module() -> None:
    source = _read(notebook([code("x = ("), code("def f(:")]))
    tree, skipped = parse_notebook(source, "nb.ipynb")
    assert isinstance(tree, ast.Module) and tree.body == []
    assert [p.message.split(":")[0] for p in skipped] == ["cell 1", "cell 2"]


def test_suppressions_are_read_per_cell_in_module_lines() -> None:
    source = _read(notebook([
        code("x = (1,"),
        code("import torch\nloader = DataLoader(ds, shuffle=True)  # dpcheck: ignore[DP102] fixed"),
        code("# dpcheck: ignore[DP101] reviewed\ny = a / len(b)"),
    ]))
    found = notebook_suppressions(source)
    assert [(s.line, s.target_line, s.codes) for s in found] == [(3, 3, ("DP102",)),
                                                                  (4, 5, ("DP101",))]


def test_run_targets_resolve_from_the_notebook_folder() -> None:
    runs = ((1, "helpers.py"), (2, "../common/settings"), (3, "../../outside.py"),
            (4, "other.ipynb"), (5, "tools/my-script.py"))
    assert run_imports("notebooks/exp/train.ipynb", runs) == [
        {"line": 1, "path": "notebooks/exp/helpers.py", "module": ".helpers"},
        {"line": 2, "path": "notebooks/common/settings.py", "module": "..common.settings"},
        {"line": 3, "path": "outside.py", "module": "...outside"},
    ]
    assert run_imports("train.ipynb", ((1, "../x.py"), (2, "lib/util.py"))) == [
        {"line": 2, "path": "lib/util.py", "module": ".lib.util"}]


def test_every_fixture_notebook_reads_and_its_module_parses() -> None:
    paths = sorted(FIXTURES.glob("notebook_*/*.ipynb"))
    assert len(paths) == 4
    for path in paths:
        source = read_notebook(path.read_bytes(), LIMIT)
        assert isinstance(source, NotebookSource)
        assert source.module.count("\n") == source.text.count("\n")
        assert isinstance(parse_notebook(source, path.name)[0], ast.Module)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["code", "markdown", "raw"]), st.text(max_size=80)),
                max_size=6))
def test_any_cell_text_reads_without_error_and_keeps_every_line(cells: list[tuple[str, str]]) -> None:
    """Whatever a cell holds (IPython, binary-ish text, unbalanced quotes), reading never raises,
    the module has exactly the cells' lines, and the layout accounts for each of them."""
    document = notebook([{"cell_type": kind, "source": text, "metadata": {}, "outputs": [],
                          "execution_count": None} for kind, text in cells])
    source = _read(document)
    assert source.module.count("\n") == source.text.count("\n")
    assert sum(count for _, _, count in source.layout.cells) == source.text.count("\n")
    assert [n for n, _, _ in source.layout.cells] == [
        i for i, (kind, _) in enumerate(cells, start=1) if kind == "code"]
    tree, skipped = parse_notebook(source, "nb.ipynb")
    assert isinstance(tree, (ast.Module, SourceProblem))
    assert all(source.layout.cell_at(p.line) is not None for p in skipped)
    notebook_suppressions(source)
