"""``dpcheck scan --new-since REF`` on real git repositories: only findings absent at REF."""

from __future__ import annotations

from pathlib import Path

import git

from tests.gate.conftest import ADD_SHUFFLE, DP101_FILE, DP101_LINE, ScanJson, commit_all, copy_fixture, edit, rules_at


def test_base_project_has_one_dp101_and_nothing_new_at_head(gate_repo: Path, scan_json: ScanJson) -> None:
    code, report, _ = scan_json(str(gate_repo))
    assert code == 1 and rules_at(report) == [("DP101", DP101_FILE)]
    code, report, err = scan_json("--new-since", "HEAD", str(gate_repo))
    assert code == 0 and report["findings"] == []
    assert "1 finding also present at HEAD" in err


def test_moving_code_does_not_make_the_finding_new(gate_repo: Path, scan_json: ScanJson) -> None:
    train = gate_repo / DP101_FILE
    text = train.read_text()
    helper_start, main_start = text.index("def build_model"), text.index("def main")
    helper = text[helper_start:main_start]
    moved = text[:helper_start] + text[main_start:].replace(
        '\n\nif __name__ == "__main__":', "\n\n" + helper.rstrip() + '\n\n\nif __name__ == "__main__":'
    )
    train.write_text("# reordered: helpers after main\n" * 5 + moved)
    _, before, _ = scan_json(str(gate_repo))
    [finding] = before["findings"]
    assert finding["rule"] == "DP101" and finding["line"] != DP101_LINE  # the anchor moved
    code, report, _ = scan_json("--new-since", "HEAD", str(gate_repo))
    assert code == 0 and report["findings"] == []


def test_renaming_a_variable_elsewhere_does_not_make_the_finding_new(gate_repo: Path, scan_json: ScanJson) -> None:
    train = gate_repo / DP101_FILE
    train.write_text(train.read_text().replace("criterion", "loss_fn").replace("build_model", "make_model"))
    repo = git.Repo(gate_repo)
    commit_all(repo, "rename")
    code, report, _ = scan_json("--new-since", "HEAD~1", str(gate_repo))
    assert code == 0 and report["findings"] == []


def test_adding_an_unrelated_file_does_not_create_new_findings(gate_repo: Path, scan_json: ScanJson) -> None:
    (gate_repo / "tools").mkdir()
    (gate_repo / "tools" / "plot.py").write_text("import matplotlib\n\ndef plot(xs):\n    return sorted(xs)\n")
    (gate_repo / "NOTES.md").write_text("notes\n")
    code, report, _ = scan_json("--new-since", "HEAD", str(gate_repo))
    assert code == 0 and report["findings"] == []


def test_a_new_dp102_is_reported_and_only_it(gate_repo: Path, scan_json: ScanJson) -> None:
    edit(gate_repo / "cifar" / "train.py", *ADD_SHUFFLE)
    code, report, err = scan_json("--new-since", "HEAD", str(gate_repo))
    assert code == 1 and rules_at(report) == [("DP102", "cifar/train.py")]
    assert "1 finding also present at HEAD" in err


def test_named_files_as_pre_commit_passes_them(gate_repo: Path, scan_json: ScanJson) -> None:
    edit(gate_repo / "cifar" / "train.py", *ADD_SHUFFLE)
    commit_all(git.Repo(gate_repo), "shuffle")
    code, report, _ = scan_json("--new-since", "HEAD~1", str(gate_repo / "cifar" / "train.py"))
    assert code == 1 and rules_at(report) == [("DP102", "cifar/train.py")]
    code, report, _ = scan_json("--new-since", "HEAD~1", str(gate_repo / DP101_FILE))
    assert code == 0 and report["findings"] == []


def test_a_folder_absent_at_the_ref_is_all_new(gate_repo: Path, scan_json: ScanJson) -> None:
    copy_fixture("opacus1_poisson_false_shuffle", gate_repo / "cifar10")
    code, report, _ = scan_json("--new-since", "HEAD", str(gate_repo / "cifar10"))
    assert code == 1 and rules_at(report) == [("DP102", "cifar10/train.py")]


def test_unpinning_the_dp_library_is_a_new_dp105(gate_repo: Path, scan_json: ScanJson) -> None:
    """Each tree's own dependency files decide its findings: the ref pinned opacus==1.4.1."""
    edit(gate_repo / "cifar" / "requirements.txt", "opacus==1.4.1", "opacus")
    code, report, _ = scan_json("--new-since", "HEAD", "--fail-on", "warning", str(gate_repo))
    assert code == 1 and rules_at(report) == [("DP105", "cifar/requirements.txt")]
    code, report, _ = scan_json("--new-since", "HEAD", str(gate_repo / "cifar" / "requirements.txt"))
    assert rules_at(report) == [("DP105", "cifar/requirements.txt")]


def test_the_work_tree_index_and_head_are_untouched(gate_repo: Path, scan_json: ScanJson) -> None:
    repo = git.Repo(gate_repo)
    edit(gate_repo / "cifar" / "train.py", *ADD_SHUFFLE)
    repo.index.add(["cifar/train.py"])
    (gate_repo / "new.py").write_text("x = 1\n")
    before = (repo.head.commit.hexsha, repo.active_branch.name, repo.git.status("--porcelain"))
    text_before = (gate_repo / "cifar" / "train.py").read_text()
    scan_json("--new-since", "HEAD~0", str(gate_repo))
    assert (repo.head.commit.hexsha, repo.active_branch.name, repo.git.status("--porcelain")) == before
    assert (gate_repo / "cifar" / "train.py").read_text() == text_before


def test_unknown_ref_is_a_clear_error(gate_repo: Path, scan_json: ScanJson) -> None:
    code, _, err = scan_json("--new-since", "no-such-branch", str(gate_repo))
    assert code == 2
    assert "--new-since no-such-branch" in err and "not a commit" in err and "Traceback" not in err


def test_outside_git_is_a_clear_error(tmp_path: Path, scan_json: ScanJson) -> None:
    copy_fixture("opacus1_sum_reduction_sgm", tmp_path / "plain")
    code, _, err = scan_json("--new-since", "main", str(tmp_path / "plain"))
    assert code == 2 and "not in a git work tree" in err
