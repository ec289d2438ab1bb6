"""The installed Opacus 1.x optimizer, run for real on the worst-case pair."""

from __future__ import annotations

import pytest
import torch
from scipy.stats import ks_2samp

from dpcheck.audit.mechanisms import simulate_reference
from dpcheck.audit.opacus_adapter import loader_batch_size, run_opacus
from dpcheck.audit.runner import AuditOptions, run_audit
from dpcheck.audit.setting import AuditSetting
from dpcheck.errors import ParameterError

opacus = pytest.importorskip("opacus")
CPU = torch.device("cpu")
# Wang, Cui, Cui, Yuan 2026, Appendix A.3: q = 0.5, |D| = 3, |D'| = 4, sigma = 10, C = 0.1; Opacus
# 1.x divides by 1 vs 2.
APPENDIX_A3 = AuditSetting("FEASGM", 3, 0.5, 10.0, 0.1, 100)


def test_opacus_feasgm_reproduces_the_appendix_a3_violation() -> None:
    result = run_audit(APPENDIX_A3, AuditOptions(implementation="opacus", trials=1000, seed=0))
    report = result.to_json()
    assert report["verdict"] == "violation"
    assert report["inputs"]["implementation_version"] == f"opacus {opacus.__version__}"
    assert report["epsilon_lower"] > report["claimed"]["epsilon_at_delta"]


def test_opacus_releases_have_the_reference_law() -> None:
    null_o, alt_o, _ = run_opacus(APPENDIX_A3, 1000, 7, CPU)
    gen = torch.Generator().manual_seed(8)
    null_r = simulate_reference(APPENDIX_A3, False, 1000, gen, CPU)
    alt_r = simulate_reference(APPENDIX_A3, True, 1000, gen, CPU)
    for opacus_stats, reference in ((null_o, null_r), (alt_o, alt_r)):
        assert ks_2samp(opacus_stats.first, reference.first).pvalue > 1e-3
        assert ks_2samp(opacus_stats.sq_norm, reference.sq_norm).pvalue > 1e-3
    # And the two worlds really differ (divisor 1 vs 2 quarters the noise energy).
    assert alt_o.sq_norm.mean() < 0.5 * null_o.sq_norm.mean()


def test_opacus_sum_reduction_is_sgm_and_passes_its_claim() -> None:
    setting = AuditSetting("SGM", 3, 0.5, 10.0, 0.1, 100)
    result = run_audit(setting, AuditOptions(implementation="opacus", trials=1000, seed=1))
    assert result.verdict == "no violation"


def test_mechanisms_opacus_does_not_implement_are_refused() -> None:
    with pytest.raises(ParameterError, match="not EASGM"):
        run_opacus(AuditSetting("EASGM", 3, 0.5, 10.0, 0.1, 4), 10, 0, CPU)


def test_loader_batch_size_reaches_q_on_both_datasets() -> None:
    assert loader_batch_size(APPENDIX_A3) == 2
    with pytest.raises(ParameterError, match="1/L"):
        loader_batch_size(AuditSetting("FEASGM", 9, 0.3, 1.0, 1.0, 2))
    with pytest.raises(ParameterError, match="no DataLoader batch size"):
        loader_batch_size(AuditSetting("SGM", 1, 0.5, 1.0, 1.0, 2))
