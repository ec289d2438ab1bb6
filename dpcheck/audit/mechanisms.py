"""Reference SGM / ASGM / EASGM / FEASGM in torch, run as real n-dimensional releases.

Each trial draws a Poisson batch (every record independently with probability q, the canary
too in D′), clips the per-sample gradients to norm C, adds N(0, σ²C² I_n) to their sum and
divides by the mechanism's divisor (math-spec §3.1). The records of D share one gradient, so
the sampled records are counted directly: k ~ Bin(N, q) is exactly the law of the Poisson batch
size, and the canary's inclusion is an independent Bernoulli(q). Trials are batched into (rows, n) blocks
sized to ``chunk_elements`` so memory stays bounded whatever n and the trial count are.
"""

from __future__ import annotations

import torch

from dpcheck.audit.releases import ReleaseStats, release_stats
from dpcheck.audit.setting import RAW_GRADIENT_NORM_FACTOR, AuditSetting

CHUNK_ELEMENTS: dict[str, int] = {"cpu": 1 << 23, "cuda": 1 << 28}
"""Release coordinates held at once: 32 MiB of float32 on CPU, 1 GiB on a GPU."""


def worst_case_gradients(setting: AuditSetting, device: torch.device) -> torch.Tensor:
    """Raw (unclipped) gradients, shape (2, n): row 0 for every record of D, row 1 the canary."""
    grads = torch.zeros(2, setting.dim, device=device)
    grads[0, 0] = RAW_GRADIENT_NORM_FACTOR * setting.clip
    grads[1, 0] = -RAW_GRADIENT_NORM_FACTOR * setting.clip
    return grads


def clip_rows(grads: torch.Tensor, clip: float) -> torch.Tensor:
    """Flat per-sample clipping: scale each row to norm at most ``clip``."""
    norms = torch.linalg.vector_norm(grads, dim=1, keepdim=True)
    return grads * torch.clamp(clip / norms, max=1.0)


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
    clipped = clip_rows(worst_case_gradients(setting, device), setting.clip)
    budget = chunk_elements if chunk_elements is not None else CHUNK_ELEMENTS[device.type]
    rows_per_chunk = max(1, budget // setting.dim)
    parts: list[ReleaseStats] = []
    done = 0
    while done < trials:
        rows = min(rows_per_chunk, trials - done)
        parts.append(_release_chunk(setting, with_canary, rows, clipped, divisors, generator))
        done += rows
    return ReleaseStats.concat(parts)


def _release_chunk(
    setting: AuditSetting,
    with_canary: bool,
    rows: int,
    clipped: torch.Tensor,
    divisors: torch.Tensor,
    generator: torch.Generator,
) -> ReleaseStats:
    device = clipped.device
    rate = torch.full((rows,), setting.q, device=device)
    records = torch.binomial(torch.full((rows,), float(setting.N), device=device), rate,
                             generator=generator)
    canary = torch.bernoulli(rate, generator=generator) if with_canary else torch.zeros_like(rate)
    releases = torch.empty(rows, setting.dim, device=device)
    releases.normal_(0.0, setting.sigma * setting.clip, generator=generator)
    releases.addmm_(torch.stack((records, canary), dim=1), clipped)
    releases.div_(divisors[(records + canary).long()].unsqueeze(1))
    return release_stats(releases)
