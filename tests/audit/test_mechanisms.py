"""Reference releases: moments against closed forms, clipping, chunking (whole rows and within
a row), devices."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from dpcheck.audit.mechanisms import clip_factors, column_blocks, simulate_reference
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


def test_clip_factors_scale_long_rows_only() -> None:
    rows = torch.tensor([[3.0, 4.0], [0.3, 0.4]])
    clipped = rows * clip_factors(rows.square().sum(dim=1), 1.0).unsqueeze(1)
    assert torch.allclose(clipped, torch.tensor([[0.6, 0.8], [0.3, 0.4]]))


@pytest.mark.parametrize("dim,rows,budget", [(10, 1, 3), (10, 4, 100), (7, 1, 1), (5, 1, 64)])
def test_column_blocks_cover_the_row_within_the_budget(dim: int, rows: int, budget: int) -> None:
    blocks = column_blocks(dim, rows, budget)
    assert [c for block in blocks for c in block] == list(range(dim))
    assert all(rows * len(block) <= max(budget, rows) for block in blocks)


@pytest.mark.parametrize("chunk_elements", [1 << 23, 3, 1])
def test_signal_and_clipping_survive_column_blocks(chunk_elements: int) -> None:
    # q = 1, N = 2, sigma -> 0: D' always releases (2C - C)/3 on e1 and nothing elsewhere, with
    # the raw norm 2C clipped to C across the whole row, whichever block holds e1.
    setting = AuditSetting("ASGM", 2, 1.0, 1e-6, 1.0, 10)
    alt = simulate_reference(setting, True, 5, torch.Generator().manual_seed(0), CPU,
                             chunk_elements)
    assert np.allclose(alt.first, 1 / 3, atol=1e-5)
    assert np.allclose(alt.sq_norm, 1 / 9, atol=1e-5)


def test_a_row_longer_than_the_budget_has_the_noise_law() -> None:
    # n = 1,000,003 coordinates drawn in 31 column blocks of 2**15: ||x||^2 / n ~ sigma^2 C^2
    # with standard deviation sigma^2 C^2 sqrt(2 / n) (SGM, q = 1, N = 1, signal C on e1).
    dim, sigma = 1_000_003, 2.0
    setting = AuditSetting("SGM", 1, 1.0, sigma, 1.0, dim)
    null = simulate_reference(setting, False, 4, torch.Generator().manual_seed(3), CPU, 1 << 15)
    per_coordinate = (null.sq_norm - null.first**2) / (dim - 1)
    assert np.all(np.abs(per_coordinate - sigma**2) < 5 * sigma**2 * np.sqrt(2 / dim))
    assert _z(null.first, 1.0, sigma**2) < 5


def test_feasgm_with_a_zero_floor_is_refused() -> None:
    with pytest.raises(ParameterError, match="floor"):
        AuditSetting("FEASGM", 1, 0.5, 1.0, 1.0, 3)


@pytest.mark.parametrize(
    "field,value",
    [("q", 0.0), ("q", 1.5), ("q", float("nan")), ("sigma", -1.0), ("clip", 0.0), ("dim", 0),
     ("N", 0), ("N", 10**12)],
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
