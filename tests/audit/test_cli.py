"""`dpcheck audit` on the command line: shapes, exit codes, plot, and life without torch."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from dpcheck.cli import main
from tests.audit.test_finding import _scan_json

REPO = Path(__file__).resolve().parents[2]
TOP_KEYS = {"mechanism", "implementation", "inputs", "trials", "empirical", "epsilon_lower",
            "claimed", "verdict"}


def _run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict]:
    code = main(["audit", "--format", "json", "--trials", "600", *argv])
    return code, json.loads(capsys.readouterr().out)


def test_json_shape_and_violation_exit_code(capsys: pytest.CaptureFixture[str]) -> None:
    code, report = _run_json(capsys, "--mechanism", "easgm")
    assert code == 1 and report["verdict"] == "violation"
    assert set(report) == TOP_KEYS
    assert set(report["claimed"]) == {"epsilon_at_delta", "curve"}
    assert all(set(p) == {"alpha", "beta", "beta_upper"} for p in report["empirical"]["curve"])
    inputs = report["inputs"]
    assert (inputs["N"], inputs["sigma"], inputs["dim"]) == (4, 10.0, 100)


def test_sgm_exits_zero_and_text_says_no_violation(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["audit", "--mechanism", "sgm", "--sigma", "1", "--trials", "600"])
    out = capsys.readouterr().out
    assert code == 0 and "no violation at 95%" in out


def test_finding_mode_audits_the_picked_setting(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    params = {"q": 0.5, "sigma": 10.0, "clip": 0.1, "dim": 100}
    path, fingerprint = _scan_json(tmp_path, "FEASGM", params)
    code, report = _run_json(capsys, "--finding", fingerprint, "--scan-json", str(path))
    assert code == 1 and report["mechanism"] == "FEASGM" and report["inputs"]["N"] == 3
    assert any("leak is largest" in note for note in report["inputs"]["notes"])


def test_finding_without_scan_json_is_an_input_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", "--finding", "abcdef123"]) == 2
    assert "--scan-json" in capsys.readouterr().err


def test_plot_writes_a_png(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "audit.png"
    main(["audit", "--mechanism", "feasgm", "--N", "3", "--trials", "300", "--plot", str(target)])
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_bad_parameter_exits_two_with_its_name(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", "--mechanism", "easgm", "--q", "1.5"]) == 2
    assert "--q must lie in (0, 1]" in capsys.readouterr().err


def test_without_torch_help_works_and_audit_asks_for_the_extra() -> None:
    script = (
        "import sys; sys.modules['torch'] = None\n"
        "from dpcheck.cli import main, build_parser\n"
        "build_parser().parse_args(['audit', '--mechanism', 'sgm'])\n"
        "sys.exit(main(['audit', '--mechanism', 'sgm']))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=60)
    assert done.returncode == 2
    assert "install 'dpcheck[audit]'" in done.stderr


@pytest.mark.parametrize(
    "argv,named",
    [
        (["--trials", "0"], "--trials must lie in [20, 1,000,000]"),
        (["--trials", "-5"], "--trials must lie in"),
        (["--trials", "10000000000"], "--trials must lie in"),
        (["--confidence", "1"], "--confidence must lie in (0, 1)"),
        (["--confidence", "-0.5"], "--confidence must lie in (0, 1)"),
        (["--delta", "0"], "--delta must lie in (0, 1)"),
        (["--delta", "1.5"], "--delta must lie in (0, 1)"),
        (["--delta", "nan"], "--delta must lie in (0, 1)"),
        (["--N", "0"], "--N must be an integer in [1, 1,000,000]"),
        (["--N", "100000000000"], "--N must be an integer in [1, 1,000,000]"),
        (["--seed", "-1"], "--seed must lie in"),
        (["--dim", "1000000000000000"], "--trials 10000 x --dim 1.000e+15"),
        (["--dim", "20000000", "--trials", "20000"], "exceeds the cpu limit of 1e+11"),
        (["--dim", "100000000", "--trials", "20", "--implementation", "opacus"],
         "the Opacus implementation holds the N+1 dataset rows"),
    ],
)
def test_nonsense_numbers_exit_two_naming_the_option(
    capsys: pytest.CaptureFixture[str], argv: list[str], named: str
) -> None:
    assert main(["audit", "--mechanism", "easgm", *argv]) == 2
    err = capsys.readouterr().err
    assert named in err and "internal error" not in err


@pytest.mark.parametrize(
    "change,named",
    [
        (lambda r: r.__setitem__("pipelines", "oops"), "'pipelines' must be a list of objects"),
        (lambda r: r["pipelines"][0]["params"]["dim"].__setitem__("value", 1e15),
         "--dim 1.000e+15"),
    ],
)
def test_a_bad_scan_json_exits_two_naming_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], change: Callable[[dict], object],
    named: str,
) -> None:
    path, fingerprint = _scan_json(tmp_path, "EASGM", {"q": 0.5, "sigma": 1.0, "dim": 10})
    report = json.loads(path.read_text(encoding="utf-8"))
    change(report)
    path.write_text(json.dumps(report), encoding="utf-8")
    assert main(["audit", "--finding", fingerprint, "--scan-json", str(path)]) == 2
    err = capsys.readouterr().err
    assert named in err and "internal error" not in err
