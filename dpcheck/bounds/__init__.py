"""Corrected bounds for findings and for ``dpcheck bound``: requests, reports (claimed, witness,
guarantee, verdict), the per-finding attachment, text summaries and plots. The numbers all come
from ``dpcheck.privacy``; this package decides which apply and says so."""

from dpcheck.bounds.attach import attach_bounds
from dpcheck.bounds.report import BoundReport, build_report
from dpcheck.bounds.request import DEFAULT_ALPHAS, MECHANISM_NAMES, BoundRequest

__all__ = ["DEFAULT_ALPHAS", "MECHANISM_NAMES", "BoundReport", "BoundRequest", "attach_bounds", "build_report"]
