"""The real Opacus history (only when ``DPCHECK_OPACUS_REPO`` points at a clone or mirror):
rows checked against the code read by hand at each tag, and against the shipped table."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dpcheck.history.rows import CELLS, HistoryRow
from dpcheck.history.run import HistoryOptions, run_history
from dpcheck.pipelines.versions import row_for

REPO = os.environ.get("DPCHECK_OPACUS_REPO")
pytestmark = pytest.mark.skipif(not REPO, reason="DPCHECK_OPACUS_REPO is not set")

#: tag -> (cells, a (path, line text) of the normalization evidence), read by hand at the tag.
VERIFIED = {
    "v0.9.0": (("A", "none", False, False, "opacus-rdp", "not supported"),
               ("opacus/privacy_engine.py", "noise /= batch_size")),
    "v0.12.0": (("A", "none", True, False, "opacus-rdp", "ASGM"),
                ("opacus/privacy_engine.py", "noise /= batch_size")),
    "v0.14.0": (("EA", "none", True, False, "opacus-rdp", "EASGM"),
                ("opacus/privacy_engine.py", "p.grad *= batch_size / self.avg_batch_size")),
    "v1.0.0": (("FEA", "none", True, True, "opacus-rdp", "FEASGM"),
               ("opacus/privacy_engine.py",
                "expected_batch_size = int(len(data_loader.dataset) * sample_rate)")),
    "v1.3": (("FEA", "none", True, True, "opacus-prv", "FEASGM"),
             ("opacus/optimizers/optimizer.py",
              "p.grad /= self.expected_batch_size * self.accumulated_iterations")),
}


#: tag -> the ``if`` lines (path, text) that gate every division by the batch size on
#: ``loss_reduction == "mean"``, read by hand at the tag: with "sum" nothing is divided.
SUM_GATES = {
    "v0.9.0": {("opacus/per_sample_gradient_clip.py", 'if self.loss_reduction == "mean":'),
               ("opacus/privacy_engine.py", 'if self.loss_reduction == "mean":')},
    "v0.14.0": {("opacus/per_sample_gradient_clip.py", 'if self.loss_reduction == "mean":'),
                ("opacus/privacy_engine.py",
                 'if self.poisson and self.loss_reduction == "mean":')},
    "v1.3": {("opacus/optimizers/optimizer.py", 'if self.loss_reduction == "mean":'),
             ("opacus/optimizers/ddp_perlayeroptimizer.py", 'if self.loss_reduction == "mean":')},
}


@pytest.fixture(scope="module")
def rows(tmp_path_factory: pytest.TempPathFactory) -> dict[str, HistoryRow]:
    assert REPO is not None
    result = run_history(HistoryOptions(Path(REPO), package="opacus",
                                        cache_dir=tmp_path_factory.mktemp("cache")))
    return {row.release.tag: row for row in result.rows}


@pytest.mark.parametrize("tag", sorted(VERIFIED))
def test_rows_read_by_hand(rows: dict[str, HistoryRow], tag: str) -> None:
    cells, (path, text) = VERIFIED[tag]
    row = rows[tag]
    assert tuple(row.cells[c] for c in CELLS) == cells
    evidence = {(e.path, e.text) for e in row.evidence
                if e.role == "normalization:mean"}
    assert (path, text) in evidence


@pytest.mark.parametrize("tag", sorted(SUM_GATES))
def test_sum_cell_evidence_is_the_mean_only_branch(rows: dict[str, HistoryRow], tag: str) -> None:
    row = rows[tag]
    assert row.cells["normalization_sum"] == "none"
    assert {(e.path, e.text) for e in row.evidence if e.role == "normalization:sum"} == \
        SUM_GATES[tag]


def test_every_release_agrees_with_the_shipped_table(rows: dict[str, HistoryRow]) -> None:
    for tag, row in rows.items():
        expected = row_for(str(row.release.version))
        if expected is None:
            continue
        for cell in CELLS:
            assert row.cells[cell] == expected[cell], (tag, cell)
        assert list(row.variants) == expected.get("variants", []), tag
