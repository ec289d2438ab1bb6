"""Bounds attached to the findings of the bundled fixtures (docs/theory.md#verdicts), each number
checked against an independent computation: Opacus' and dp_accounting's own accountants, closed
forms, and brute-force evaluation of the divisor expression."""

from __future__ import annotations

import json
import math
import time
from functools import cache
from pathlib import Path

import dp_accounting
import numpy as np
import pytest
from dp_accounting import pld, rdp
from opacus.accountants import GaussianAccountant, RDPAccountant
from scipy.stats import norm

from dpcheck.engine import ScanOptions, scan
from dpcheck.model import Finding, Severity
from tests.fixture_projects import fixture_project

TF_ORDERS = [1.25, 1.5, 1.75, 2.0, 2.25, 2.5, 3.0, 3.5, 4.0, 4.5] + list(range(5, 64)) + [128, 256, 512]


@cache
def findings(name: str) -> tuple[Finding, ...]:
    return tuple(scan(ScanOptions(paths=(fixture_project(name),), use_cache=False, jobs=1)).findings)


def bound_of(name: str, rule: str) -> tuple[Finding, dict]:
    finding = next(f for f in findings(name) if f.rule == rule)
    assert finding.bound is not None, f"{name} {rule} has no bound"
    assert len(finding.bound["summary"]) == 2 and all(isinstance(s, str) for s in finding.bound["summary"])
    return finding, finding.bound


def sgm_event(q: float, sigma: float, steps: int) -> dp_accounting.DpEvent:
    return dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma)), steps)


def pld_accountant(q: float, sigma: float, steps: int, interval: float = 1e-3) -> pld.PLDAccountant:
    accountant = pld.PLDAccountant(value_discretization_interval=interval)
    accountant.compose(sgm_event(q, sigma, steps))
    return accountant


def rdp_epsilon(q: float, sigma: float, steps: int, orders: list[float], delta: float = 1e-5) -> float:
    accountant = rdp.RdpAccountant(orders=orders)
    accountant.compose(sgm_event(q, sigma, steps))
    return accountant.get_epsilon(delta)


def opacus_rdp_epsilon(q: float, sigma: float, steps: int, delta: float = 1e-5) -> float:
    accountant = RDPAccountant()
    accountant.history = [(sigma, q, steps)]
    return accountant.get_epsilon(delta)


def divisor(n: int, batch: int) -> int:
    """Opacus 1.x: int(N * (1 / len(loader))) with len = ceil(N / b)."""
    return int(n * (1 / math.ceil(n / batch)))


def test_dp103_steps_mismatch_is_violated_and_shows_both_numbers() -> None:
    _, bound = bound_of("accountant_steps_mismatch", "DP103")
    # TF-Privacy was given T = 7200, the loop runs 30 epochs x 240 = 14400 steps.
    assert bound["inputs"]["accountant_steps"] == 7200 and bound["inputs"]["steps"] == 14400
    q = 250 / 60000
    assert bound["claimed"]["epsilon_at_delta"] == pytest.approx(rdp_epsilon(q, 1.3, 7200, TF_ORDERS), rel=1e-6)
    actual = pld_accountant(q, 1.3, 14400, interval=2e-4).get_epsilon(1e-5)
    assert bound["witness"]["epsilon_at_delta"] == pytest.approx(actual, abs=5e-3)
    assert bound["guarantee"]["epsilon_at_delta"] == pytest.approx(actual, abs=5e-3)
    assert bound["verdict"] == "violated"
    crossing = bound["crossing"]
    assert crossing["beta_witness"] < crossing["beta_claimed"] - 1e-4
    # the summary names where the curves cross and both betas
    assert "T=14400" in bound["summary"][1] and "→ violated" in bound["summary"][1]
    assert f"α={crossing['alpha']:.3g}" in bound["summary"][1]
    assert f"β={crossing['beta_witness']:.3g} < {crossing['beta_claimed']:.3g}" in bound["summary"][1]


