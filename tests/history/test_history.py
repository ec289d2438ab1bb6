"""``run_history`` on the fake library: the table row by row, the grouping, the blob cache
(each distinct blob parsed once; a second run parses nothing), tag selection and bad input."""

from __future__ import annotations

from pathlib import Path

import git
import pytest

from dpcheck.history.repository import HistoryError
from dpcheck.history.rows import CELLS, group_rows
from dpcheck.history.run import HistoryOptions, default_cache_dir, run_history
from dpcheck.pipelines.library import is_library_path
from tests.history.fakelib import EXPECTED


def _run(repo: Path, cache: Path, **kwargs: object) -> tuple[dict[str, tuple[object, ...]], int]:
    result = run_history(HistoryOptions(repo, package="fakedp", cache_dir=cache, **kwargs))
    table = {row.release.tag: tuple(row.cells[c] for c in CELLS) for row in result.rows}
    return table, result.parsed


def test_table_row_by_row(fake_repo: git.Repo, tmp_path: Path) -> None:
    table, _ = _run(Path(fake_repo.working_tree_dir), tmp_path / "cache")
    assert list(table) == list(EXPECTED)  # sorted as versions, pre-release left out
    for tag, cells in EXPECTED.items():
        assert table[tag] == cells, tag


def test_each_distinct_blob_is_parsed_once_and_a_rerun_parses_nothing(
        fake_repo: git.Repo, tmp_path: Path) -> None:
    distinct = {(item.hexsha, item.path) for tag in fake_repo.tags
                if "rc" not in tag.name
                for item in tag.commit.tree.traverse()
                if item.type == "blob" and item.path.startswith("fakedp/")
                and is_library_path(item.path)}
    _, parsed = _run(Path(fake_repo.working_tree_dir), tmp_path / "cache")
    assert parsed == len(distinct)
    table, parsed_again = _run(Path(fake_repo.working_tree_dir), tmp_path / "cache")
    assert parsed_again == 0
    assert table == EXPECTED


def test_evidence_points_at_the_line_at_that_tag(fake_repo: git.Repo, tmp_path: Path) -> None:
    result = run_history(HistoryOptions(Path(fake_repo.working_tree_dir), package="fakedp",
                                        cache_dir=tmp_path))
    rows = {row.release.tag: row for row in result.rows}
    for tag, expected_text in (("v0.1.0", "noise /= batch_size"),
                               ("v1.0.0", "p.grad /= self.expected_batch_size")):
        row = rows[tag]
        mean = [e for e in row.evidence if e.role == "normalization:mean"]
        assert expected_text in [e.text for e in mean]
        for item in mean:
            source = fake_repo.git.show(f"{tag}:{item.path}").splitlines()
            assert source[item.line - 1].strip() == item.text
            assert item.commit == fake_repo.tags[tag].commit.hexsha
    accountant = [e for e in rows["v1.1.0"].evidence if e.role == "accountant"]
    assert accountant and '"prv"' in accountant[0].text


def test_the_sum_cell_rests_on_the_mean_only_branches(fake_repo: git.Repo, tmp_path: Path
                                                      ) -> None:
    result = run_history(HistoryOptions(Path(fake_repo.working_tree_dir), package="fakedp",
                                        cache_dir=tmp_path))
    rows = {row.release.tag: row for row in result.rows}
    for tag, texts in (("v0.1.0", {'if self.clipper.loss_reduction == "mean":',
                                   'if self.loss_reduction == "mean":'}),
                       ("v0.4.0", {'if self.clipper.loss_reduction == "mean":',
                                   'if self.poisson and self.clipper.loss_reduction == "mean":',
                                   'if self.loss_reduction == "mean":'}),
                       ("v1.0.0", {'if self.loss_reduction == "mean":'})):
        row = rows[tag]
        assert row.cells["normalization_sum"] == "none"
        assert {e.text for e in row.evidence if e.role == "normalization:sum"} == texts, tag


def test_unknown_cells_say_why(fake_repo: git.Repo, tmp_path: Path) -> None:
    result = run_history(HistoryOptions(Path(fake_repo.working_tree_dir), package="fakedp",
                                        cache_dir=tmp_path))
    rows = {row.release.tag: row for row in result.rows}
    assert "fakedp/optimizer.py does not parse" in rows["v1.2.0"].reasons["normalization_mean"]
    assert rows["v2.0.0"].reasons["mechanism"] == "the tree at v2.0.0 has no fakedp/"
    assert rows["v1.1.0"].reasons == {}


