"""`dpcheck bound`: JSON shape, verdicts, parameter errors and the plot, run through the CLI."""

from __future__ import annotations

import json
import math
from pathlib import Path

import dp_accounting
import pytest
from dp_accounting import pld
from opacus.accountants.utils import get_noise_multiplier

from dpcheck.bounds.claimed import accountant_model, opacus_sigma
from dpcheck.cli import main


def run_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    assert main(["bound", *args, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_sgm_json_shape_and_dp_accounting_agreement(capsys: pytest.CaptureFixture[str]) -> None:
    out = run_json(capsys, "sgm", "--sigma", "1", "--q", "0.01", "--steps", "1000")
    assert set(out) >= {"mechanism", "inputs", "claimed", "witness", "guarantee", "verdict"}
    claimed = out["claimed"]
    assert [p["alpha"] for p in claimed["curve"]] == [1e-3, 1e-2, 0.05, 0.1, 0.25, 0.5]
    for key in ("label", "kind", "epsilon_at_delta", "delta_at_epsilon", "notes", "valid"):
        assert key in claimed
    # docs/theory.md#sgm-pld: the exact value is 1.8282; dp_accounting's PLD accountant as the
    # oracle
    accountant = pld.PLDAccountant(value_discretization_interval=1e-4)
    accountant.compose(dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(0.01, dp_accounting.GaussianDpEvent(1.0)), 1000))
    assert claimed["epsilon_at_delta"] == pytest.approx(accountant.get_epsilon(1e-5), abs=2e-3)
    assert out["witness"] is None and out["verdict"] == "consistent"


def test_alpha_option_selects_the_curve_points(capsys: pytest.CaptureFixture[str]) -> None:
    out = run_json(capsys, "sgm", "--sigma", "1", "--q", "0.01", "--steps", "100", "--alpha", "0.2", "--alpha", "0.3")
    assert [p["alpha"] for p in out["guarantee"]["curve"]] == [0.2, 0.3]


def test_asgm_is_violated(capsys: pytest.CaptureFixture[str]) -> None:
    out = run_json(capsys, "asgm", "--sigma", "1", "--q", "0.01", "--steps", "500", "--accountant", "opacus-rdp")
    assert out["verdict"] == "violated" and out["witness"]["label"] == "own"
    assert out["witness"]["epsilon_at_delta"] > out["claimed"]["epsilon_at_delta"]


def test_feasgm_divisor_report(capsys: pytest.CaptureFixture[str]) -> None:
    out = run_json(capsys, "feasgm", "--sigma", "1", "--batch-size", "256", "--N", "60000", "--epochs", "1",
                   "--opacus-divisor", "--dim", "1000")
    assert out["divisor"]["code"] == [255.0, 255.0, 255.0] and out["divisor"]["changes"] is False
    assert out["verdict"] == "consistent"


def test_easgm_small_setting_has_witness_and_guarantee(capsys: pytest.CaptureFixture[str]) -> None:
    out = run_json(capsys, "easgm", "--sigma", "2", "--q", "0.5", "--N", "4", "--steps", "1", "--dim", "50",
                   "--epsilon", "0.5")
    assert out["witness"]["kind"] == "witness" and out["guarantee"]["label"] == "reconstructed"
    for w, g in zip(out["witness"]["curve"], out["guarantee"]["curve"]):
        assert g["beta"] <= w["beta"] + 1e-6  # guarantee <= truth <= witness
    assert out["verdict"] == "violated"


def test_shuffle_report_carries_witness_guarantee_and_numbers(capsys: pytest.CaptureFixture[str]) -> None:
    """M = 200 shuffled batches, 8 epochs at sigma = 1: the Poisson PLD claim (eps ~ 1.3) is
    crossed by the 8-epoch max-statistic witness (Chua et al. found such gaps); the guarantee is
    sqrt(8)-GDP. Every number the text prints is a JSON field."""
    out = run_json(capsys, "shuffle", "--sigma", "1", "--batch-size", "250", "--N", "50000", "--epochs", "8")
    assert out["inputs"]["rounds_per_epoch"] == 200 and out["inputs"]["sampler"] == "shuffle"
    assert out["verdict"] == "violated"
    assert out["adjacency"]["relation"] == "zero-out"
    numbers = out["numbers"]
    assert numbers["M"] == 200 and numbers["epochs"] == 8 and numbers["mu"] == pytest.approx(math.sqrt(8))
    assert set(numbers) >= {"threshold_sigma", "kappa_sub", "separation", "kappa_closed_form"}
    assert out["witness_one_epoch"]["epsilon_at_delta"] < out["witness"]["epsilon_at_delta"]
    assert out["witness"]["epsilon_at_delta"] < out["guarantee"]["epsilon_at_delta"]
    crossing = out["crossing"]
    assert 0.0 < crossing["alpha"] < 1.0 and crossing["beta_witness"] < crossing["beta_claimed"]
    assert set(out["computation"]) == {"claimed", "witness", "guarantee"}
    assert out["computation"]["guarantee"].startswith("closed form")


def test_shuffle_paper_setting_runs(capsys: pytest.CaptureFixture[str]) -> None:
    """The shuffle paper's own setting: M = N = 1.14e6 rounds of batch size 1, one epoch. It was
    refused (T > 1e6); the claim's PLD, the witness and the GDP guarantee do not grow with T."""
    out = run_json(capsys, "shuffle", "--N", "1140000", "--batch-size", "1", "--sigma", "1", "--epochs", "1")
    assert out["numbers"]["M"] == 1_140_000 and out["inputs"]["steps"] == 1_140_000
    assert out["guarantee"]["epsilon_at_delta"] == pytest.approx(4.377178096, rel=1e-7)  # docs/theory.md#gaussian-dp
    assert "PLD of T=1,140,000 rounds" in out["computation"]["claimed"]
    assert out["witness"]["epsilon_at_delta"] <= out["claimed"]["epsilon_at_delta"]


@pytest.mark.parametrize("sampler, witness, guarantee", [
    ("sequential", "standard", "standard"),
    ("buffered-shuffle", "paper", "standard"),
    ("shuffled-or-sequential", "paper", "standard"),
    ("balls-and-bins", "paper", "standard"),
    ("fixed-subsets", None, "standard"),
    ("with-replacement", None, None),
])
def test_every_sampler_gets_its_bound(capsys: pytest.CaptureFixture[str], sampler: str, witness: str | None,
                                      guarantee: str | None) -> None:
    out = run_json(capsys, "shuffle", "--sigma", "1", "--batch-size", "250", "--N", "50000", "--epochs", "4",
                   "--sampler", sampler)
    assert out["sampler"]["kind"] == sampler
    assert (out["witness"] or {}).get("label") == witness
    assert (out["guarantee"] or {}).get("label") == guarantee
    if guarantee is None:
        assert out["verdict"] == "unsupported" and any("no valid accountant" in n for n in out["notes"])


@pytest.mark.parametrize("args, word", [
    (["sgm", "--sigma", "0", "--q", "0.1", "--steps", "10"], "sigma"),
    (["sgm", "--sigma", "1", "--q", "1.5", "--steps", "10"], "q"),
    (["sgm", "--sigma", "1", "--q", "0", "--steps", "10"], "q"),
    (["easgm", "--sigma", "1", "--q", "0.1", "--steps", "10", "--N", "100", "--dim", "0"], "dim"),
    (["easgm", "--sigma", "1", "--q", "0.1", "--steps", "10", "--N", "1"], "N"),
    (["shuffle", "--sigma", "1", "--batch-size", "200", "--N", "100", "--epochs", "1"], "batch size"),
    (["sgm", "--sigma", "1", "--q", "0.1", "--steps", "10", "--delta", "1"], "delta"),
    (["sgm", "--sigma", "1", "--q", "0.1", "--steps", "10", "--delta", "0"], "delta"),
    (["sgm", "--sigma", "1", "--q", "0.1", "--steps", "10", "--sampler", "sequential"], "--sampler"),
])
def test_bad_parameters_exit_2_naming_them(args: list[str], word: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bound", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dpcheck: error: ") and word in err and "Traceback" not in err


def test_text_output_is_readable(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bound", "asgm", "--sigma", "1", "--q", "0.01", "--steps", "200"]) == 0
    text = capsys.readouterr().out
    assert "verdict: violated" in text and "β(0.001)=" in text and "witness: ASGM witness" in text


def test_plot_writes_a_png(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import matplotlib.image

    target = tmp_path / "bound.png"
    assert main(["bound", "asgm", "--sigma", "1", "--q", "0.01", "--steps", "200", "--plot", str(target)]) == 0
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    height, width = matplotlib.image.imread(target).shape[:2]
    assert width > 800 and height > 400


@pytest.mark.parametrize("target, q, epochs", [(3.0, 0.02, 10), (1.0, 0.004, 5)])
def test_sigma_search_matches_opacus_rdp(target: float, q: float, epochs: int) -> None:
    steps = int(epochs / q)
    model = accountant_model("opacus-rdp", "1.4.0")
    ours = opacus_sigma(target, 1e-5, q, steps, lambda s: model.epsilon(q, s, steps, 1e-5))
    theirs = get_noise_multiplier(target_epsilon=target, target_delta=1e-5, sample_rate=q, epochs=epochs,
                                  accountant="rdp")
    assert math.isclose(ours, theirs, rel_tol=1e-9)


def test_dp101_worked_example_numbers_match_the_engine(capsys: pytest.CaptureFixture[str]) -> None:
    from dpcheck.catalog import load_catalog

    rationale = load_catalog().get("DP101").rationale
    out = run_json(capsys, "asgm", "--sigma", "1.1", "--q", str(256 / 60000), "--steps", "2343",
                   "--accountant", "opacus-rdp")
    assert f"prints ε = {out['claimed']['epsilon_at_delta']:.2f}" in rationale
    assert f"needs ε = {out['witness']['epsilon_at_delta']:.2f}" in rationale
    assert f"gives δ = {out['witness']['delta_at_epsilon']:.2f}" in rationale


def test_plot_labels_the_claimed_curve_as_the_exact_sgm_curve() -> None:
    from dpcheck.bounds.plot import legend_label
    from dpcheck.bounds.report import build_report
    from dpcheck.bounds.request import BoundRequest

    report = build_report(BoundRequest(mechanism="asgm", sigma=1.0, q=0.01, steps=200, accountant="opacus-rdp"))
    label = legend_label("claimed", report.claimed)
    assert label.startswith("claimed: SGM+Poisson, exact PLD curve")
    assert "ε printed by Opacus RDP" in label and not label.startswith("claimed: Opacus RDP")


def test_plot_cuts_the_pld_floor_but_not_the_mechanism() -> None:
    """δ(ε) of the exact SGM curve falls and then sits on the PLD's numerical floor; the plot
    keeps the fall and drops the floor. A (0, δ) guarantee is flat by nature and stays whole."""
    import numpy as np

    from dpcheck.bounds.plot import NUMERICAL_FLOOR, drawn_profile
    from dpcheck.bounds.report import build_report
    from dpcheck.bounds.request import BoundRequest

    report = build_report(BoundRequest(mechanism="shuffle", sigma=1.1, q=256 / 60000, steps=2343,
                                       n_records=60000, batch_size=256, accountant="opacus-rdp"))
    eps = np.linspace(0.0, 3 * report.claim.epsilon, 121)
    deltas = np.asarray(report.claimed.source.delta(eps), dtype=float)
    floor = deltas[-1]
    assert floor < NUMERICAL_FLOOR and abs(deltas[-2] - floor) < 1e-3 * floor  # it does flatten
    x, y = drawn_profile(eps, deltas)
    assert 0 < len(x) < len(eps) and y.min() >= 10 * floor
    assert x.max() > report.claim.epsilon  # drawn past the claimed ε
    assert np.all(np.diff(y) < 0)  # what is drawn only falls
    flat = np.full(50, 0.12)
    assert drawn_profile(eps[:50], flat)[1].tolist() == flat.tolist()
    falling = np.geomspace(1e-1, 1e-20, 50)
    assert len(drawn_profile(eps[:50], falling)[0]) == 50
