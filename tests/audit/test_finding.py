"""`--finding`: a scan JSON report (built with the real result model) into an audit setting."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dpcheck.audit.finding import Overrides, leakiest_small_n, load_finding, setting_from_finding
from dpcheck.errors import DpcheckError, ParameterError
from dpcheck.model import Finding, ParamValue, Pipeline, ScanResult, Severity, Span


def _scan_json(tmp_path: Path, mechanism: str, params: dict[str, float]) -> tuple[Path, str]:
    pipeline = Pipeline(
        entry="train.py:main", path="train.py", line=10, mechanism=mechanism, sampling="poisson",
        params={k: ParamValue(k, v, "literal") for k, v in params.items()},
    )
    finding = Finding(
        rule="DP101", severity=Severity.ERROR, span=Span("train.py", 42), message="m",
        pipeline="train.py:main", context="optimizer.step()",
    )
    other = Finding(rule="DP102", severity=Severity.WARNING, span=Span("train.py", 50),
                    message="m", pipeline="train.py:main", context="x")
    path = tmp_path / "scan.json"
    report = ScanResult(pipelines=[pipeline], findings=[finding, other]).to_json("0.1.0")
    path.write_text(json.dumps(report), encoding="utf-8")
    return path, finding.fingerprint


def test_feasgm_finding_is_audited_in_the_appendix_a3_setting(tmp_path: Path) -> None:
    path, fingerprint = _scan_json(
        tmp_path, "FEASGM", {"q": 0.5, "sigma": 10.0, "clip": 0.1, "dim": 100, "N": 60000}
    )
    finding, pipeline = load_finding(path, fingerprint[:8])
    setting, notes = setting_from_finding(finding, pipeline, Overrides())
    # floor(3 q) = 1 vs floor(4 q) = 2: the smallest pair where the divisor doubles (Wang, Cui,
    # Cui, Yuan 2026, Appendix A.3).
    assert (setting.mechanism, setting.N, setting.q, setting.sigma, setting.dim) == (
        "FEASGM", 3, 0.5, 10.0, 100)
    assert any("|D|=3" in note and "leak is largest" in note for note in notes)


def test_q_from_batch_size_and_overrides_win(tmp_path: Path) -> None:
    path, fingerprint = _scan_json(
        tmp_path, "EASGM", {"batch_size": 256, "N": 60000, "sigma": 1.1, "dim": 26010}
    )
    finding, pipeline = load_finding(path, fingerprint)
    setting, notes = setting_from_finding(finding, pipeline, Overrides(dim=50, N=4))
    assert setting.q == pytest.approx(256 / 60000)
    assert (setting.N, setting.dim, setting.clip) == (4, 50, 1.0)
    assert any("clip not resolved" in note for note in notes)


def test_leakiest_small_n_follows_the_divisor_gap() -> None:
    assert leakiest_small_n("EASGM", 0.5)[0] == 1  # N/(N+1) furthest from 1 at N = 1
    assert leakiest_small_n("FEASGM", 0.01)[0] == 199  # floor(199 q) = 1 vs floor(200 q) = 2


def test_missing_parameter_is_named(tmp_path: Path) -> None:
    path, fingerprint = _scan_json(tmp_path, "EASGM", {"q": 0.5, "dim": 10})
    finding, pipeline = load_finding(path, fingerprint)
    with pytest.raises(DpcheckError, match="did not resolve sigma; give --sigma"):
        setting_from_finding(finding, pipeline, Overrides())


def test_unauditable_mechanism_is_refused(tmp_path: Path) -> None:
    path, fingerprint = _scan_json(tmp_path, "fixed-mean", {"q": 0.5, "sigma": 1.0, "dim": 10})
    finding, pipeline = load_finding(path, fingerprint)
    with pytest.raises(DpcheckError, match="'fixed-mean'"):
        setting_from_finding(finding, pipeline, Overrides())


def test_bad_inputs_give_messages_naming_them(tmp_path: Path) -> None:
    path, fingerprint = _scan_json(tmp_path, "EASGM", {"q": 0.5, "sigma": 1.0, "dim": 10})
    with pytest.raises(DpcheckError, match="matches no finding"):
        load_finding(path, "ffffffffff")
    with pytest.raises(DpcheckError, match="at least 6"):
        load_finding(path, fingerprint[:3])
    broken = tmp_path / "broken.json"
    broken.write_text("{not json", encoding="utf-8")
    with pytest.raises(DpcheckError, match="not valid JSON"):
        load_finding(broken, fingerprint)
    with pytest.raises(DpcheckError, match="cannot read"):
        load_finding(tmp_path / "absent.json", fingerprint)


def _mutated(tmp_path: Path, change: Callable[[dict[str, Any]], object]) -> tuple[Path, str]:
    """A real scan report with one part broken by ``change``."""
    path, fingerprint = _scan_json(tmp_path, "EASGM", {"q": 0.5, "sigma": 1.0, "dim": 10})
    report = json.loads(path.read_text(encoding="utf-8"))
    change(report)
    path.write_text(json.dumps(report), encoding="utf-8")
    return path, fingerprint


def _set_param(name: str, value: object) -> Callable[[dict[str, Any]], object]:
    return lambda report: report["pipelines"][0]["params"][name].__setitem__("value", value)


@pytest.mark.parametrize(
    "change,named",
    [
        (lambda r: r.__setitem__("pipelines", "oops"), "'pipelines' must be a list of objects"),
        (lambda r: r.pop("pipelines"), "'pipelines' must be a list of objects"),
        (lambda r: r["findings"].append(3), "'findings' must be a list of objects"),
        (lambda r: r["pipelines"][0].__setitem__("params", [1]), "pipelines[0].params must be"),
        (lambda r: r["pipelines"][0]["params"].__setitem__("q", 0.5), "pipelines[0].params.q "),
        (_set_param("dim", float("inf")), "pipelines[0].params.dim must be an object with a fin"),
        (_set_param("dim", 10**400), "pipelines[0].params.dim must be an object with a finite"),
        (_set_param("sigma", "1.0"), "pipelines[0].params.sigma must be an object with a fin"),
        (_set_param("sigma", True), "pipelines[0].params.sigma must be an object with a finite"),
        (_set_param("dim", 2.5), "pipelines[0].params.dim.value must be a whole number"),
    ],
)
def test_malformed_scan_json_names_the_file_and_the_key(
    tmp_path: Path, change: Callable[[dict[str, Any]], object], named: str
) -> None:
    path, fingerprint = _mutated(tmp_path, change)
    with pytest.raises(DpcheckError) as caught:
        load_finding(path, fingerprint)
    assert str(caught.value).startswith(f"--scan-json {path}:")
    assert named in str(caught.value)


def test_a_json_list_is_not_a_scan_report(tmp_path: Path) -> None:
    path = tmp_path / "list.json"
    path.write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(DpcheckError, match="not a JSON object"):
        load_finding(path, "abcdef")


def test_a_zero_rate_from_the_scan_is_refused_before_searching_n(tmp_path: Path) -> None:
    path, fingerprint = _mutated(tmp_path, _set_param("q", 0))
    finding, pipeline = load_finding(path, fingerprint)
    with pytest.raises(ParameterError, match=r"--q must lie in \(0, 1\]"):
        setting_from_finding(finding, pipeline, Overrides())
