"""Run the installed Opacus optimizer for real on the worst-case pair, one step per trial.

The model is a bias-free ``Linear(n, 1)`` trained with the loss ``model(x)`` (mean- or
sum-reduced as the mechanism needs), so the per-sample gradient of its weight is exactly the
input row: the dataset rows *are* the per-sample gradients (docs/theory.md#audit-setting, raw norm
2C so Opacus really clips them). ``make_private`` (Opacus 1.x) replaces the data loader by its
Poisson ``DPDataLoader`` with q = 1/len(loader); every batch it draws is one trial, and the
weight's ``.grad`` after ``optimizer.step()`` (clipped, noised and scaled by Opacus) is read
back as the release. With ``loss_reduction="mean"`` Opacus 1.x divides by
``int(len(dataset) * q)``: FEASGM; with ``"sum"`` it does not divide: SGM.

Opacus 0.x (``PrivacyEngine.attach``) is run by ``opacus0_adapter``, which records every hidden
empty-batch step as its own release.
"""

from __future__ import annotations

import importlib
import math
import warnings
from types import ModuleType

import torch
from torch.utils.data import DataLoader, TensorDataset

from dpcheck.audit.mechanisms import CHUNK_ELEMENTS, worst_case_gradients
from dpcheck.audit.releases import ReleaseStats, release_stats
from dpcheck.audit.setting import AuditSetting
from dpcheck.errors import DpcheckError, ParameterError

LOSS_REDUCTION: dict[str, str] = {"FEASGM": "mean", "SGM": "sum"}
RATE_TOLERANCE = 1e-12


def installed_opacus() -> ModuleType:
    """The importable ``opacus`` package, or a clear error saying how to get it."""
    try:
        return importlib.import_module("opacus")
    except ImportError as exc:
        raise DpcheckError(
            "--implementation opacus needs Opacus, which is not installed: "
            "pip install 'dpcheck[audit]'"
        ) from exc


def loader_batch_size(setting: AuditSetting) -> int:
    """A DataLoader batch size b with ceil(N/b) = ceil((N+1)/b) = 1/q.

    Opacus 1.x derives q = 1/len(loader) from the loader, so q is reachable only when 1/q is
    an integer L, and the same code (same b) gives the same q on D and D′ only when both sizes
    need L batches.
    """
    batches = round(1.0 / setting.q)
    if abs(batches * setting.q - 1.0) > RATE_TOLERANCE:
        raise ParameterError(
            f"Opacus sets q = 1/len(data_loader); --q {setting.q} is not 1/L for an integer L"
        )
    for size in range(1, setting.N + 2):
        if math.ceil(setting.N / size) == batches == math.ceil((setting.N + 1) / size):
            return size
    raise ParameterError(
        f"no DataLoader batch size gives {batches} batches for both |D|={setting.N} and "
        f"|D'|={setting.N + 1}; Opacus cannot run q={setting.q} on this pair"
    )


def check_opacus_memory(setting: AuditSetting, device: torch.device) -> None:
    """Refuse a pair whose N+1 rows of n coordinates exceed the device's chunk budget.

    Unlike the reference mechanism, Opacus needs whole rows at once: the dataset, its
    per-sample gradients and an n-parameter model are all held in memory."""
    limit = CHUNK_ELEMENTS[device.type]
    held = (setting.N + 1) * setting.dim
    if held > limit:
        raise ParameterError(
            f"--dim {setting.dim} with --N {setting.N}: the Opacus implementation holds the "
            f"N+1 dataset rows and their per-sample gradients whole ({held:,} coordinates, "
            f"limit {limit:,} on {device.type}); lower --dim or use --implementation reference, "
            "which draws long rows in blocks"
        )


