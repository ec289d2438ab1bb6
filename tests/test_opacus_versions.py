"""The shipped Opacus version table: well-formed, and (with a clone) every evidence line real."""

import json
import os
from pathlib import Path

import git
import pytest
from packaging.version import Version

TABLE = json.loads((Path(__file__).parents[1] / "dpcheck" / "data" / "opacus_versions.json").read_text())
ROWS = TABLE["versions"]
NORMALIZATIONS = {"A", "EA", "FEA", "none"}
MECHANISMS = {"ASGM", "EASGM", "FEASGM", "SGM", "not supported"}


def test_rows_are_well_formed_and_sorted() -> None:
    versions = [Version(r["version"]) for r in ROWS]
    assert versions == sorted(versions) and len(set(versions)) == len(versions)
    for row in ROWS:
        assert row["normalization_mean"] in NORMALIZATIONS
        assert row["normalization_sum"] == "none"
        assert row["mechanism"] in MECHANISMS
        assert row["default_accountant"] in {"opacus-rdp", "opacus-prv"}
        assert row["evidence"], row["version"]


def test_mechanism_follows_normalization() -> None:
    expected = {"A": "ASGM", "EA": "EASGM", "FEA": "FEASGM"}
    for row in ROWS:
        if row["poisson_builtin"]:
            assert row["mechanism"] == expected[row["normalization_mean"]], row["version"]
        else:
            assert row["mechanism"] == "not supported"


def test_every_1x_release_floors_the_expected_batch_size() -> None:
    for row in (r for r in ROWS if Version(r["version"]).major == 1):
        texts = [e["text"] for e in row["evidence"] if e["role"] == "normalization:mean"]
        assert any(t.startswith("expected_batch_size = int(") for t in texts), row["version"]


@pytest.mark.skipif(not os.environ.get("DPCHECK_OPACUS_REPO"), reason="needs DPCHECK_OPACUS_REPO")
def test_evidence_lines_exist_at_their_commits() -> None:
    git_dir = git.Repo(os.environ["DPCHECK_OPACUS_REPO"]).git_dir
    show = git.Git()
    for row in (r for r in ROWS if r["commit"]):
        for ev in row["evidence"]:
            text = show.execute(["git", f"--git-dir={git_dir}", "show", f"{ev['commit']}:{ev['path']}"])
            lines = text.splitlines()
            assert lines[ev["line"] - 1].strip() == ev["text"], (row["version"], ev)
