"""Human-readable rendering of an audit report (from its JSON form, so both say the same)."""

from __future__ import annotations

from typing import Any


def render_text(report: dict[str, Any]) -> str:
    """A short text report: setting, the certified test, ε_L vs the claim, the curve, verdict."""
    inputs = report["inputs"]
    held = report["empirical"]["held_out"]
    claimed = report["claimed"]
    confidence = round(100 * inputs["confidence"])
    lines = [
        f"dpcheck audit: {report['mechanism']} ({report['implementation']}, "
        f"{inputs['implementation_version']}, device {inputs['device']})",
        f"  |D|={inputs['N']}  |D'|={inputs['N_prime']}  q={inputs['q']}  sigma={inputs['sigma']}"
        f"  C={inputs['clip']}  n={inputs['dim']}  trials={report['trials']} per dataset"
        f"  seed={inputs['seed']}",
        *(f"  note: {note}" for note in inputs["notes"]),
        f"  held-out test ({held['trials']} trials per dataset): FPR {held['fpr']:.4f} "
        f"(upper {held['alpha_upper']:.4f}), FNR {held['fnr']:.4f} "
        f"(upper {held['beta_upper']:.4f})",
        f"  epsilon lower bound at delta={inputs['delta']:g}: {report['epsilon_lower']:.4f}"
        f"   claimed SGM epsilon: {claimed['epsilon_at_delta']:.4f}",
        f"  delta lower bound at the claimed epsilon: "
        f"{report['empirical']['delta_at_claimed_epsilon']:.4g}",
        "  trade-off   alpha    beta  beta_upper  claimed",
    ]
    for point, claim in zip(report["empirical"]["curve"], claimed["curve"]):
        lines.append(
            f"            {point['alpha']:6.3f}  {point['beta']:6.4f}  {point['beta_upper']:10.4f}"
            f"  {claim['beta']:7.4f}"
        )
    verdict = (
        f"violation confirmed at {confidence}%: the measured errors are impossible under the "
        "claimed SGM guarantee"
        if report["verdict"] == "violation"
        else f"no violation at {confidence}%: the measured errors are compatible with the claim"
    )
    lines.append(f"  verdict: {verdict}")
    return "\n".join(lines) + "\n"
