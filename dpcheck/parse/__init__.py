"""Parse: each file's bytes to checked Python (``source``), its cacheable per-file analysis
(``analysis``: DP001 problem, suppressions, summary), and the on-disk scan cache (``cache``)."""
