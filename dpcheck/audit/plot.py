"""Plot an audit: the empirical trade-off with its Clopper–Pearson band against the claim."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from dpcheck.audit.runner import AuditResult
from dpcheck.figures import pyplot, save

PLOT_ALPHAS = np.linspace(0.0, 1.0, 201)


def plot_audit(result: AuditResult, path: Path) -> None:
    """Write a PNG with the empirical curve (FPR, FNR), its upper CP band and the claimed curve."""
    plt = pyplot()
    sweep = result.sweep
    order = np.argsort(sweep.fpr)
    figure, axes = plt.subplots(figsize=(5.0, 5.0))
    axes.plot(sweep.fpr[order], sweep.fnr[order], color="tab:red", label="empirical")
    axes.fill_between(sweep.fpr[order], sweep.fnr[order], sweep.beta_upper[order],
                      color="tab:red", alpha=0.2, label=f"CP upper ({result.options.confidence:g})")
    axes.plot(PLOT_ALPHAS, result.claim.tradeoff(PLOT_ALPHAS), color="tab:green",
              label=f"claimed SGM (eps={result.claim.epsilon:.3g} at delta={result.claim.delta:g})")
    axes.plot([0, 1], [1, 0], color="grey", linestyle=":", linewidth=0.8)
    setting = result.setting
    axes.set_title(f"{setting.mechanism}: N={setting.N}, q={setting.q}, sigma={setting.sigma}, "
                   f"n={setting.dim} -> {result.verdict}", fontsize=9)
    axes.set_xlabel("false positive rate (alpha)")
    axes.set_ylabel("false negative rate (beta)")
    axes.set_xlim(0, 1)
    axes.set_ylim(0, 1)
    axes.legend(fontsize=8)
    save(figure, path, dpi=120)
