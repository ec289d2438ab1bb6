"""The findings a scan with the same settings reports on a git ref's tree (``--new-since``)."""

from __future__ import annotations

import tempfile
from collections import Counter
from dataclasses import replace
from pathlib import Path

from dpcheck.discover.files import relative_path
from dpcheck.engine import Settings, default_cache_dir, run
from dpcheck.gate.git_tree import RefCommit, export_tree
from dpcheck.gate.known import fingerprint_counts
from dpcheck.progress import ProgressCallback, labelled


def fingerprints_at(
    settings: Settings, target: RefCommit, progress: ProgressCallback | None = None
) -> Counter[str]:
    """Fingerprints of the findings that ``settings`` (same paths, config, rules, parameters)
    gives on ``target``'s tree. A scanned path absent at the ref contributes nothing. The
    analysis cache of the current scan is shared, so unchanged files are not analysed twice."""
    options = settings.options
    cache_dir = default_cache_dir(options, settings.root)
    with tempfile.TemporaryDirectory(prefix="dpcheck-ref-") as scratch:
        tree_root = Path(scratch).resolve()
        export_tree(target, tree_root)
        inside = (relative_path(path, settings.root) for path in options.paths)
        paths = tuple(
            mapped for rel in inside if rel is not None and (mapped := tree_root / rel).exists()
        )
        if not paths:
            return Counter()
        at_ref = replace(
            settings,
            root=tree_root,
            options=replace(options, paths=paths, cache_dir=cache_dir, use_cache=bool(cache_dir)),
        )
        result = run(at_ref, progress=labelled(progress, f"at {target.ref}"))
        return fingerprint_counts(result.findings)
