"""Run one audit end to end: releases on D and D′, scores, empirical curve, certified verdict."""

from __future__ import annotations

from dataclasses import dataclass, field
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
        if self.trials < MIN_TRIALS:
            raise ParameterError(f"--trials must be at least {MIN_TRIALS}, got {self.trials}")
        check_confidence(self.confidence)


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
    claim = claimed_sgm(setting, options.delta)
    null_stats, alt_stats, version = _simulate(setting, options)
    distinguisher = LikelihoodRatioDistinguisher(setting)
    null_scores, alt_scores = distinguisher.score(null_stats), distinguisher.score(alt_stats)
    sweep, curve = empirical_curve(null_scores, alt_scores, options.confidence)
    test = held_out_test(null_scores, alt_scores, claim, options.confidence)
    return AuditResult(setting, options, claim, sweep, curve, test, list(notes or []), version)
