"""Reference SGM / ASGM / EASGM / FEASGM in torch, run as real n-dimensional releases.

Each trial draws a Poisson batch (every record independently with probability q, the canary
too in D′), clips the per-sample gradients to norm C, adds N(0, σ²C² I_n) to their sum and
divides by the mechanism's divisor (docs/theory.md#update-rules). The records of D share one
gradient, so the sampled records are counted directly: k ~ Bin(N, q) is exactly the law of the
Poisson batch size, and the canary's inclusion is an independent Bernoulli(q).

Memory is bounded by ``chunk_elements`` whatever n and the trial count are: trials are batched
into blocks of whole rows while a row fits, and a longer row is generated in column blocks,
each reduced to its share of (x₁, ‖x‖²) before the next is drawn (:mod:`releases`). The
gradients live on e₁, so the clipped sum is added to column 0 alone; the other n−1 coordinates
are pure noise. The float64 reduction briefly holds a double-width copy of a block, so the peak
is about three times ``chunk_elements`` float32 coordinates.
"""

from __future__ import annotations

import torch

from dpcheck.audit.releases import ReleaseStats, squared_norms
from dpcheck.audit.setting import RAW_GRADIENT_NORM_FACTOR, AuditSetting

CHUNK_ELEMENTS: dict[str, int] = {"cpu": 1 << 23, "cuda": 1 << 28}
"""Release coordinates held at once: 32 MiB of float32 on CPU, 1 GiB on a GPU."""


def worst_case_gradients(
    setting: AuditSetting, device: torch.device, columns: range | None = None
) -> torch.Tensor:
    """Raw (unclipped) gradients on ``columns`` (default: all n), shape (2, len(columns)):
    row 0 for every record of D, row 1 the canary. Both vanish off e₁."""
    columns = range(setting.dim) if columns is None else columns
    grads = torch.zeros(2, len(columns), device=device)
    if 0 in columns:
        grads[0, 0] = RAW_GRADIENT_NORM_FACTOR * setting.clip
        grads[1, 0] = -RAW_GRADIENT_NORM_FACTOR * setting.clip
    return grads


def clip_factors(sq_norms: torch.Tensor, clip: float) -> torch.Tensor:
    """Flat per-sample clipping: the factor min(1, C/‖g‖) for each row of squared norm ‖g‖²."""
    return torch.clamp(clip / sq_norms.sqrt(), max=1.0)


def clipped_signal(setting: AuditSetting, device: torch.device) -> torch.Tensor:
    """The clipped gradients' e₁ coordinates, shape (2,): record, canary. The gradients vanish
    off e₁, so their norms (hence the clipping) and the clipped sum live in column 0 alone."""
    raw = worst_case_gradients(setting, device, range(1))
    return (raw * clip_factors(raw.square().sum(dim=1), setting.clip).unsqueeze(1))[:, 0]


def column_blocks(dim: int, rows: int, budget: int) -> list[range]:
    """Split n coordinates into ranges of at most ``budget // rows`` (at least one) columns."""
    width = max(1, min(dim, budget // rows))
    return [range(start, min(start + width, dim)) for start in range(0, dim, width)]


def simulate_reference(
    setting: AuditSetting,
    with_canary: bool,
    trials: int,
    generator: torch.Generator,
    device: torch.device,
    chunk_elements: int | None = None,
) -> ReleaseStats:
    """Run ``trials`` independent one-step releases on D (or on D′ when ``with_canary``).

    ``chunk_elements`` bounds the coordinates held at once (default: per device type)."""
    data_size = setting.N + int(with_canary)
    divisors = torch.as_tensor(setting.divisors(data_size), dtype=torch.float32, device=device)
    budget = chunk_elements if chunk_elements is not None else CHUNK_ELEMENTS[device.type]
    rows_per_chunk = max(1, budget // setting.dim)
    blocks = column_blocks(setting.dim, rows_per_chunk, budget)
    signal = clipped_signal(setting, device)
    parts: list[ReleaseStats] = []
    done = 0
    while done < trials:
        rows = min(rows_per_chunk, trials - done)
        parts.append(
            _release_chunk(setting, with_canary, rows, blocks, signal, divisors, generator)
        )
        done += rows
    return ReleaseStats.concat(parts)


def _release_chunk(
    setting: AuditSetting,
    with_canary: bool,
    rows: int,
    blocks: list[range],
    signal: torch.Tensor,
    divisors: torch.Tensor,
    generator: torch.Generator,
) -> ReleaseStats:
    """``rows`` releases, drawn block of columns by block and reduced to (x₁, ‖x‖²)."""
    device = divisors.device
    rate = torch.full((rows,), setting.q, device=device)
    records = torch.binomial(torch.full((rows,), float(setting.N), device=device), rate,
                             generator=generator)
    canary = torch.bernoulli(rate, generator=generator) if with_canary else torch.zeros_like(rate)
    counts = torch.stack((records, canary), dim=1)
    divisor = divisors[(records + canary).long()].unsqueeze(1)
    first = torch.empty(rows, dtype=torch.float64, device=device)
    sq_norm = torch.zeros(rows, dtype=torch.float64, device=device)
    for columns in blocks:
        block = torch.empty(rows, len(columns), device=device)
        block.normal_(0.0, setting.sigma * setting.clip, generator=generator)
        block.div_(divisor)
        if columns.start == 0:
            block[:, 0] += (counts @ signal) / divisor[:, 0]
            first = block[:, 0].to(torch.float64)
        sq_norm += squared_norms(block)
    return ReleaseStats(first.cpu().numpy(), sq_norm.cpu().numpy())
