"""Run an installed Opacus 0.x (``PrivacyEngine(...).attach(optimizer)``) for real on the pair.

Same model as the 1.x adapter: a bias-free ``Linear(n, 1)`` trained on ``model(x)``, so each
record's per-sample gradient is its input row (the worst-case pair, raw norm 2C). What 0.x
releases at one ``dp_step``, read from its source (0.13–0.15):

* ``poisson=True`` (0.14+), ``loss_reduction="mean"``: a non-empty batch of size B gives
  (clipped sum + noise)/B · B/avg_batch_size with ``avg_batch_size = sample_rate *
  sample_size``, i.e. EASGM. ``"sum"`` neither divides nor rescales: SGM.
* Empty Poisson batches, ``poisson=True``: the ``UniformWithReplacementSampler`` never yields
  them; instead ``attach`` and every ``optimizer.step()`` take a Geometric number of hidden
  extra ``dp_step(is_empty=True)`` calls (law ``planck(-log(1-q)·sample_size)``, so the
  step stream is i.i.d. empty with probability (1-q)^|D|), each releasing noise/avg_batch_size.
  The audit records **every** ``dp_step`` (the base optimizer's ``step`` is called once per
  release, hidden ones included), so one trial is one release of the stream.
* ``poisson=False``, ``"mean"``: the divisor is the realized batch size: ASGM. An empty draw
  takes no step at all (0.14+ skips it in the sampler; the 0.13 sampler yields an empty index
  list, on which there is nothing to step). The audit draws the Poisson mask itself with the
  sampler's rule (``rand < q``), so every 0.x version runs the same way. The adversary sees "no update"; the audit stands in N(0, σ²C² I_n) for it, a
  randomized post-processing the adversary could do itself, which is exactly the reference
  ASGM empty-batch release (divisor 1), so the verdict stays sound and the law is ASGM.

Torch ≥ 2 made ``zero_grad`` set gradients to ``None``, on which 0.x's hidden empty steps
crash (``p.grad.shape``); the base optimizer keeps zeroed tensors, the torch 1.x behaviour 0.x
was written for. Noise and empty-step counts come from generators the audit seeds (0.x draws
them from ``engine.random_number_generator`` and a scipy frozen distribution).
"""

from __future__ import annotations

import importlib
import inspect
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from types import ModuleType

import numpy as np
import torch
from torch.utils.data import DataLoader, TensorDataset

from dpcheck.audit.mechanisms import worst_case_gradients
from dpcheck.audit.opacus_adapter import ReleaseBuffer
from dpcheck.audit.releases import ReleaseStats
from dpcheck.audit.setting import AuditSetting
from dpcheck.errors import DpcheckError, ParameterError


@dataclass(frozen=True)
class AttachConfig:
    """How ``PrivacyEngine`` is built so that it implements the audited mechanism."""

    poisson: bool
    loss_reduction: str

    def describe(self) -> str:
        return f"attach, poisson={self.poisson}, loss_reduction={self.loss_reduction!r}"


def supports_poisson(opacus: ModuleType) -> bool:
    """Whether this 0.x ``PrivacyEngine`` takes ``poisson=`` (0.14 and later)."""
    return "poisson" in inspect.signature(opacus.PrivacyEngine.__init__).parameters


def attach_config(opacus: ModuleType, setting: AuditSetting) -> AttachConfig:
    """The engine options under which Opacus 0.x implements ``setting.mechanism``."""
    poisson = supports_poisson(opacus)
    version = opacus.__version__
    if setting.mechanism == "ASGM":
        return AttachConfig(False, "mean")
    if setting.mechanism == "SGM":
        config = AttachConfig(poisson, "sum")
    elif setting.mechanism == "EASGM" and poisson:
        config = AttachConfig(True, "mean")
    elif setting.mechanism == "EASGM":
        raise ParameterError(
            f"Opacus {version} has no poisson=True (added in 0.14), so it does not implement "
            "EASGM; audit asgm or sgm, or use --implementation reference"
        )
    else:
        raise ParameterError(
            f"Opacus {version} implements EASGM (poisson=True), ASGM (poisson=False) and SGM "
            f"(loss_reduction='sum'), not {setting.mechanism}; use --implementation reference"
        )
    if config.poisson and setting.q >= 1.0:
        raise ParameterError(
            f"Opacus {version} with poisson=True needs --q < 1 (its empty-batch law uses "
            f"log(1 - q)); got --q {setting.q}"
        )
    return config


