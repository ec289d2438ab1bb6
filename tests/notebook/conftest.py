"""Notebooks written the way Jupyter saves them (nbformat 4, ``indent=1``, sorted keys), and the
notebook fixtures' own cells read back with nothing but ``json``: the tests locate code by plain
string search in those cells, independently of dpcheck's layout."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def source_lines(text: str) -> list[str]:
    """A cell's ``source`` as Jupyter stores it: one string per line, line breaks kept."""
    parts = text.split("\n")
    return [p + "\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def code(text: str, outputs: list[dict[str, Any]] | None = None, count: int | None = None) -> dict[str, Any]:
    return {"cell_type": "code", "execution_count": count, "metadata": {},
            "outputs": outputs or [], "source": source_lines(text)}


def markdown(text: str) -> dict[str, Any]:
    return {"cell_type": "markdown", "metadata": {}, "source": source_lines(text)}


def stream(text: str) -> dict[str, Any]:
    return {"name": "stdout", "output_type": "stream", "text": source_lines(text)}


def notebook(cells: list[dict[str, Any]], language: str = "python") -> dict[str, Any]:
    return {"cells": cells, "nbformat": 4, "nbformat_minor": 5,
            "metadata": {"kernelspec": {"display_name": language, "language": language,
                                        "name": language},
                         "language_info": {"name": language}}}


def write_notebook(path: Path, document: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=1, sort_keys=True, ensure_ascii=False) + "\n",
                    encoding="utf-8")
    return path


def find_in_cells(path: Path, text: str) -> tuple[int, int, int]:
    """(cell number over all cells, 1-based line in the cell, 1-based column) of the one
    occurrence of ``text`` in the code cells of the notebook at ``path``."""
    document = json.loads(path.read_text(encoding="utf-8"))
    hits = []
    for number, cell in enumerate(document["cells"], start=1):
        if cell["cell_type"] != "code":
            continue
        for line_number, line in enumerate("".join(cell["source"]).split("\n"), start=1):
            if text in line:
                hits.append((number, line_number, line.index(text) + 1))
    assert len(hits) == 1, (text, hits)
    return hits[0]