def test_dp103_overstated_q_is_consistent() -> None:
    _, bound = bound_of("accountant_q_mismatch", "DP103")
    assert bound["claimed"]["epsilon_at_delta"] == pytest.approx(rdp_epsilon(0.00512, 1.1, 4000, TF_ORDERS), rel=1e-6)
    actual = pld_accountant(256 / 60000, 1.1, 4000).get_epsilon(1e-5)
    assert bound["witness"]["epsilon_at_delta"] == pytest.approx(actual, abs=5e-3)
    assert bound["verdict"] == "consistent"
    # delta is the target_delta the code gives get_privacy_spent, so nothing is assumed
    assert bound["inputs"]["delta"] == 1e-5 and bound["missing"] == []


def test_a_delta_the_code_never_states_is_reported_missing_with_advice() -> None:
    """No accountant call and no delta anywhere: the bound says which delta it assumed."""
    _, bound = bound_of("shuffle_permutation_low_noise", "DP104")
    assert [m["param"] for m in bound["missing"]] == ["delta"]
    assert bound["missing"][0]["advice"].startswith("--param delta=VALUE")
    assert "1e-05" in bound["missing"][0]["assumed"]


@pytest.mark.parametrize("name, q, sigma, steps", [
    ("torch_loop_asgm_len_batch", 0.005, 1.0, 2000),
    ("torch_loop_lr_folded_asgm", 0.01, 0.8, 1500),
])
def test_asgm_witness_is_sgm_at_half_sigma(name: str, q: float, sigma: float, steps: int) -> None:
    _, bound = bound_of(name, "DP101")
    half = pld_accountant(q, sigma / 2, steps)
    # the witness uses the optimistic PLD: never above the true SGM(sigma/2) epsilon, and close to
    # dp_accounting's (pessimistic) value
    expected = half.get_epsilon(1e-5)
    assert 0.99 * expected <= bound["witness"]["epsilon_at_delta"] <= expected
    claimed_eps = bound["inputs"]["epsilon"]
    assert bound["witness"]["delta_at_epsilon"] == pytest.approx(half.get_delta(claimed_eps), rel=2e-2)
    assert bound["guarantee"] is None and bound["verdict"] == "violated"


def test_undecided_kind_witness_holds_for_asgm_and_easgm() -> None:
    """ASGM|EASGM (docs/theory.md#undecided-normalization): with n = 1,770,186 and N = 5000 the
    EASGM witness is fully distinguishable at the claimed eps, so the larger of the two curves is
    the ASGM witness: delta at the claimed eps is SGM at sigma/2's, by dp_accounting's PLD."""
    finding, bound = bound_of("undecided_rows_divisor_asgm_or_easgm", "DP101")
    assert bound["mechanism"] == "asgm-or-easgm" and bound["inputs"]["N"] == 5000
    assert "ASGM or EASGM" in finding.message and "batch or the dataset" in finding.message
    assert bound["claimed"]["epsilon_at_delta"] == pytest.approx(opacus_rdp_epsilon(0.02, 1.0, 2000), rel=1e-6)
    half = pld_accountant(0.02, 0.5, 2000)
    assert bound["witness"]["delta_at_epsilon"] == pytest.approx(half.get_delta(bound["inputs"]["epsilon"]), rel=2e-2)
    assert bound["guarantee"] is None and bound["verdict"] == "violated"
    assert any("whichever of the two the code runs" in note for note in bound["notes"])


def test_asgm_claim_reproduces_opacus_rdp() -> None:
    _, bound = bound_of("torch_loop_asgm_len_batch", "DP101")
    assert bound["claimed"]["epsilon_at_delta"] == pytest.approx(opacus_rdp_epsilon(0.005, 1.0, 2000), rel=1e-6)


def test_opacus013_asgm_uses_the_classic_conversion_of_opacus_0x() -> None:
    _, bound = bound_of("opacus013_attach_asgm", "DP101")
    q, steps = 0.01024, bound["inputs"]["steps"]
    orders = [1 + x / 10.0 for x in range(1, 100)] + list(range(12, 64))
    accountant = rdp.RdpAccountant(orders=orders)
    accountant.compose(sgm_event(q, 1.5, steps))
    # classic conversion: eps = min_a rdp_a - log(delta)/(a - 1), from dp_accounting's RDP values
    rdp_values = accountant._rdp  # noqa: SLF001 - the per-order RDP the library computed
    classic = min(r - math.log(1e-5) / (a - 1) for a, r in zip(orders, rdp_values))
    assert 20 * 97 <= steps <= 20 * 98  # 20 epochs of int(1/q) or ceil(N/b) steps
    assert bound["claimed"]["epsilon_at_delta"] == pytest.approx(classic, rel=1e-4)
    assert bound["verdict"] == "violated"


