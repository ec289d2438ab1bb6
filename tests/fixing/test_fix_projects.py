"""``dpcheck scan --fix`` on copies of fixture projects: the finding is gone on a fresh scan, a
second run changes nothing, only the edited span changes (CRLF, tabs, a BOM and comments kept),
``--diff`` shows exactly what ``--fix`` writes, and the edits in JSON and SARIF reproduce it.

Each case is a fixture (``fixtures/<name>``, see its ``expected.json``) with the rule its fix
removes and the file the fix edits. Everything runs through the real command line.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import jsonschema
import pytest

from dpcheck.cli import main
from dpcheck.engine import ScanOptions, scan
from tests.fixture_projects import FIXTURES

REPORT_SCHEMA = json.loads((FIXTURES.parent / "docs" / "report.schema.json").read_text("utf-8"))

#: fixture -> (rule the fix removes, edited file, whether the fix is unsafe)
CASES: dict[str, tuple[str, str, bool]] = {
    "torch_loop_named_batch_asgm_fixable": ("DP101", "train.py", False),
    "opacus1_poisson_false_fixable": ("DP102", "train.py", True),
    "accountant_q_mismatch": ("DP103", "train.py", False),
    "accountant_steps_mismatch": ("DP103", "train.py", False),
    "opacus_unpinned_project_env_fixable": ("DP105", "requirements.txt", False),
}


def _copy(name: str, dest: Path) -> Path:
    shutil.copytree(FIXTURES / name, dest, ignore=shutil.ignore_patterns("expected.json"))
    return dest


def _snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file() and ".dpcheck_cache" not in p.parts}


def _fix(root: Path, unsafe: bool, *extra: str) -> int:
    flags = ["--unsafe-fixes"] if unsafe else []
    return main(["scan", str(root), "--fix", *flags, "--no-cache", "--jobs", "1",
                 "--output-format", "concise", *extra])


def _rules(root: Path) -> list[str]:
    return [f.rule for f in scan(ScanOptions(paths=[root], use_cache=False, jobs=1)).findings]


@pytest.mark.parametrize("name", CASES)
def test_fix_removes_the_finding_and_a_second_run_changes_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str) -> None:
    rule, edited, unsafe = CASES[name]
    root = _copy(name, tmp_path / name)
    before = _snapshot(root)
    assert rule in _rules(root)
    _fix(root, unsafe)
    assert "fixed 1 finding" in capsys.readouterr().err
    after = _snapshot(root)
    assert rule not in _rules(root)
    assert {path for path in before if before[path] != after[path]} == {edited}
    old, new = before[edited].decode().splitlines(), after[edited].decode().splitlines()
    assert len(old) - len(new) in (0, 1)  # one line edited, or one keyword line dropped
    assert sum(a != b for a, b in zip(old, new)) >= 1
    # idempotent: nothing left to fix, nothing to diff
    _fix(root, unsafe)
    assert _snapshot(root) == after
    capsys.readouterr()
    assert main(["scan", str(root), "--diff", "--unsafe-fixes", "--no-cache", "--jobs", "1"]) == 0
    assert capsys.readouterr().out == ""


def _crlf(text: str) -> str:
    return text.replace("\n", "\r\n")


def _tabs(text: str) -> str:
    """Indentation in tabs (a Python file), or runs of blanks as tabs (a requirements file)."""
    lines = []
    for line in text.split("\n"):
        body = line.lstrip(" ")
        depth = (len(line) - len(body)) // 4
        lines.append("\t" * depth + " " * ((len(line) - len(body)) % 4) + body)
    return "\n".join(lines).replace("          #", "\t\t#")


def _bom(text: str) -> str:
    return "\ufeff" + text


def _commented(text: str) -> str:
    """A comment line before every line that ends a statement at the top level and at the end."""
    return "# header comment: keep me\n" + text + "# trailing comment: keep me too\n"


VARIANTS: dict[str, Callable[[str], str]] = {
    "crlf": _crlf, "tabs": _tabs, "bom": _bom, "comments": _commented,
    "crlf+tabs": lambda t: _crlf(_tabs(t)),
}


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("name", CASES)
def test_fix_keeps_every_byte_outside_its_edit(tmp_path: Path, name: str, variant: str) -> None:
    """Fixing a variant of the file (CRLF, tabs, a BOM, extra comments) gives the variant of
    the fixed file: the fix touches its span and nothing else, whatever the file's bytes."""
    rule, edited, unsafe = CASES[name]
    transform = VARIANTS[variant]
    plain = _copy(name, tmp_path / "plain")
    original = (plain / edited).read_bytes().decode("utf-8")
    _fix(plain, unsafe, "--quiet")
    fixed = (plain / edited).read_bytes().decode("utf-8")
    assert fixed != original
    other = _copy(name, tmp_path / "variant")
    (other / edited).write_bytes(transform(original).encode("utf-8"))
    assert rule in _rules(other)
    _fix(other, unsafe, "--quiet")
    assert (other / edited).read_bytes() == transform(fixed).encode("utf-8")
    assert rule not in _rules(other)