def test_variants_record_the_flag_defaults(fake_repo: git.Repo, tmp_path: Path) -> None:
    result = run_history(HistoryOptions(Path(fake_repo.working_tree_dir), package="fakedp",
                                        cache_dir=tmp_path, tags="v[01].[014].0"))
    variants = {row.release.tag: row.variants for row in result.rows}
    assert variants["v0.4.0"] == ({"when": "poisson=False (the default)",
                                   "normalization_mean": "A", "mechanism": "ASGM"},)
    assert variants["v1.0.0"][0]["mechanism"] == "fixed-mean"
    assert variants["v0.1.0"] == ()


def test_grouping_merges_consecutive_equal_rows(fake_repo: git.Repo, tmp_path: Path) -> None:
    result = run_history(HistoryOptions(Path(fake_repo.working_tree_dir), package="fakedp",
                                        cache_dir=tmp_path))
    labels = [group.label for group in group_rows(result.rows)]
    assert labels == ["v0.1.0 – v0.2.0", "v0.3.0", "v0.4.0", "v1.0.0", "v1.1 – v1.1.0",
                      "v1.2.0",
                      "v2.0.0"]


def test_tag_selection(fake_repo: git.Repo, tmp_path: Path) -> None:
    root = Path(fake_repo.working_tree_dir)
    assert list(_run(root, tmp_path, tags="v1.*.*")[0]) == ["v1.0.0", "v1.1.0", "v1.2.0"]
    assert "v1.2.0rc1" in _run(root, tmp_path, tags="v1.2*", pre=True)[0]
    assert list(_run(root, tmp_path, rev="v0.2.0..v1.0.0")[0]) == ["v0.3.0", "v0.4.0", "v1.0.0"]


def test_bare_mirror_reads_the_same_table(bare_mirror: Path, tmp_path: Path) -> None:
    table, _ = _run(bare_mirror, tmp_path)
    assert table == EXPECTED


def test_bad_input_is_a_clear_error(fake_repo: git.Repo, tmp_path: Path) -> None:
    with pytest.raises(HistoryError, match="not a git repository"):
        run_history(HistoryOptions(tmp_path))
    with pytest.raises(HistoryError, match="no release tags match 'v9"):
        run_history(HistoryOptions(Path(fake_repo.working_tree_dir), tags="v9*"))
    with pytest.raises(HistoryError, match="not a revision range"):
        run_history(HistoryOptions(Path(fake_repo.working_tree_dir), rev="nope..v1.0.0"))


def test_default_cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir(tmp_path) == tmp_path / ".dpcheck_cache"
    assert default_cache_dir(None) == tmp_path / "xdg" / "dpcheck"


def test_progress_is_reported(fake_repo: git.Repo, tmp_path: Path) -> None:
    calls: list[tuple[str, int, int]] = []
    run_history(HistoryOptions(Path(fake_repo.working_tree_dir), package="fakedp",
                               cache_dir=tmp_path, tags="v0.*"),
                lambda stage, done, total: calls.append((stage, done, total)))
    assert calls[0] == ("classifying v0.1.0", 0, 4)
    assert calls[-1] == ("classifying tags", 4, 4)


def test_notebooks_a_library_ships_are_callers_not_its_code(tmp_path: Path) -> None:
    """A tutorial notebook inside the package (here one that divides by the realized batch)
    is how users call the library, like its examples: the row of the tag that adds it is the
    row of the tag before, and the notebook is never parsed as library code."""
    from tests.history.fakelib import build_repository
    from tests.notebook.conftest import code, notebook, write_notebook

    repo = build_repository(tmp_path / "repo")
    repo.git.checkout("v1.1.0")
    root = Path(repo.working_tree_dir)
    write_notebook(root / "fakedp" / "tutorials" / "intro.ipynb", notebook([
        code("import torch\nfrom fakedp.privacy_engine import PrivacyEngine"),
        code("for p in model.parameters():\n    p.grad = (p.summed_grad + torch.normal(0, 1.0, "
             "p.shape)) / len(batch)"),
    ]))
    repo.git.add("--all")
    repo.index.commit("a tutorial notebook")
    repo.create_tag("v1.1.1")
    table, parsed = _run(root, tmp_path / "cache", tags="v1.1.*")
    assert table["v1.1.1"] == table["v1.1.0"] == EXPECTED["v1.1.0"]
    python_blobs = {(item.hexsha, item.path) for item in repo.tags["v1.1.1"].commit.tree.traverse()
                    if item.type == "blob" and item.path.startswith("fakedp/")
                    and is_library_path(item.path)}
    assert parsed == len(python_blobs)