def run_opacus0(
    opacus: ModuleType, setting: AuditSetting, trials: int, seed: int, device: torch.device
) -> tuple[ReleaseStats, ReleaseStats, str]:
    """Releases of ``trials`` Opacus 0.x ``dp_step`` calls on D and on D′, and what ran."""
    config = attach_config(opacus, setting)
    worlds = []
    for with_canary, world_seed in ((False, seed), (True, seed + 1)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            worlds.append(_run_world(opacus, setting, config, with_canary, trials, world_seed,
                                     device))
    return worlds[0], worlds[1], f"opacus {opacus.__version__} ({config.describe()})"


class _RecordingSGD(torch.optim.SGD):
    """SGD with lr 0 that records the gradient Opacus hands it at every step (one release).

    ``zero_grad`` keeps zeroed tensors (torch 1.x default) because 0.x adds noise in place to
    ``p.grad`` on its hidden empty-batch steps."""

    def __init__(self, weight: torch.nn.Parameter, buffer: ReleaseBuffer) -> None:
        super().__init__([weight], lr=0.0)
        self.weight = weight
        self.buffer = buffer

    def zero_grad(self, set_to_none: bool = False) -> None:
        super().zero_grad(set_to_none=False)

    def step(self, closure=None):  # type: ignore[no-untyped-def, override]
        if self.weight.grad is None:
            raise DpcheckError("the Opacus 0.x optimizer step released no gradient")
        self.buffer.add(self.weight.grad.detach().reshape(-1))
        return super().step(closure)


def _run_world(
    opacus: ModuleType,
    setting: AuditSetting,
    config: AttachConfig,
    with_canary: bool,
    trials: int,
    seed: int,
    device: torch.device,
) -> ReleaseStats:
    rows = worst_case_gradients(setting, device)[[0] * setting.N + [1] * int(with_canary)]
    model = torch.nn.Linear(setting.dim, 1, bias=False, device=device)
    buffer = ReleaseBuffer(trials, setting.dim, device)
    optimizer = _RecordingSGD(model.weight, buffer)
    engine = _engine(opacus, model, setting, config, len(rows), seed, device)
    engine.attach(optimizer)
    batches = _poisson_batches(opacus, rows, setting.q, seed) if config.poisson else None
    standin = torch.Generator(device=device).manual_seed(seed)
    sampling = torch.Generator().manual_seed(seed)
    while not buffer.full:
        if batches is not None:
            _train_step(model, optimizer, next(batches), config.loss_reduction)
            continue
        mask = torch.rand(len(rows), generator=sampling) < setting.q
        if mask.any():
            _train_step(model, optimizer, rows[mask.to(device)], config.loss_reduction)
        else:
            noise = torch.randn(setting.dim, generator=standin, device=device)
            buffer.add(noise * (setting.sigma * setting.clip))
    return buffer.stats()


def _engine(
    opacus: ModuleType,
    model: torch.nn.Module,
    setting: AuditSetting,
    config: AttachConfig,
    data_size: int,
    seed: int,
    device: torch.device,
) -> object:
    extra = {"poisson": True} if config.poisson else {}
    engine = opacus.PrivacyEngine(
        model,
        sample_rate=setting.q,
        sample_size=data_size,
        noise_multiplier=setting.sigma,
        max_grad_norm=setting.clip,
        loss_reduction=config.loss_reduction,
        **extra,
    )
    engine.random_number_generator = torch.Generator(device=device).manual_seed(seed)
    if config.poisson:
        engine._poisson_empty_batches_distribution.random_state = np.random.default_rng(seed)
    return engine


def _poisson_batches(
    opacus: ModuleType, rows: torch.Tensor, q: float, seed: int
) -> Iterator[torch.Tensor]:
    """Endless non-empty batches from 0.x's own ``UniformWithReplacementSampler``."""
    sampler_module = importlib.import_module(f"{opacus.__name__}.utils.uniform_sampler")
    sampler = sampler_module.UniformWithReplacementSampler(
        num_samples=len(rows), sample_rate=q, generator=torch.Generator().manual_seed(seed)
    )
    loader = DataLoader(TensorDataset(rows), batch_sampler=sampler)
    while True:
        for (batch,) in loader:
            yield batch


def _train_step(
    model: torch.nn.Module, optimizer: _RecordingSGD, batch: torch.Tensor, reduction: str
) -> None:
    optimizer.zero_grad()
    output = model(batch)
    (output.mean() if reduction == "mean" else output.sum()).backward()
    optimizer.step()
