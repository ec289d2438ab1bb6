"""Plot a bound report: the trade-off curves (claimed vs witness vs guarantee, with the claimed
(eps, delta) curve) and their privacy profiles delta(eps). matplotlib is imported lazily: it is
an optional extra, and a missing install is a clear error, not a traceback.

Two things keep the picture honest. The claimed curve is the exact SGM+Poisson curve (PLD) at
the accountant's parameters, whatever accountant printed the claimed ε, so its legend says so and
names the accountant only as the source of ε. And a PLD's δ(ε) bottoms out at a numerical floor
(around 1e-9) instead of going on falling: a flat tail far below any δ anyone claims is cut, not
drawn as if it were the mechanism's.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from dpcheck.bounds.defaults import MECHANISM_TITLES
from dpcheck.bounds.profiles import PLOT_ALPHAS, Bound
from dpcheck.bounds.report import BoundReport
from dpcheck.errors import DpcheckError
from dpcheck.figures import pyplot, save
from dpcheck.model import Finding, Pipeline
from dpcheck.privacy.tradeoff import eps_delta_tradeoff
from dpcheck.samplers import sampler_kind

STYLES: dict[str, tuple[str, str]] = {
    "claimed": ("tab:green", "-"),
    "witness (one epoch)": ("tab:orange", ":"),
    "witness": ("tab:red", "-"),
    "guarantee": ("tab:blue", "--"),
}


#: A tail of δ(ε) below this that stops falling is the PLD's numerical floor, not the mechanism.
NUMERICAL_FLOOR = 1e-6
_FLAT = 1e-3  # relative change per grid step under which a tail counts as flat


def _profile_grid(report: BoundReport) -> np.ndarray:
    """eps from 0 to three times the claimed eps (at least 2, at most 60)."""
    eps = report.claim.epsilon if math.isfinite(report.claim.epsilon) else 20.0
    return np.linspace(0.0, min(max(2.0, 3.0 * eps), 60.0), 121)


def _bounds(report: BoundReport) -> dict[str, Bound]:
    one = report.corrected.witness_one_epoch if report.request.mechanism == "shuffle" and \
        report.request.full_epochs > 1 else None
    parts = {"claimed": report.claimed, "witness (one epoch)": one, "witness": report.witness,
             "guarantee": report.guarantee}
    return {k: v for k, v in parts.items() if v is not None}


def legend_label(kind: str, bound: Bound) -> str:
    """The legend entry of a bound. The claimed curve is the SGM+Poisson curve computed exactly
    (PLD); the accountant named in the curve's name only printed the claimed ε."""
    c = bound.curve
    if kind == "claimed":
        accountant = c.name.removesuffix(" (SGM+Poisson)")
        return f"claimed: SGM+Poisson, exact PLD curve (ε printed by {accountant}) [{c.label.value}]"
    return f"{kind}: {c.name} [{c.label.value}]"


def drawn_profile(eps: np.ndarray, deltas: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The points of a δ(ε) profile worth drawing: positive values, and, when the curve ends on a
    flat tail below ``NUMERICAL_FLOOR`` (where the computation, not the mechanism, stops the
    fall), only the part above ten times that floor, so the bend into it is not drawn either."""
    keep = np.isfinite(deltas) & (deltas > 0)
    tail = deltas[-2:]
    if keep[-2:].all() and tail[-1] < NUMERICAL_FLOOR and abs(tail[0] - tail[1]) <= _FLAT * tail[1]:
        below = np.flatnonzero(deltas < 10 * tail[-1])
        keep[below[0]:] = False
    return eps[keep], deltas[keep]


def write_plot(report: BoundReport, path: Path) -> None:
    """Write a two-panel PNG of ``report`` to ``path``."""
    plt = pyplot()
    figure, (curves, profiles) = plt.subplots(1, 2, figsize=(11.0, 4.8))
    eps_grid = _profile_grid(report)
    lowest = report.claim.delta if math.isfinite(report.claim.delta) else 1e-5
    for kind, bound in _bounds(report).items():
        color, line = STYLES[kind]
        c = bound.curve
        label = legend_label(kind, bound)
        curves.plot(c.curve_alpha, c.curve_beta, color=color, linestyle=line, label=label)
        deltas = np.atleast_1d(np.asarray(bound.source.delta(eps_grid), dtype=float))
        x, y = drawn_profile(eps_grid, deltas)
        profiles.semilogy(x, y, color=color, linestyle=line, label=label)
        if len(y):
            lowest = min(lowest, float(y.min()))
    claim = report.claim
    if math.isfinite(claim.epsilon):
        curves.plot(PLOT_ALPHAS, eps_delta_tradeoff(PLOT_ALPHAS, claim.epsilon, claim.delta),
                    color="gray", linestyle=":", label=f"claimed (ε={claim.epsilon:.2f}, δ={claim.delta:g})")
        profiles.plot([claim.epsilon], [claim.delta], "ko", label="claim (ε, δ)")
    curves.plot([0, 1], [1, 0], color="lightgray", linewidth=0.8)
    curves.set(xlim=(0, 1), ylim=(0, 1), xlabel="type I error α (false positive rate)",
               ylabel="type II error β (false negative rate)", title="trade-off curves")
    profiles.set(xlabel="ε", ylabel="δ(ε)", ylim=(max(lowest / 10, 1e-30), 1.5), title="privacy profiles")
    curves.legend(fontsize=6.5, loc="upper right")
    profiles.legend(fontsize=6.5, loc="lower left")
    title = MECHANISM_TITLES[report.request.mechanism]
    if report.request.mechanism == "shuffle":
        title = f"{sampler_kind(report.request.sampler).title} accounted as Poisson ({report.corrected.adjacency})"
    figure.suptitle(f"{title}: verdict {report.verdict}", fontsize=11)
    figure.tight_layout()
    save(figure, path)


def plot_findings(findings: Sequence[Finding], pipelines: Sequence[Pipeline], directory: Path) -> list[Path]:
    """One PNG per finding with a computed bound, named ``<fingerprint>.png`` in ``directory``."""
    from dpcheck.bounds.attach import bound_for

    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DpcheckError(f"{directory}: cannot create the plot directory: {exc.strerror or exc}") from None
    by_entry = {p.entry: p for p in pipelines}
    written: list[Path] = []
    for finding in findings:
        pipeline = by_entry.get(finding.pipeline or "")
        report = None if pipeline is None else bound_for(finding, pipeline)[1]
        if report is not None:
            path = directory / f"{finding.fingerprint}.png"
            write_plot(report, path)
            written.append(path)
    return written
