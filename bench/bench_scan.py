"""Benchmark: cold and warm ``dpcheck scan`` of a corpus against bare libcst parsing and Fixit.

Usage: python bench/bench_scan.py CORPUS [--jobs N] [--fixit] [--repeat K]

All figures of one run are measured on the same machine in the same minute, so their ratios are
meaningful even on a noisy machine; absolute seconds are not. Results go to bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import libcst

from dpcheck.discover.files import discover_files
from dpcheck.engine import ScanOptions, scan


def _best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def bare_parse(files: list[Path]) -> None:
    """libcst.parse_module of every Python file (what any libcst linter pays at least)."""
    for path in files:
        try:
            libcst.parse_module(path.read_bytes())
        except Exception:  # noqa: BLE001 - a file libcst rejects costs its attempt, like for us
            pass


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--fixit", action="store_true", help="also time `fixit lint` if installed")
    args = parser.parse_args()

    files = list(discover_files([args.corpus]).files)
    lines = sum(p.read_bytes().count(b"\n") for p in files)
    print(f"corpus: {args.corpus} — {len(files)} Python files, {lines} lines, jobs={args.jobs}")

    parse_s = _best(lambda: bare_parse(files), args.repeat)
    cache_root = Path(tempfile.mkdtemp(prefix="dpcheck-bench-"))
    counter = iter(range(10**6))

    def cold() -> None:
        scan(ScanOptions(paths=[args.corpus], jobs=args.jobs, cache_dir=cache_root / str(next(counter))))

    cold_s = _best(cold, args.repeat)
    warm_dir = cache_root / "warm"
    scan(ScanOptions(paths=[args.corpus], jobs=args.jobs, cache_dir=warm_dir))
    warm_s = _best(lambda: scan(ScanOptions(paths=[args.corpus], jobs=args.jobs, cache_dir=warm_dir)), args.repeat)
    shutil.rmtree(cache_root, ignore_errors=True)

    print(f"bare libcst parse : {parse_s:8.3f} s")
    print(f"dpcheck cold scan : {cold_s:8.3f} s   ratio to bare parse {cold_s / parse_s:5.2f}x (target <= 1.0x)")
    print(f"dpcheck warm scan : {warm_s:8.3f} s   cold/warm {cold_s / warm_s:6.1f}x (target >= 10x)")
    if args.fixit and shutil.which("fixit"):
        start = time.perf_counter()
        subprocess.run(["fixit", "lint", str(args.corpus)], capture_output=True, check=False)
        fixit_s = time.perf_counter() - start
        print(f"fixit lint        : {fixit_s:8.3f} s   fixit/cold {fixit_s / cold_s:6.1f}x (target >= 10x)")
    if shutil.which("ruff"):
        start = time.perf_counter()
        subprocess.run(["ruff", "check", "--no-cache", "--exit-zero", "-q", str(args.corpus)], capture_output=True, check=False)
        print(f"ruff check        : {time.perf_counter() - start:8.3f} s")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
