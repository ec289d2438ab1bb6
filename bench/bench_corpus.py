"""Robustness benchmark of the scanner: scan every Python file of a large real corpus (default:
the installed site-packages) and count crashes.

Usage: ``python bench/bench_corpus.py [ROOT] [--jobs N]``. Prints files, DP001 findings (files
this interpreter cannot parse: reported, not crashes), internal errors (crashes of the
summariser or of pipeline linking: must be 0), pipelines, findings and the wall time. Files are
read as text and never imported.
"""

from __future__ import annotations

import argparse
import os
import site
import time
from collections import Counter
from pathlib import Path

from dpcheck.engine import ScanOptions, scan


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", nargs="?", default=site.getsitepackages()[0])
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    result = scan(ScanOptions(paths=[Path(args.root)], jobs=args.jobs, use_cache=False))
    elapsed = time.perf_counter() - start
    crashes = [e for e in result.errors if e.internal]
    rules = Counter(f.rule for f in result.findings)
    print(f"corpus: {args.root}")
    print(f"files: {result.files_scanned}  DP001: {rules.pop('DP001', 0)}  crashes: {len(crashes)}")
    print(f"pipelines: {len(result.pipelines)}  findings: {dict(sorted(rules.items()))}")
    print(f"time: {elapsed:.1f} s with {args.jobs} jobs")
    for error in crashes[:5]:
        print(f"  {error.path}: {error.message}")
    return 1 if crashes else 0


if __name__ == "__main__":
    raise SystemExit(main())
