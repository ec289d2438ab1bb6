"""Every fix example of the catalog, run through ``dpcheck scan --fix --unsafe-fixes``.

Each example is a small project written to a temporary folder. Before the fix its rule must be
reported; an example with ``after`` must come out of ``--fix`` with the edited file exactly
``after`` and the rule no longer reported on a fresh scan; an example with ``unfixed`` must be
left byte for byte as it was, with that reason on stderr and the finding still reported. The
real CLI, engine and fix stage run; nothing is mocked.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from dpcheck.catalog import load_catalog
from dpcheck.catalog.rule import FixExample
from dpcheck.cli import main
from dpcheck.engine import ScanOptions, scan
from dpcheck.rules.fixes.registry import fix_registry


def _cases() -> list[pytest.param]:
    return [pytest.param(rule.id, example, id=f"{fix.id}-{index}")
            for rule in load_catalog().rules for fix in rule.fixes
            for index, example in enumerate(fix.examples)]


def _write(root: Path, example: FixExample) -> None:
    for relative, text in example.project_files():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))


def _rules(root: Path) -> set[str]:
    return {f.rule for f in scan(ScanOptions(paths=[root], use_cache=False, jobs=1)).findings}


@pytest.mark.parametrize(("rule_id", "example"), _cases())
def test_fix_example(tmp_path: Path, capsys: pytest.CaptureFixture[str], rule_id: str,
                     example: FixExample) -> None:
    _write(tmp_path, example)
    assert rule_id in _rules(tmp_path), example.name
    main(["scan", str(tmp_path), "--fix", "--unsafe-fixes", "--no-cache", "--jobs", "1",
          "--output-format", "concise"])
    err = capsys.readouterr().err
    edited = (tmp_path / example.path).read_bytes().decode("utf-8")
    if example.after is not None:
        assert edited == example.after, err
        assert rule_id not in _rules(tmp_path), example.name
    else:
        assert edited == example.before
        assert example.unfixed is not None and example.unfixed in " ".join(err.split()), err
        assert rule_id in _rules(tmp_path)


def test_every_catalog_fix_has_one_module_and_applied_examples() -> None:
    registry = fix_registry()
    declared = {(rule.id, fix.id) for rule in load_catalog().rules for fix in rule.fixes}
    assert {(f.rule, f.entry.id) for f in registry.fixes} == declared
    assert {"DP101", "DP102", "DP103", "DP105"} <= {rule for rule, _ in declared}
    for fixed in registry.fixes:
        assert any(e.after is not None for e in fixed.entry.examples), fixed.entry.id
