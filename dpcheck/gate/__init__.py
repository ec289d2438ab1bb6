"""The pull-request gate: report only findings that are new relative to a git ref or a baseline.

* ``baseline`` — the accepted-findings file (read, write, validate).
* ``git_tree`` — a ref's tree exported from git objects, without a checkout.
* ``new_since`` — fingerprints of the findings at a ref, scanned with the same settings.
* ``known`` — the multiset filter that drops known findings and counts them.
* ``scope`` — named dependency files (pre-commit) widened to the findings that cite them.
* ``gated`` — the composition the ``scan`` and ``baseline`` commands call.
"""

from dpcheck.gate.baseline import Baseline, BaselineError, read_baseline, write_baseline
from dpcheck.gate.gated import GateOptions, GateOutcome, gated_scan, scan_named

__all__ = [
    "Baseline",
    "BaselineError",
    "GateOptions",
    "GateOutcome",
    "gated_scan",
    "read_baseline",
    "scan_named",
    "write_baseline",
]
