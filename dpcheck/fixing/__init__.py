"""The fix stage of ``dpcheck scan``: fixes proposed, verified by re-analysis, shown or written.

* ``plan`` — for each reported finding whose rule declares fixes (``dpcheck.rules.fixes``),
  the proposals of its fixes, each verified by scanning the project again with the edits in
  memory (``dpcheck.discover.confine.overlaid``; same settings, nothing written): it counts
  only when the finding is gone, nothing at or above its severity is new, no file stopped
  parsing, and the fix's own check holds. The findings are then annotated with their fix, or
  with why they have none.
* ``output`` — the unified diff of what ``--fix`` would write (``--diff``), and the writing
  itself, through the same confinement as every read (``write_inside``).

The scanned code is never imported or run: a fix reads and rewrites text, and the verification
is the same static analysis as the scan.
"""

from dpcheck.fixing.output import unified_diff, write_changes
from dpcheck.fixing.plan import FixOutcome, FixPlan, plan_fixes

__all__ = ["FixOutcome", "FixPlan", "plan_fixes", "unified_diff", "write_changes"]
