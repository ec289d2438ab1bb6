"""`dpcheck bound` at the edges (docs/theory.md#verdicts): parameters outside what
can be computed exit 2 naming the parameter, the sigma search always ends, conflicting flags are
refused, and the claimed object reads eps and delta off one accountant."""

from __future__ import annotations

import json
import math
import time

import dp_accounting
import pytest
from dp_accounting import rdp as dp_rdp
from scipy.stats import norm

from dpcheck.bounds.claimed import opacus_sigma
from dpcheck.bounds.profiles import CurveProfile
from dpcheck.cli import main
from dpcheck.errors import ParameterError
from dpcheck.privacy.rdp import OPACUS_ORDERS
from dpcheck.privacy.shuffle import f_sub


def run_error(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(["bound", *args]) == 2
    err = capsys.readouterr().err
    assert "internal error" not in err and "Traceback" not in err
    return err


def run_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    assert main(["bound", *args, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("sigma", ["1e-160", "1e-300", "0.0005"])
def test_tiny_sigma_exits_2_naming_sigma_and_the_floor(capsys: pytest.CaptureFixture[str], sigma: str) -> None:
    err = run_error(capsys, "sgm", "--sigma", sigma, "--q", "0.01", "--steps", "10")
    assert "sigma must be >= 0.001" in err and "no privacy" in err and "34" not in err


def test_long_runs_are_computed_and_say_how(capsys: pytest.CaptureFixture[str]) -> None:
    """10^8 rounds used to be refused; the PLD composition costs 2 log2 T products on a bounded
    grid (the cost is recorded in bench/RESULTS.md, not timed here)."""
    out = run_json(capsys, "sgm", "--sigma", "1", "--q", "1e-6", "--steps", "100000000")
    assert out["computation"]["claimed"].startswith("curve: PLD of T=100,000,000 rounds: 37 FFT products")
    assert 0.0 < out["claimed"]["epsilon_at_delta"] < 1.0


def test_rounds_beyond_2_53_exit_2_naming_the_derived_steps(capsys: pytest.CaptureFixture[str]) -> None:
    err = run_error(capsys, "feasgm", "--sigma", "1", "--batch-size", "256", "--N", "60000", "--epochs", "1e14",
                    "--opacus-divisor")
    assert "steps T=" in err and "epochs" in err and "2^53" in err


def test_sigma_and_target_epsilon_are_mutually_exclusive(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["bound", "sgm", "--target-epsilon", "1", "--sigma", "2", "--q", "0.01", "--steps", "10"])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "--sigma" in err and "--target-epsilon" in err and "not allowed" in err


def test_sigma_search_ends_where_epsilon_jumps_over_the_target() -> None:
    """epsilon(sigma) = 1/sigma above 0.05 and inf below (a delta the infinity mass alone
    exceeds): no sigma gets within 0.01 of the target 1e4, which made the bisection endless.
    It now stops on a 1e-6 bracket at the smallest sigma whose epsilon is below the target."""
    sigma = opacus_sigma(1e4, 1e-5, 0.01, 1000, lambda s: 1.0 / s if s >= 0.05 else math.inf)
    assert sigma == pytest.approx(0.05, rel=1e-5) and sigma >= 0.05


def test_sigma_search_below_the_floor_is_a_parameter_error() -> None:
    with pytest.raises(ParameterError, match="target epsilon 1e\\+07 needs a sigma below 0.001"):
        opacus_sigma(1e7, 1e-5, 0.01, 1000, lambda s: 1.0 / s**2)


@pytest.mark.slow
def test_huge_target_epsilon_search_takes_seconds(capsys: pytest.CaptureFixture[str]) -> None:
    start = time.perf_counter()
    out = run_json(capsys, "sgm", "--target-epsilon", "1e4", "--q", "0.01", "--steps", "1000")
    assert time.perf_counter() - start < 15.0
    assert out["claimed"]["epsilon_at_delta"] <= 1e4


def _rdp_accountant(q: float, sigma: float, steps: int) -> dp_rdp.RdpAccountant:
    accountant = dp_rdp.RdpAccountant(list(OPACUS_ORDERS))
    accountant.compose(dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma)), steps))
    return accountant


def test_rdp_claim_reads_delta_off_the_rdp_curve_too(capsys: pytest.CaptureFixture[str]) -> None:
    """Opacus RDP at q=0.01, sigma=1, T=1000 prints eps = 2.10 at delta = 1e-5; delta at that eps
    is then 1e-5 (same curve), where the exact SGM curve would give 1.2e-6. At eps = 3 the value is
    dp_accounting's RDP delta with Opacus' orders."""
    printed = run_json(capsys, "sgm", "--sigma", "1", "--q", "0.01", "--steps", "1000", "--accountant", "opacus-rdp")
    claimed = printed["claimed"]
    assert claimed["epsilon_at_delta"] == pytest.approx(_rdp_accountant(0.01, 1.0, 1000).get_epsilon(1e-5), rel=1e-6)
    assert claimed["delta_at_epsilon"] == pytest.approx(1e-5, rel=1e-6)
    at_three = run_json(capsys, "sgm", "--sigma", "1", "--q", "0.01", "--steps", "1000", "--accountant",
                        "opacus-rdp", "--epsilon", "3")["claimed"]
    assert at_three["delta_at_epsilon"] == pytest.approx(_rdp_accountant(0.01, 1.0, 1000).get_delta(3.0), rel=1e-6)


@pytest.mark.parametrize("accountant", ["opacus-gdp", "tf-privacy-gdp"])
def test_gdp_claim_reads_delta_off_the_clt_curve(capsys: pytest.CaptureFixture[str], accountant: str) -> None:
    """Both libraries' GDP accountants use the Poisson CLT mu = q sqrt(T (e^(1/sigma^2) - 1))."""
    claimed = run_json(capsys, "sgm", "--sigma", "1", "--q", "0.01", "--steps", "1000", "--accountant", accountant,
                       "--epsilon", "1")["claimed"]
    mu = 0.01 * math.sqrt(1000 * math.expm1(1.0))
    closed = norm.cdf(-1 / mu + mu / 2) - math.e * norm.cdf(-1 / mu - mu / 2)
    assert claimed["delta_at_epsilon"] == pytest.approx(closed, rel=1e-9)


def test_gdp_claim_with_overflowing_clt_mu_is_infinite(capsys: pytest.CaptureFixture[str]) -> None:
    """sigma = 0.03: e^(1/sigma^2) overflows, so the CLT mu is inf and Opacus' GDP eps is inf."""
    claimed = run_json(capsys, "sgm", "--sigma", "0.03", "--q", "0.01", "--steps", "10", "--accountant",
                       "opacus-gdp", "--epsilon", "1")["claimed"]
    assert claimed["epsilon_at_delta"] == "inf" and claimed["delta_at_epsilon"] == 1.0
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("eps", [709.0, 710.0, 1.39e4, math.inf])
def test_max_test_witness_profile_has_no_nan(eps: float) -> None:
    """Past e^709 only alpha = 0 counts: delta = 1 - f_sub(0) (= 0: the max test at alpha = 0
    never rejects)."""
    profile = CurveProfile(lambda a: f_sub(a, 100, 0.15))
    assert float(profile.delta(eps)[0]) == pytest.approx(1.0 - float(f_sub(0.0, 100, 0.15)[0]), abs=1e-15)