@pytest.mark.parametrize("name, n, batch", [
    ("mnist_opacus_feasgm", 60000, 256),
    ("params_across_modules", 50000, 512),
    ("opacus1_make_private_with_epsilon", 50000, 1024),
])
def test_feasgm_without_divisor_change_is_downgraded_to_info(name: str, n: int, batch: int) -> None:
    finding, bound = bound_of(name, "DP101")
    assert divisor(n - 1, batch) == divisor(n, batch) == divisor(n + 1, batch)
    changes = [m for m in range(n - 200, n + 201)
               if divisor(m - 1, batch) != divisor(m, batch) or divisor(m + 1, batch) != divisor(m, batch)]
    below = [m for m in changes if m < n][-2:]
    above = [m for m in changes if m > n][:2]
    assert bound["divisor"]["nearest_changes"] == below + above
    assert finding.severity is Severity.INFO
    assert f"leaks at N ∈ {{{', '.join(map(str, below + above))}}}" in finding.message
    assert bound["witness"] is None and bound["verdict"] == "consistent"


def test_feasgm_divisor_is_checked_when_the_steps_are_unknown() -> None:
    """The divisor check needs N and the loader only: with the epochs read at run time there
    is no bound, but int(N / floor(N/b)) (drop_last) is still checked at N-1, N, N+1."""
    finding, bound = bound_of("opacus1_drop_last_epochs_from_config_feasgm", "DP101")
    n, batch = 50000, 4096

    def floor_divisor(m: int) -> int:
        return int(m * (1 / (m // batch)))

    assert floor_divisor(n - 1) == floor_divisor(n) == floor_divisor(n + 1) == 4166
    changes = [m for m in range(n - 200, n + 201)
               if floor_divisor(m - 1) != floor_divisor(m) or floor_divisor(m + 1) != floor_divisor(m)]
    below = [m for m in changes if m < n][-2:]
    above = [m for m in changes if m > n][:2]
    assert finding.severity is Severity.INFO
    assert f"leaks at N ∈ {{{', '.join(map(str, below + above))}}}" in finding.message
    assert [m["param"] for m in bound["missing"] if m["assumed"] is None] == ["steps"]
    assert bound["witness"] is None and bound["verdict"] == "unknown"


def test_feasgm_hand_written_int_divisor_is_downgraded() -> None:
    finding, bound = bound_of("torch_loop_feasgm_int_divisor", "DP101")
    assert [int(m * 0.003) for m in (73256, 73257, 73258)] == [219, 219, 219]
    assert finding.severity is Severity.INFO
    assert bound["claimed"]["epsilon_at_delta"] == pytest.approx(rdp_epsilon(0.003, 1.4, 3000, TF_ORDERS), rel=1e-6)


def test_make_private_with_epsilon_reports_target_and_searched_sigma() -> None:
    _, bound = bound_of("opacus1_make_private_with_epsilon", "DP101")
    steps = 15 * int(1 / (1 / 49))
    sigma = bound["inputs"]["sigma"]
    assert bound["inputs"]["target_epsilon"] == 3.0 and bound["inputs"]["epsilon"] == 3.0
    # the searched sigma meets the target within Opacus' tolerance 0.01, by dp_accounting's PLD
    eps = pld_accountant(1 / 49, sigma, steps).get_epsilon(1e-5)
    assert 3.0 - 0.02 <= eps <= 3.0 + 5e-3
    assert "sigma=" in bound["summary"][0]


def test_feasgm_with_divisor_change_has_a_total_leak_witness() -> None:
    finding, bound = bound_of("broken_file_beside_valid", "DP101")
    assert [divisor(m, 200) for m in (59999, 60000, 60001)] == [199, 200, 199]
    gdp = GaussianAccountant()
    gdp.history = [(0.8, 1 / 300, 1800)]
    assert bound["claimed"]["epsilon_at_delta"] == pytest.approx(gdp.get_epsilon(1e-5, poisson=True), rel=1e-4)
    # n T = 25450 x 1800 coordinates with 1 - s = 1/200: the Gaussian scale (1 - s^2) sqrt(m/2)
    # is about 48, so the release is distinguishable with certainty.
    assert bound["witness"]["delta_at_epsilon"] > 0.999
    assert bound["verdict"] == "violated" and finding.severity is Severity.ERROR


def _gaussian_delta(eps: float, mu: float) -> float:
    return float(norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * norm.cdf(-eps / mu - mu / 2))


@pytest.mark.parametrize("name, n, steps, size, accountant", [
    ("opacus014_poisson_easgm", 79510, 7500, 60000, "opacus"),
    ("torch_loop_easgm_expected_batch", 30730, 2000, 50000, "dp_accounting"),
])
def test_easgm_witness_matches_the_gaussian_limit(name: str, n: int, steps: int, size: int, accountant: str) -> None:
    _, bound = bound_of(name, "DP101")
    eps = bound["inputs"]["epsilon"]
    # As s -> 1 over m = n T coordinates the variance pair tends to G_mu, mu = (1 - s^2) sqrt(m/2)
    # with 1 - s = 1/N (the N-1 vs N side is the worse one).
    e = 1 / size
    mu = e * (2 - e) * math.sqrt(n * steps / 2)
    assert bound["witness"]["delta_at_epsilon"] == pytest.approx(_gaussian_delta(eps, mu), rel=5e-2)
    assert bound["verdict"] == "violated"


def test_shuffle_finding_has_witness_guarantee_and_numbers() -> None:
    """shuffle_fixed_batch_rdp: M = 200 batches of 250, 8 epochs, sigma = 1, Opacus RDP. The
    guarantee is sqrt(8)-GDP (closed form, Dong, Roth, Su 2022, Cor. 2.13); the one-epoch witness
    of the max-statistic pair is checked against the same test evaluated with scipy: the Q-side
    tail P(max > t) - e^eps P'(max > t) at the best threshold, the cube bound of Chua et al."""
    _, bound = bound_of("shuffle_fixed_batch_rdp", "DP102")
    rounds, epochs, sigma = 200, 8, 1.0
    assert bound["claimed"]["epsilon_at_delta"] == pytest.approx(opacus_rdp_epsilon(0.005, 1.0, 1600), rel=1e-6)
    mu = math.sqrt(epochs) / sigma
    assert bound["numbers"]["mu"] == pytest.approx(mu, rel=1e-12)
    assert bound["guarantee"]["delta_at_epsilon"] == pytest.approx(
        norm.cdf(-bound["inputs"]["epsilon"] / mu + mu / 2) - math.exp(bound["inputs"]["epsilon"])
        * norm.cdf(-bound["inputs"]["epsilon"] / mu - mu / 2), rel=1e-9)
    assert bound["adjacency"]["relation"] == "zero-out" and bound["sampler"]["kind"] == "shuffle"
    numbers = bound["numbers"]
    assert (numbers["M"], numbers["epochs"]) == (rounds, epochs)
    assert numbers["threshold_sigma"] == pytest.approx(1 / math.sqrt(2 * math.log(rounds)), rel=1e-12)
    caps = np.linspace(0.0, 12.0, 240001)
    eps = bound["inputs"]["epsilon"]
    upper = -np.expm1(norm.logcdf(caps - 2 / sigma) + (rounds - 1) * norm.logcdf(caps))
    lower = -np.expm1(norm.logcdf(caps - 1 / sigma) + (rounds - 1) * norm.logcdf(caps))
    cube = float(np.max(upper - math.exp(eps) * lower))
    one_epoch = bound["witness_one_epoch"]
    assert one_epoch["kind"] == "witness" and one_epoch["label"] == "paper"
    assert one_epoch["delta_at_epsilon"] == pytest.approx(cube, rel=1e-4)
    assert bound["witness"]["epsilon_at_delta"] > one_epoch["epsilon_at_delta"]
    assert one_epoch["epsilon_at_delta"] <= bound["guarantee"]["epsilon_at_delta"]
    assert bound["verdict"] == "violated" and bound["crossing"] is not None


def test_dp104_shares_the_dp102_bound() -> None:
    (_, first), (_, second) = bound_of("opacus1_shuffle_low_noise", "DP102"), bound_of("opacus1_shuffle_low_noise", "DP104")
    assert first == second
    assert first["inputs"]["rounds_per_epoch"] == 100 and first["inputs"]["shuffle_epochs"] == 40


def test_missing_parameters_are_listed_with_advice() -> None:
    _, bound = bound_of("jax_vmap_grad_easgm", "DP101")
    missing = {m["param"]: m for m in bound["missing"]}
    assert bound["verdict"] == "unknown" and bound["claimed"] is None
    assert "N" in missing and missing["N"]["assumed"] is None
    assert missing["N"]["advice"] == "--param N=VALUE  or  [tool.dpcheck.params] N = VALUE"
    assert "--param N=VALUE" in bound["summary"][1]


def test_missing_parameter_supplied_by_param_override() -> None:
    result = scan(ScanOptions(paths=(fixture_project("jax_vmap_grad_easgm"),), use_cache=False, jobs=1,
                              params=_params(N=60000, dim=100)))
    bound = next(f for f in result.findings if f.rule == "DP101").bound
    assert bound is not None and bound["verdict"] in ("violated", "unsupported", "consistent")
    assert bound["inputs"]["N"] == 60000


def _params(**values: float) -> dict:
    from dpcheck.config import parse_cli_params

    return parse_cli_params([f"{k}={v}" for k, v in values.items()])


def test_dp105_carries_the_claim_only() -> None:
    _, bound = bound_of("opacus_unpinned", "DP105")
    steps = 3 * int(1 / (1 / math.ceil(60000 / 256)))
    assert bound["verdict"] == "unknown" and bound["witness"] is None and bound["guarantee"] is None
    assert bound["crossing"] is None and bound["computation"]["guarantee"] is None
    assert bound["claimed"]["epsilon_at_delta"] == pytest.approx(
        opacus_rdp_epsilon(1 / math.ceil(60000 / 256), 1.0, bound["inputs"]["steps"]), rel=1e-6)
    assert bound["inputs"]["steps"] in (steps, 3 * math.ceil(60000 / 256))


def test_scan_plot_dir_writes_one_png_per_finding(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from dpcheck.cli import main

    fixture = fixture_project("torch_loop_asgm_len_batch")
    main(["scan", str(fixture), "--no-cache", "-q", "--plot-dir", str(tmp_path / "plots")])
    capsys.readouterr()
    (finding,) = findings("torch_loop_asgm_len_batch")
    png = tmp_path / "plots" / f"{finding.fingerprint}.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert [p.name for p in (tmp_path / "plots").iterdir()] == [png.name]


def test_text_report_prints_the_summary_verbatim(capsys: pytest.CaptureFixture[str]) -> None:
    from dpcheck.cli import main

    main(["scan", str(fixture_project("torch_loop_asgm_len_batch")), "--no-cache", "-q"])
    out = capsys.readouterr().out
    _, bound = bound_of("torch_loop_asgm_len_batch", "DP101")
    for line in bound["summary"]:
        assert f"  = bound: {line}" in out


def test_low_noise_shuffle_bound_has_no_nan() -> None:
    """TF-Privacy at sigma = 0.15 claims eps ~ 1.39e4; e^eps overflows, and the max-test witness's
    delta there is 1 - f_sub(0) = 0 (it used to read NaN)."""
    _, bound = bound_of("absl_flags_keras_low_noise", "DP102")
    json.dumps(bound, allow_nan=False)
    assert bound["claimed"]["epsilon_at_delta"] > 709 and bound["witness"]["delta_at_epsilon"] == 0.0
    assert not any("nan" in line for line in bound["summary"])


@pytest.mark.parametrize("param, expected", [
    ({"sigma": 1e-300}, "sigma must be >= 0.001"),
    ({"epochs": 1e14}, "above 2^53"),
])
def test_uncomputable_parameters_give_a_named_reason_fast(param: dict, expected: str) -> None:
    start = time.perf_counter()
    result = scan(ScanOptions(paths=(fixture_project("mnist_opacus_feasgm"),), use_cache=False, jobs=1,
                              params=_params(**param)))
    assert time.perf_counter() - start < 10.0
    bound = next(f for f in result.findings if f.rule == "DP101").bound
    assert bound is not None and bound["verdict"] == "unknown"
    assert expected in bound["summary"][0] and "Numerical result" not in bound["summary"][0]
