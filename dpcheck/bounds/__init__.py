"""Corrected bounds for findings and for ``dpcheck bound``: requests, reports (claimed, witness,
guarantee, verdict), the per-finding attachment, text summaries and plots. The numbers all come
from ``dpcheck.privacy``; this package decides which apply and says so.

Import the sub-modules directly (``dpcheck.bounds.report.build_report``,
``dpcheck.bounds.attach.attach_bounds``, ``dpcheck.bounds.request.BoundRequest``): this package
itself imports nothing, so ``dpcheck --help`` and a scan without findings never load scipy.
"""
