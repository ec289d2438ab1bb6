"""Placing module spans in notebook cells (``dpcheck.locations``): the cell a line is in, the
line and column in that cell, ends that leave the cell, columns of lines whose IPython prefix
was removed, and the JSON walk that adds ``cell`` to every span-shaped object."""

from __future__ import annotations

from dpcheck.locations import CellLayout, Location, locate, location_text, place_in_cells
from dpcheck.model import Span

# cells 2 (lines 1-3), 3 (empty), 5 (lines 4-9); line 6 lost "%time " (6 columns)
LAYOUT = CellLayout(((2, 1, 3), (3, 4, 0), (5, 4, 6)), ((6, 6),))


def test_lines_are_placed_in_their_cell() -> None:
    assert locate(Span("nb.ipynb", 1, 1), LAYOUT) == Location("nb.ipynb", 1, 1, cell=2)
    assert locate(Span("nb.ipynb", 3, 7, 3, 9), LAYOUT) == Location("nb.ipynb", 3, 7, 3, 9, 2)
    assert locate(Span("nb.ipynb", 4, 2), LAYOUT) == Location("nb.ipynb", 1, 2, cell=5)
    assert locate(Span("nb.ipynb", 9, 1), LAYOUT).cell == 5


def test_a_line_outside_every_cell_and_a_python_file_keep_their_position() -> None:
    assert locate(Span("nb.ipynb", 10, 4), LAYOUT) == Location("nb.ipynb", 10, 4)
    assert locate(Span("nb.ipynb", 0, 1), LAYOUT) == Location("nb.ipynb", 0, 1)
    assert locate(Span("t.py", 6, 3, 6, 8), None) == Location("t.py", 6, 3, 6, 8)


def test_columns_of_a_line_that_lost_its_magic_and_an_end_in_another_cell() -> None:
    assert locate(Span("nb.ipynb", 6, 1, 6, 11), LAYOUT) == Location("nb.ipynb", 3, 7, 3, 17, 5)
    assert locate(Span("nb.ipynb", 2, 5, 5, 1), LAYOUT) == Location("nb.ipynb", 2, 5, None, None, 2)


def test_location_text_is_ruffs_spelling() -> None:
    assert location_text(Location("nb.ipynb", 12, 5, cell=7)) == "nb.ipynb:cell 7:12:5"
    assert location_text(Location("nb.ipynb", 12, 5, cell=7), column=False) == "nb.ipynb:cell 7:12"
    assert location_text(Location("t.py", 12, 5)) == "t.py:12:5"


def test_every_span_shaped_object_gets_a_cell() -> None:
    document = {
        "findings": [{"rule": "DP101", "path": "nb.ipynb", "line": 6, "column": 1,
                      "end_line": 6, "end_column": 4,
                      "evidence": [{"role": "x", "path": "t.py", "line": 2, "column": 1,
                                    "end_line": None, "end_column": None, "note": "n"}]}],
        "pipelines": [{"entry": "nb.ipynb", "path": "nb.ipynb", "line": 4, "mechanism": "SGM"}],
        "errors": [{"path": "nb.ipynb", "message": "m", "internal": False}],
    }
    placed = place_in_cells(document, {"nb.ipynb": LAYOUT})
    finding = placed["findings"][0]
    assert list(finding)[:6] == ["rule", "path", "cell", "line", "column", "end_line"]
    assert (finding["cell"], finding["line"], finding["column"], finding["end_column"]) == (5, 3, 7, 10)
    assert placed["findings"][0]["evidence"][0]["cell"] is None
    assert (placed["pipelines"][0]["cell"], placed["pipelines"][0]["line"]) == (5, 1)
    assert placed["errors"] == document["errors"]