@pytest.mark.parametrize("name", CASES)
def test_diff_shows_what_fix_writes_and_writes_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        name: str) -> None:
    rule, edited, unsafe = CASES[name]
    root = _copy(name, tmp_path / name)
    monkeypatch.chdir(root)  # paths are shown relative to where dpcheck runs
    before = _snapshot(root)
    flags = ["--unsafe-fixes"] if unsafe else []
    assert main(["scan", str(root), "--diff", *flags, "--no-cache", "--jobs", "1"]) == 1
    diff = capsys.readouterr().out
    assert _snapshot(root) == before
    assert diff.startswith(f"--- a/{edited}\n+++ b/{edited}\n@@ ")
    _fix(root, unsafe)
    old = before[edited].decode().splitlines()
    new = (root / edited).read_text("utf-8").splitlines()
    removed = [line[1:] for line in diff.splitlines()[2:] if line.startswith("-")]
    added = [line[1:] for line in diff.splitlines()[2:] if line.startswith("+")]
    assert removed == [line for line in old if line not in new]
    assert added == [line for line in new if line not in old]


def _apply(text: str, edits: list[tuple[int, int, int, int, str]]) -> str:
    """``text`` with (line, column, end line, end column, content) edits applied, counted as
    the reports define them (1-based, end exclusive, columns in characters)."""
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(line: int, column: int) -> int:
        return starts[line - 1] + column - 1

    for line, column, end_line, end_column, content in sorted(edits, reverse=True):
        text = text[: offset(line, column)] + content + text[offset(end_line, end_column):]
    return text


@pytest.mark.parametrize("name", CASES)
def test_json_and_sarif_edits_reproduce_the_fix(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str) -> None:
    rule, edited, unsafe = CASES[name]
    root = _copy(name, tmp_path / name)
    original = (root / edited).read_text("utf-8")
    main(["scan", str(root), "--output-format", "json", "--no-cache", "--jobs", "1"])
    report = json.loads(capsys.readouterr().out)
    jsonschema.validate(report, REPORT_SCHEMA)
    [finding] = [f for f in report["findings"] if f["rule"] == rule]
    fix = finding["fix"]
    assert fix["safety"] == ("unsafe" if unsafe else "safe") and finding["fix_reason"] is None
    json_edits = [(e["line"], e["column"], e["end_line"], e["end_column"], e["content"])
                  for e in fix["edits"] if e["path"] == edited]
    main(["scan", str(root), "--output-format", "sarif", "--no-cache", "--jobs", "1"])
    sarif = json.loads(capsys.readouterr().out)
    [result] = [r for r in sarif["runs"][0]["results"] if r["ruleId"] == rule]
    [change] = result["fixes"][0]["artifactChanges"]
    assert change["artifactLocation"]["uri"] == edited
    sarif_edits = [(r["deletedRegion"]["startLine"], r["deletedRegion"]["startColumn"],
                    r["deletedRegion"]["endLine"], r["deletedRegion"]["endColumn"],
                    r["insertedContent"]["text"]) for r in change["replacements"]]
    _fix(root, unsafe, "--quiet")
    fixed = (root / edited).read_text("utf-8")
    assert _apply(original, json_edits) == fixed
    assert _apply(original, sarif_edits) == fixed


def test_an_unsafe_fix_waits_for_unsafe_fixes(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    root = _copy("opacus1_poisson_false_fixable", tmp_path / "p")
    before = _snapshot(root)
    main(["scan", str(root), "--no-cache", "--jobs", "1", "--output-format", "concise"])
    out = capsys.readouterr().out
    assert " DP102 [error] batch sampling" in out and "[*]" not in out.split("\n")[0]
    assert "1 unsafe fix available with `dpcheck scan --fix --unsafe-fixes`." in out
    _fix(root, unsafe=False)
    assert "add --unsafe-fixes" in capsys.readouterr().err
    assert _snapshot(root) == before
    _fix(root, unsafe=True)
    err = capsys.readouterr().err
    assert "fixed 1 finding" in err
    # the update rule stays Opacus': its DP101 verdict is shown, an info at this N
    main(["scan", str(root), "--no-cache", "--jobs", "1", "--output-format", "concise"])
    out = capsys.readouterr().out
    assert " DP101 [info] the update is FEASGM" in out and "DP102" not in out


def test_a_fix_that_would_bring_an_error_is_not_applied(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Batch 500 of CIFAR-10: Poisson batches would make Opacus' floor(N*q) divisor leak at this
    N, a DP101 error as severe as the DP102 fixed: verified, not hoped, so nothing is written."""
    root = _copy("opacus1_poisson_false_shuffle", tmp_path / "p")
    before = _snapshot(root)
    main(["scan", str(root), "--output-format", "full", "--no-cache", "--jobs", "1"])
    out = capsys.readouterr().out
    assert "= no fix: drop poisson_sampling=False" in out and "DP101 [error]" in out
    _fix(root, unsafe=True)
    err = capsys.readouterr().err
    assert "DP102 fix not applied: drop poisson_sampling=False" in err
    assert "it would bring DP101 [error]" in err
    assert _snapshot(root) == before
