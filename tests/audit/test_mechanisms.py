"""Reference releases: moments against closed forms, clipping, chunking, devices."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from dpcheck.audit.mechanisms import clip_rows, simulate_reference
from dpcheck.audit.releases import resolve_device
from dpcheck.audit.setting import AuditSetting
from dpcheck.errors import DpcheckError, ParameterError

CPU = torch.device("cpu")
TRIALS = 20_000


def _z(sample: np.ndarray, mean: float, var: float) -> float:
    return abs(sample.mean() - mean) / np.sqrt(var / len(sample))


@pytest.mark.parametrize("chunk_elements", [1 << 23, 7 * 50])
def test_easgm_release_moments(chunk_elements: int) -> None:
    # D: x1 = (k C + sigma C Z) / (N q), k ~ Bin(4, 1/2);
    # D': x1 = ((k - j) C + sigma C Z) / ((N+1) q), j ~ Bern(1/2).
    setting = AuditSetting("EASGM", 4, 0.5, 10.0, 0.1, 50)
    gen = torch.Generator().manual_seed(5)
    null = simulate_reference(setting, False, TRIALS, gen, CPU, chunk_elements)
    alt = simulate_reference(setting, True, TRIALS, gen, CPU, chunk_elements)
    c, s = 0.1, 10.0
    var_null = (c**2 * 1.0 + (s * c) ** 2) / 2.0**2
    assert _z(null.first, c, var_null) < 5
    var_alt = (c**2 * (1.0 + 0.25) + (s * c) ** 2) / 2.5**2
    assert _z(alt.first, 1.5 * c / 2.5, var_alt) < 5
    # The other 49 coordinates are pure noise of std sigma*C/divisor.
    rest = null.sq_norm - null.first**2
    assert _z(rest, 49 * (s * c / 2.0) ** 2, 2 * 49 * (s * c / 2.0) ** 4) < 5
    assert len(null) == len(alt) == TRIALS


def test_asgm_divides_by_the_realized_batch_and_empty_batch_by_one() -> None:
    # q = 1, N = 2: D always has |B| = 2; D' always has |B| = 3 with the canary inside.
    setting = AuditSetting("ASGM", 2, 1.0, 1.0, 1.0, 4)
    gen = torch.Generator().manual_seed(1)
    null = simulate_reference(setting, False, TRIALS, gen, CPU)
    alt = simulate_reference(setting, True, TRIALS, gen, CPU)
    assert _z(null.first, 1.0, 1 / 4) < 5
    assert _z(alt.first, 1 / 3, 1 / 9) < 5
    assert setting.divisors(3).tolist() == [1.0, 1.0, 2.0, 3.0]


def test_clip_rows_scales_long_rows_only() -> None:
    rows = torch.tensor([[3.0, 4.0], [0.3, 0.4]])
    clipped = clip_rows(rows, 1.0)
    assert torch.allclose(clipped, torch.tensor([[0.6, 0.8], [0.3, 0.4]]))


def test_feasgm_with_a_zero_floor_is_refused() -> None:
    with pytest.raises(ParameterError, match="floor"):
        AuditSetting("FEASGM", 1, 0.5, 1.0, 1.0, 3)


@pytest.mark.parametrize(
    "field,value", [("q", 0.0), ("q", 1.5), ("sigma", -1.0), ("clip", 0.0), ("dim", 0), ("N", 0)]
)
def test_bad_parameters_name_the_option(field: str, value: float) -> None:
    values = {"N": 4, "q": 0.5, "sigma": 1.0, "clip": 1.0, "dim": 3, field: value}
    with pytest.raises(ParameterError, match=f"--{field}"):
        AuditSetting("EASGM", **values)  # type: ignore[arg-type]


def test_cuda_request_without_cuda_is_a_clear_error() -> None:
    if torch.cuda.is_available():
        assert resolve_device("cuda").type == "cuda"
    else:
        with pytest.raises(DpcheckError, match="CUDA is not available"):
            resolve_device("cuda")
