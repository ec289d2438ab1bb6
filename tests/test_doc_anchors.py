"""Every anchor of docs/theory.md cited (as ``theory.md#<anchor>``) in the package, the tests,
the rule catalog or the docs is one the page defines, so a reference from code can always be
followed."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
THEORY = ROOT / "docs" / "theory.md"
CITATION = re.compile(r"theory\.md#([a-z0-9-]+)")


def _anchors() -> set[str]:
    return set(re.findall(r'<a id="([a-z0-9-]+)"></a>', THEORY.read_text("utf-8")))


def _citations() -> list[tuple[str, str]]:
    files = [*ROOT.glob("dpcheck/**/*.py"), *ROOT.glob("tests/**/*.py"), *ROOT.glob("rules/*.toml"),
             *ROOT.glob("docs/**/*.md"), *ROOT.glob("*.md")]
    return [(f"{path.relative_to(ROOT)}", anchor) for path in files
            for anchor in CITATION.findall(path.read_text("utf-8"))]


def test_theory_anchors_are_unique_and_internal_links_resolve() -> None:
    text = THEORY.read_text("utf-8")
    ids = re.findall(r'<a id="([a-z0-9-]+)"></a>', text)
    assert len(ids) == len(set(ids))
    assert set(re.findall(r"\]\(#([a-z0-9-]+)\)", text)) <= set(ids)


def test_every_cited_theory_anchor_exists() -> None:
    citations = _citations()
    assert citations, "the package cites docs/theory.md somewhere"
    anchors = _anchors()
    assert [(where, a) for where, a in citations if a not in anchors] == []
