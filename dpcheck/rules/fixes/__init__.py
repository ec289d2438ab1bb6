"""Automatic fixes: one module per fix, collected by a registry checked against the catalog.

Layout (read top-down):

* ``<fix_id>.py`` — one per fix, named after its kebab-case catalog id in snake_case
  (``divide_by_batch_size.py`` is DP101's ``divide-by-batch-size``): ``propose`` and, at the
  end, ``FIX = FixDefinition(...)``. Its words (title, when it is offered, safety) and its
  before/after examples are in the ``[[fixes]]`` of the rule's ``rules/<ID>.toml``.
* ``fix.py`` — what a fix module defines (``FixDefinition``, ``Proposal``, ``NoFix``, ``Edit``);
  ``syntax.py`` — the libcst reading and rewriting every fix shares (nodes by position, names
  visible at a node, the edit a rewrite makes); ``requirements.py`` — rewriting a version
  constraint as an exact pin; ``registry.py`` — the collected fixes, checked against the
  catalog.

A fix only proposes. Whether it is applied is decided by ``dpcheck.fixing``, which re-analyses
the project with the edits in memory (verified, not hoped). Nothing here is imported by a scan
that finds nothing to fix: libcst is loaded only when a fix is proposed.
"""
