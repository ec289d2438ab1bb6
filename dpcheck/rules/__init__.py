"""The rules: one module per rule, collected by a registry checked against the catalog.

Layout (a newcomer's map):

* ``<rule_name>.py`` — one per rule, named after its kebab-case catalog name in snake_case
  (``normalized_update_accounted_as_sgm.py`` is DP101): the hit it reports, ``check`` and, when
  the rule has one, its bound policy, declared together as ``RULE``. Its words (summary,
  rationale, fix, examples) are in ``rules/<ID>.toml`` at the top of the repository.
* ``rule.py`` — what a rule module defines (``Hit``, ``PipelineRule``, ``FileRule``,
  ``UnlinkedRule``, ``BoundPolicy``); ``registry.py`` — the collected rules, checked against
  the catalog; ``evaluate.py`` — running them; ``anchors.py`` and ``accounting.py`` — what
  several pipeline rules read.
* ``fixes/`` — the automatic fixes a rule's catalog entry declares, one module per fix, with
  their own registry (``dpcheck.rules.fixes``); the scan never imports them, the fix stage
  (``dpcheck.fixing``) does.

``evaluate`` (pipelines), ``check_files`` (per-file rules) and ``check_unlinked`` (DP code no
pipeline took) are pure: inputs in, findings out; ``once_per_site`` keeps one finding per site
fact (DP105) when several entry points reach the same place.
"""

from __future__ import annotations

from dpcheck.rules.evaluate import check_files, check_unlinked, evaluate, once_per_site
from dpcheck.rules.registry import registry

__all__ = ["check_files", "check_unlinked", "evaluate", "once_per_site", "registry"]
