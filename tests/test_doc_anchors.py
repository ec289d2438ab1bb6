"""Every anchor of docs/theory.md cited (as ``theory.md#<anchor>``) in the package, the tests,
the rule catalog or the docs is one the page defines, so a reference from code can always be
followed; and no code cites a document a clone of the repository does not hold (the math-spec,
an issue number, a review round, a section number of bench/REAL_REPOS.md)."""

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


# References to documents a clone of dpcheck does not contain: the specification, pattern list and
# design notes the project was started from, the issue tracker, review rounds, and the section
# numbers of bench/REAL_REPOS.md (which move as sections are added). Code cites docs/theory.md,
# a README section, a file of the repository or a paper by author and year instead.
OUTSIDE_REFERENCES: dict[str, re.Pattern[str]] = {
    "the math-spec": re.compile(r"math-spec", re.IGNORECASE),
    "PATTERNS n": re.compile(r"\bPATTERNS(?:\.md|\s+\d)"),
    "DESIGN.md": re.compile(r"\bDESIGN\.md\b"),
    "an issue number": re.compile(r"\bissues?[ -]#?\d", re.IGNORECASE),
    "a review round": re.compile(r"\brounds? \d", re.IGNORECASE),
    "a REAL_REPOS section number": re.compile(r"REAL_REPOS(?:\.md)?\s+[AB]\.?\d"),
    "a bare B-number": re.compile(r"(?<![\w/.])B\d{1,2}(?![\w.])"),
}
# A section sign is a paper's own section when the line names the paper (its year); a bare one
# meant a section of the math-spec. A link on the line or the next one (an upstream library's
# issue, a catalog entry's ``title`` above its ``url``) can be followed.
SECTION_SIGN = re.compile("§")
NAMES_A_PAPER = re.compile(r"\b(?:19|20)\d\d\b")
LINK = re.compile(r"https?://")


def outside_references(where: str, text: str, *, sections: bool = True) -> list[str]:
    """``where:line: what`` for every reference in ``text`` to a document outside the
    repository; ``sections=False`` leaves section signs alone (the rule catalog's prose cites
    the sections of the paper each entry names in its references)."""
    found = []
    lines = text.splitlines()
    for number, line in enumerate(lines, start=1):
        if LINK.search(line) or (number < len(lines) and LINK.search(lines[number])):
            continue
        kinds = [kind for kind, pattern in OUTSIDE_REFERENCES.items() if pattern.search(line)]
        if sections and SECTION_SIGN.search(line) and not NAMES_A_PAPER.search(line):
            kinds.append("a section sign without the paper it belongs to")
        found += [f"{where}:{number}: {kind}: {line.strip()}" for kind in kinds]
    return found


def _scan(paths: list[Path], *, sections: bool = True) -> list[str]:
    return [hit for path in paths
            for hit in outside_references(f"{path.relative_to(ROOT)}", path.read_text("utf-8"), sections=sections)]


def test_the_reference_finder_tells_outside_documents_from_papers_and_links() -> None:
    outside = ("math-spec §3.2", "(math-spec §2.8)", "see §4.4", "PATTERNS 14", "vocabulary of DESIGN.md",
               "(issue 4 review, item 1)", "the issue-3 setting", "Round 4 fixtures", "REAL_REPOS A.6",
               "undecided (B11)", "(B13, B8)")
    for text in outside:
        assert outside_references("x.py", text), text
    inside = ("docs/theory.md#worst-case-pair", "(Ertan & van Dijk 2026, §6.1)", "B of N indices",
              "[Opacus issue #571](https://github.com/pytorch/opacus/issues/571)", "T rounds of SGM",
              "bench/REAL_REPOS.md (DPSUR)", "suppression issues", "(k + 1) sigma", "2 log2 E rounds")
    for text in inside:
        assert outside_references("x.py", text) == [], text
    assert outside_references("x.toml", "(§6.1) has the closed form", sections=False) == []
    assert outside_references("x.toml", 'title = "Opacus issue #571"\nurl = "https://github.com/"') == []


def test_the_package_cites_no_document_outside_the_repository() -> None:
    package = [p for ext in ("py", "json", "toml") for p in ROOT.glob(f"dpcheck/**/*.{ext}")]
    assert len(package) > 50
    assert _scan(package) + _scan(sorted(ROOT.glob("rules/*.toml")), sections=False) == []


def test_the_tests_and_benchmarks_cite_no_document_outside_the_repository() -> None:
    here = Path(__file__).resolve()
    files = [p for p in [*ROOT.glob("tests/**/*.py"), *ROOT.glob("bench/*.py")] if p.resolve() != here]
    assert _scan(files) == []
