"""Snapshots of what users read: the report of a handful of fixtures in every output format,
committed under ``tests/snapshots/<fixture>/`` and compared byte for byte, so every change to an
output is a reviewable diff. The README's sample scan is one of them.

After an intended change, rewrite them (and the README's sample) and review the diff:

    DPCHECK_UPDATE_SNAPSHOTS=1 python -m pytest tests/snapshots

Each fixture is copied to ``<tmp>/fixtures/<name>`` and scanned from ``<tmp>``, as the README
runs it from the repository, so text paths read ``fixtures/<name>/...``. What depends on the
machine is normalised: the temporary folder, dpcheck's and Python's versions, and floats in
JSON and SARIF (rounded to 6 significant digits: the last digits of a numerical bound may differ
between platforms' maths libraries). SARIF's ``tool.driver.rules`` (the whole catalog, the same
for every scan) is snapshotted once, in ``sarif-rules.json``. ``diff.txt`` is what
``dpcheck scan --diff`` prints (the diff, then its stderr lines: the fixes not applied and why);
the README's quick start shows two of them.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import platform
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from dpcheck import __version__
from dpcheck.cli import main

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
README = REPO / "README.md"
UPDATE = os.environ.get("DPCHECK_UPDATE_SNAPSHOTS") == "1"

#: fixture -> why it is here
FIXTURES = {
    "torch_loop_asgm_len_batch": "the README's sample: hand-written ASGM (DP101) with its bound",
    "mnist_opacus_feasgm": "the README's quick start: Opacus 1.4 FEASGM downgraded to info",
    "shuffle_fixed_batch_rdp": "shuffled batches under a Poisson accountant (DP102, shuffle bound)",
    "accountant_steps_mismatch": "an accountant given the wrong step count (DP103)",
    "opacus_range_spanning_eras": "a pin spanning update rules (DP105 on environment.yml)",
    "broken_file_beside_valid": "a file that does not parse (DP001) beside a valid pipeline",
}
FORMATS = {
    "full": "full.txt",
    "concise": "concise.txt",
    "json": "report.json",
    "sarif": "report.sarif",
    "github": "github.txt",
    "diff": "diff.txt",
}
README_FIXTURE = "torch_loop_asgm_len_batch"
README_COMMAND = f"dpcheck scan fixtures/{README_FIXTURE} --plot-dir plots"
README_BLOCK = re.compile(r"(```\n\$ " + re.escape(README_COMMAND) + r"\n)(.*?)(```\n)", re.S)
#: The README's quick start shows ``--diff`` on these fixtures, as the snapshots have it.
README_DIFFS = ("mnist_opacus_feasgm", "accountant_steps_mismatch")


def _readme_block(command: str) -> re.Pattern[str]:
    return re.compile(r"(```\n\$ " + re.escape(command) + r"\n)(.*?)(```\n)", re.S)


def _round(value: Any) -> Any:
    if isinstance(value, float):
        return float(f"{value:.6g}")
    if isinstance(value, list):
        return [_round(v) for v in value]
    if isinstance(value, dict):
        return {k: _round(v) for k, v in value.items()}
    return value


def _normalise(text: str, fmt: str, tmp: Path) -> tuple[str, dict[str, Any] | None]:
    """The machine-independent text of a report (and SARIF's driver rules, split off)."""
    text = text.replace(tmp.as_uri(), "file://<tmp>").replace(str(tmp), "<tmp>")
    text = text.replace(f"Python {platform.python_version_tuple()[0]}.{platform.python_version_tuple()[1]}", "Python <python>")
    rules = None
    if fmt in ("json", "sarif"):
        document = _round(json.loads(text))
        if fmt == "json":
            document["dpcheck"] = "<version>"
        else:
            driver = document["runs"][0]["tool"]["driver"]
            driver["version"] = driver["semanticVersion"] = "<version>"
            rules = {"rules": driver["rules"]}
            driver["rules"] = [rule["id"] for rule in driver["rules"]]
        text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    return text.replace(f"dpcheck {__version__}", "dpcheck <version>"), rules


def _compare(path: Path, actual: str, mismatches: list[str]) -> None:
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(actual, encoding="utf-8")
        return
    if not path.exists():
        mismatches.append(f"{path.relative_to(REPO)} is missing: run DPCHECK_UPDATE_SNAPSHOTS=1 python -m pytest tests/snapshots")
    elif path.read_text(encoding="utf-8") != actual:
        mismatches.append(f"{path.relative_to(REPO)} differs")


Reports = tuple[Path, dict[str, dict[str, str]]]


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> Reports:
    """The folder the scans ran in, and every snapshot fixture's raw report in every format."""
    tmp = tmp_path_factory.mktemp("snapshots")
    out: dict[str, dict[str, str]] = {}
    old = Path.cwd()
    try:
        os.chdir(tmp)
        for fixture in FIXTURES:
            shutil.copytree(REPO / "fixtures" / fixture, tmp / "fixtures" / fixture,
                            ignore=shutil.ignore_patterns("expected.json"))
            out[fixture] = {}
            for fmt in FORMATS:
                out[fixture][fmt] = _scan(tmp, fixture, fmt)
    finally:
        os.chdir(old)
    return tmp, out


def _scan(tmp: Path, fixture: str, fmt: str) -> str:
    target = tmp / f"{fixture}.{fmt}"
    if fmt == "diff":
        stderr = io.StringIO()
        with contextlib.redirect_stderr(stderr):
            main(["scan", f"fixtures/{fixture}", "--diff", "--output", str(target),
                  "--cache-dir", str(tmp / "cache"), "--jobs", "1"])
        return target.read_text(encoding="utf-8") + stderr.getvalue()
    main(["scan", f"fixtures/{fixture}", "--output-format", fmt, "--output", str(target),
          "--cache-dir", str(tmp / "cache"), "--jobs", "1"])
    return target.read_text(encoding="utf-8")


@pytest.mark.parametrize("fixture", list(FIXTURES))
def test_reports_match_their_snapshots(fixture: str, reports: Reports) -> None:
    tmp, raw = reports
    mismatches: list[str] = []
    for fmt, name in FORMATS.items():
        text, rules = _normalise(raw[fixture][fmt], fmt, tmp)
        _compare(HERE / fixture / name, text, mismatches)
        if rules is not None:
            _compare(HERE / "sarif-rules.json", json.dumps(rules, indent=2, ensure_ascii=False) + "\n", mismatches)
    assert not mismatches, "\n".join(mismatches) + (
        "\nAn intended change? DPCHECK_UPDATE_SNAPSHOTS=1 python -m pytest tests/snapshots, then review the diff."
    )


def test_readme_sample_is_the_snapshot(reports: Reports) -> None:
    """The README's sample scan prints exactly what the scan prints (its full-format snapshot)."""
    snapshot = (HERE / README_FIXTURE / FORMATS["full"]).read_text(encoding="utf-8")
    readme = README.read_text(encoding="utf-8")
    match = README_BLOCK.search(readme)
    assert match, f"README.md has no ``` block starting with `$ {README_COMMAND}`"
    if UPDATE:
        README.write_text(readme[: match.start(2)] + snapshot + readme[match.end(2):], encoding="utf-8")
        return
    assert match.group(2) == snapshot, "README sample is stale: DPCHECK_UPDATE_SNAPSHOTS=1 python -m pytest tests/snapshots"


@pytest.mark.parametrize("fixture", README_DIFFS)
def test_readme_quick_start_diffs_are_the_snapshots(fixture: str, reports: Reports) -> None:
    """The quick start's ``--diff`` outputs are what ``--diff`` prints (the diff snapshots)."""
    snapshot = (HERE / fixture / FORMATS["diff"]).read_text(encoding="utf-8")
    readme = README.read_text(encoding="utf-8")
    command = f"dpcheck scan fixtures/{fixture} --diff"
    match = _readme_block(command).search(readme)
    assert match, f"README.md has no ``` block starting with `$ {command}`"
    if UPDATE:
        README.write_text(readme[: match.start(2)] + snapshot + readme[match.end(2):], encoding="utf-8")
        return
    assert match.group(2) == snapshot, "README --diff sample is stale: DPCHECK_UPDATE_SNAPSHOTS=1 python -m pytest tests/snapshots"


def test_snapshots_are_machine_independent(reports: Reports) -> None:
    """No snapshot names the temporary folder or dpcheck's version; every snapshot file belongs
    to a fixture and format of this module."""
    tmp, raw = reports
    for formats in raw.values():
        for fmt, raw in formats.items():
            text, _ = _normalise(raw, fmt, tmp)
            assert str(tmp) not in text and "/tmp/" not in text and __version__ not in text.replace("<version>", "")
    expected = {HERE / f / n for f in FIXTURES for n in FORMATS.values()} | {HERE / "sarif-rules.json"}
    present = {p for p in HERE.rglob("*") if p.is_file() and p.suffix != ".py" and "__pycache__" not in p.parts}
    assert present == expected