def run_opacus(
    setting: AuditSetting, trials: int, seed: int, device: torch.device
) -> tuple[ReleaseStats, ReleaseStats, str]:
    """Releases of ``trials`` Opacus steps on D and on D′, and the Opacus version that ran."""
    check_opacus_memory(setting, device)
    opacus = installed_opacus()
    version = str(opacus.__version__)
    if version.startswith("0."):
        from dpcheck.audit.opacus0_adapter import run_opacus0

        return run_opacus0(opacus, setting, trials, seed, device)
    if not version.startswith("1."):
        raise DpcheckError(
            f"Opacus {version} is installed; the audit drives Opacus 0.x (attach) and 1.x "
            "(make_private); audit its mechanism with --implementation reference"
        )
    if setting.mechanism not in LOSS_REDUCTION:
        raise ParameterError(
            f"Opacus {version} implements FEASGM (loss_reduction='mean') and SGM "
            f"(loss_reduction='sum'), not {setting.mechanism}; use --implementation reference"
        )
    batch_size = loader_batch_size(setting)
    null = _run_world(opacus, setting, False, batch_size, trials, seed, device)
    alt = _run_world(opacus, setting, True, batch_size, trials, seed + 1, device)
    return null, alt, f"opacus {version}"


def _run_world(
    opacus: ModuleType,
    setting: AuditSetting,
    with_canary: bool,
    batch_size: int,
    trials: int,
    seed: int,
    device: torch.device,
) -> ReleaseStats:
    raw = worst_case_gradients(setting, device)
    rows = raw[[0] * setting.N + [1] * int(with_canary)]
    model = torch.nn.Linear(setting.dim, 1, bias=False, device=device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.0)
    loader = DataLoader(
        TensorDataset(rows), batch_size=batch_size,
        generator=torch.Generator().manual_seed(seed),
    )
    reduction = LOSS_REDUCTION[setting.mechanism]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        engine = opacus.PrivacyEngine()
        private_model, private_optimizer, private_loader = engine.make_private(
            module=model,
            optimizer=optimizer,
            data_loader=loader,
            noise_multiplier=setting.sigma,
            max_grad_norm=setting.clip,
            loss_reduction=reduction,
            poisson_sampling=True,
            noise_generator=torch.Generator(device=device).manual_seed(seed),
        )
        return _collect(private_model, private_optimizer, private_loader, model.weight,
                        reduction, trials, setting.dim)


def _collect(
    private_model: torch.nn.Module,
    private_optimizer: torch.optim.Optimizer,
    private_loader: DataLoader,
    weight: torch.nn.Parameter,
    reduction: str,
    trials: int,
    dim: int,
) -> ReleaseStats:
    buffer = ReleaseBuffer(trials, dim, weight.device)
    while not buffer.full:
        for (batch,) in private_loader:
            private_optimizer.zero_grad()
            output = private_model(batch)
            (output.mean() if reduction == "mean" else output.sum()).backward()
            private_optimizer.step()
            if weight.grad is None:
                raise DpcheckError("the Opacus optimizer step released no gradient")
            buffer.add(weight.grad.detach().reshape(-1))
            if buffer.full:
                break
    return buffer.stats()


class ReleaseBuffer:
    """Collects ``trials`` released gradients one at a time and reduces them to ReleaseStats
    in blocks of at most ``chunk_elements`` coordinates (default: per device type), so memory
    stays bounded.

    Releases offered after the buffer is full are dropped: an optimizer step may release
    several times (Opacus 0.x's hidden empty-batch steps) past the last trial."""

    def __init__(
        self, trials: int, dim: int, device: torch.device, chunk_elements: int | None = None
    ) -> None:
        budget = chunk_elements if chunk_elements is not None else CHUNK_ELEMENTS[device.type]
        rows = max(1, min(trials, budget // dim))
        self._block = torch.empty(rows, dim, device=device)
        self._trials = trials
        self._filled = 0
        self._done = 0
        self._parts: list[ReleaseStats] = []

    @property
    def full(self) -> bool:
        return self._done == self._trials

    def add(self, release: torch.Tensor) -> None:
        """Record one flat release (ignored once ``trials`` releases are held)."""
        if self.full:
            return
        self._block[self._filled] = release
        self._filled += 1
        self._done += 1
        if self._filled == len(self._block) or self.full:
            self._parts.append(release_stats(self._block[: self._filled]))
            self._filled = 0

    def stats(self) -> ReleaseStats:
        """The statistics of every release recorded, in order."""
        return ReleaseStats.concat(self._parts)
