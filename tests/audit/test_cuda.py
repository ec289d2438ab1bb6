"""The CUDA path (runs only where torch sees a GPU): same laws and verdicts as on CPU."""

from __future__ import annotations

import pytest
import torch
from scipy.stats import ks_2samp

from dpcheck.audit.mechanisms import simulate_reference
from dpcheck.audit.runner import AuditOptions, run_audit
from dpcheck.audit.setting import AuditSetting

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")


@pytest.mark.parametrize("mechanism", ["ASGM", "EASGM", "FEASGM"])
def test_cuda_releases_have_the_cpu_law(mechanism: str) -> None:
    setting = AuditSetting(mechanism, 3, 0.5, 2.0, 0.1, 1000)
    cuda, cpu = torch.device("cuda"), torch.device("cpu")
    for with_canary in (False, True):
        on_gpu = simulate_reference(setting, with_canary, 4000,
                                    torch.Generator(device=cuda).manual_seed(1), cuda)
        on_cpu = simulate_reference(setting, with_canary, 4000,
                                    torch.Generator().manual_seed(2), cpu)
        assert ks_2samp(on_gpu.first, on_cpu.first).pvalue > 1e-3
        assert ks_2samp(on_gpu.sq_norm, on_cpu.sq_norm).pvalue > 1e-3


def test_cuda_audit_verdicts() -> None:
    leak = run_audit(AuditSetting("EASGM", 4, 0.5, 10.0, 0.1, 100),
                     AuditOptions(trials=2000, device="cuda"))
    assert leak.verdict == "violation"
    for seed in range(3):
        null = run_audit(AuditSetting("SGM", 4, 0.5, 1.0, 0.1, 10),
                         AuditOptions(trials=3000, device="cuda", seed=seed))
        assert null.verdict == "no violation"
