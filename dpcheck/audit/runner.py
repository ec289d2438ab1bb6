"""Run one audit end to end: releases on D and D′, scores, empirical curve, certified verdict."""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import numpy as np
import torch

from dpcheck.audit.claim import ClaimedGuarantee, claimed_sgm
from dpcheck.audit.distinguisher import LikelihoodRatioDistinguisher
from dpcheck.audit.evaluate import (
    ALPHA_GRID,
    CurvePoint,
    HeldOutTest,
    empirical_curve,
    held_out_test,
)
from dpcheck.audit.mechanisms import simulate_reference
from dpcheck.audit.releases import ReleaseStats, resolve_device
from dpcheck.audit.setting import AuditSetting
from dpcheck.audit.stats import ThresholdErrors, check_confidence
from dpcheck.errors import ParameterError

IMPLEMENTATIONS: tuple[str, ...] = ("reference", "opacus")
MIN_TRIALS = 20
MAX_TRIALS = 1_000_000
"""Per-trial statistics, scores and sorted copies (~100 bytes a trial) are held in memory."""
MAX_SEED = 2**63 - 2
"""torch seeds are 64-bit; the Opacus adapter also uses ``seed + 1``."""
MAX_COORDINATES: dict[str, int] = {"cpu": 10**11, "cuda": 10**13}
"""Gaussian coordinates drawn per dataset (trials × n): about 11 minutes of sampling per dataset
on the 2-core CPU (~1.5·10⁸ a second, bench/RESULTS.md), about 3 on one H200 (~6·10¹⁰)."""


@dataclass(frozen=True)
class AuditOptions:
    """How to run: ``trials`` releases per dataset (D and D′ each)."""

    implementation: str = "reference"
    trials: int = 10_000
    delta: float = 1e-5
    confidence: float = 0.95
    device: str = "cpu"
    seed: int = 0

    def __post_init__(self) -> None:
        if self.implementation not in IMPLEMENTATIONS:
            raise ParameterError(
                f"--implementation must be one of {', '.join(IMPLEMENTATIONS)}, "
                f"got {self.implementation!r}"
            )
        if not (MIN_TRIALS <= self.trials <= MAX_TRIALS):
            raise ParameterError(
                f"--trials must lie in [{MIN_TRIALS}, {MAX_TRIALS:,}] (each trial's statistics "
                f"are kept in memory), got {self.trials}"
            )
        if not (0 <= self.seed <= MAX_SEED):
            raise ParameterError(f"--seed must lie in [0, {MAX_SEED}], got {self.seed}")
        check_confidence(self.confidence)


def check_workload(setting: AuditSetting, options: AuditOptions) -> None:
    """Refuse an audit whose trials × n Gaussian coordinates would run for hours."""
    limit = MAX_COORDINATES.get(options.device, MAX_COORDINATES["cpu"])
    coordinates = options.trials * setting.dim
    if coordinates > limit:
        raise ParameterError(
            f"--trials {options.trials} x --dim {Decimal(setting.dim):.4g} = "
            f"{Decimal(coordinates):.3g} Gaussian coordinates per dataset exceeds the "
            f"{options.device} limit of {limit:.0e} (minutes of sampling per dataset already); "
            "lower --trials or --dim"
        )


@dataclass(frozen=True)
class AuditResult:
    """Everything an audit measured; ``to_json`` is the documented report shape."""

    setting: AuditSetting
    options: AuditOptions
    claim: ClaimedGuarantee
    sweep: ThresholdErrors
    curve: list[CurvePoint]
    test: HeldOutTest
    notes: list[str] = field(default_factory=list)
    implementation_version: str | None = None

    @property
    def verdict(self) -> str:
        return "violation" if self.test.violation else "no violation"

    def to_json(self) -> dict[str, Any]:
        held = self.test.errors
        claimed_beta = self.claim.tradeoff(np.asarray(ALPHA_GRID))
        inputs: dict[str, Any] = {
            **self.setting.describe(),
            "delta": self.options.delta,
            "confidence": self.options.confidence,
            "device": self.options.device,
            "seed": self.options.seed,
            "implementation_version": self.implementation_version,
            "notes": self.notes,
        }
        return {
            "mechanism": self.setting.mechanism,
            "implementation": self.options.implementation,
            "inputs": inputs,
            "trials": self.options.trials,
            "empirical": {
                "curve": [
                    {"alpha": p.alpha, "beta": p.beta, "beta_upper": p.beta_upper}
                    for p in self.curve
                ],
                "delta_at_claimed_epsilon": self.test.delta_at_claimed_epsilon,
                "held_out": {
                    "threshold": self.test.threshold,
                    "trials": held.trials_null,
                    "fpr": float(held.fpr[0]),
                    "fnr": float(held.fnr[0]),
                    "alpha_upper": float(held.alpha_upper[0]),
                    "beta_upper": float(held.beta_upper[0]),
                    "margin_below_claim": self.test.margin,
                },
            },
            "epsilon_lower": self.test.epsilon_lower,
            "claimed": {
                "epsilon_at_delta": self.claim.epsilon,
                "curve": [
                    {"alpha": a, "beta": float(b)} for a, b in zip(ALPHA_GRID, claimed_beta)
                ],
            },
            "verdict": self.verdict,
        }


def _simulate(
    setting: AuditSetting, options: AuditOptions
) -> tuple[ReleaseStats, ReleaseStats, str | None]:
    device = resolve_device(options.device)
    if options.implementation == "opacus":
        from dpcheck.audit.opacus_adapter import run_opacus

        return run_opacus(setting, options.trials, options.seed, device)
    generator = torch.Generator(device=device).manual_seed(options.seed)
    null = simulate_reference(setting, False, options.trials, generator, device)
    alt = simulate_reference(setting, True, options.trials, generator, device)
    return null, alt, f"torch {torch.__version__}"


def run_audit(
    setting: AuditSetting, options: AuditOptions, notes: list[str] | None = None
) -> AuditResult:
    """Audit ``setting`` against its claimed one-step SGM guarantee."""
    check_workload(setting, options)
    claim = claimed_sgm(setting, options.delta)
    null_stats, alt_stats, version = _simulate(setting, options)
    distinguisher = LikelihoodRatioDistinguisher(setting)
    null_scores, alt_scores = distinguisher.score(null_stats), distinguisher.score(alt_stats)
    sweep, curve = empirical_curve(null_scores, alt_scores, options.confidence)
    test = held_out_test(null_scores, alt_scores, claim, options.confidence)
    return AuditResult(setting, options, claim, sweep, curve, test, list(notes or []), version)
