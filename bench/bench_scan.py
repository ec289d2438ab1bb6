"""Benchmark: cold and warm ``dpcheck scan`` of a corpus against bare libcst parsing and Fixit.

Usage: python bench/bench_scan.py CORPUS [--jobs N] [--fixit] [--repeat K] [--reference SRC]

All figures of one run are measured on the same machine in the same minute, so their ratios are
meaningful even on a noisy machine; absolute seconds are not. Results go to bench/RESULTS.md.

The bare-parse baseline is what any libcst linter pays at least: ``libcst.parse_module`` of every
Python file and, for a Jupyter notebook, ``json.loads`` of the file and a parse of each code cell.

``--reference SRC`` also times cold scans of the same corpus by another dpcheck source tree (a
``git archive`` of an earlier commit, say), each scan in a fresh process and the two trees
alternating, so that the ratio between them is measured under the same load: this is how a
change is shown to cost nothing on a corpus it does not concern.
"""

from __future__ import annotations

import argparse
import json
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

NOTEBOOK_SUFFIX = ".ipynb"


def _best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def _parse(source: str | bytes) -> None:
    try:
        libcst.parse_module(source)
    except Exception:  # noqa: BLE001 - a file libcst rejects costs its attempt, like for us
        pass


def bare_parse(files: list[Path]) -> None:
    """libcst.parse_module of every Python file and of every notebook code cell."""
    for path in files:
        if path.suffix != NOTEBOOK_SUFFIX:
            _parse(path.read_bytes())
            continue
        try:
            cells = json.loads(path.read_bytes()).get("cells", [])
        except ValueError:
            continue
        for cell in cells:
            if cell.get("cell_type") == "code":
                source = cell.get("source", "")
                _parse("".join(source) if isinstance(source, list) else source)


def cold_scan(corpus: Path, jobs: int, repeat: int) -> float:
    """The best of ``repeat`` scans, each with a new, empty cache."""
    cache_root = Path(tempfile.mkdtemp(prefix="dpcheck-bench-"))
    counter = iter(range(10**6))
    try:
        return _best(lambda: scan(ScanOptions(paths=[corpus], jobs=jobs,
                                              cache_dir=cache_root / str(next(counter)))), repeat)
    finally:
        shutil.rmtree(cache_root, ignore_errors=True)


def _cold_in_process(corpus: Path, jobs: int, source: Path | None) -> float:
    """One cold scan in a fresh interpreter, with dpcheck imported from ``source`` (default:
    the dpcheck this script runs with); the interpreter start and imports are not timed."""
    env = dict(os.environ)
    if source is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(source), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    command = [sys.executable, str(Path(__file__).resolve()), str(corpus), "--jobs", str(jobs),
               "--repeat", "1", "--cold-only"]
    output = subprocess.run(command, env=env, capture_output=True, text=True, check=True).stdout
    return float(output.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--fixit", action="store_true", help="also time `fixit lint` if installed")
    parser.add_argument("--reference", type=Path, metavar="SRC",
                        help="also time cold scans by the dpcheck source tree SRC, alternating")
    parser.add_argument("--cold-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.cold_only:
        print(f"{cold_scan(args.corpus, args.jobs, args.repeat):.6f}")
        return

    files = list(discover_files([args.corpus]).files)
    notebooks = [p for p in files if p.suffix == NOTEBOOK_SUFFIX]
    lines = sum(p.read_bytes().count(b"\n") for p in files if p.suffix != NOTEBOOK_SUFFIX)
    print(f"corpus: {args.corpus} — {len(files) - len(notebooks)} Python files, {lines} lines, "
          f"{len(notebooks)} notebooks, jobs={args.jobs}")

    parse_s = _best(lambda: bare_parse(files), args.repeat)
    cold_s = cold_scan(args.corpus, args.jobs, args.repeat)
    cache_root = Path(tempfile.mkdtemp(prefix="dpcheck-bench-"))
    warm_dir = cache_root / "warm"
    scan(ScanOptions(paths=[args.corpus], jobs=args.jobs, cache_dir=warm_dir))
    warm_s = _best(lambda: scan(ScanOptions(paths=[args.corpus], jobs=args.jobs, cache_dir=warm_dir)), args.repeat)
    shutil.rmtree(cache_root, ignore_errors=True)

    print(f"bare libcst parse : {parse_s:8.3f} s")
    print(f"dpcheck cold scan : {cold_s:8.3f} s   ratio to bare parse {cold_s / parse_s:5.2f}x (target <= 1.0x)")
    print(f"dpcheck warm scan : {warm_s:8.3f} s   cold/warm {cold_s / warm_s:6.1f}x (target >= 10x)")
    if args.reference is not None:
        ours, theirs = [], []
        for _ in range(args.repeat):
            theirs.append(_cold_in_process(args.corpus, args.jobs, args.reference))
            ours.append(_cold_in_process(args.corpus, args.jobs, None))
        print(f"cold scan, fresh processes, alternating ({args.repeat} each): this tree "
              f"{min(ours):.3f} s, {args.reference} {min(theirs):.3f} s, "
              f"ratio {min(ours) / min(theirs):.3f} (medians {sorted(ours)[len(ours) // 2]:.3f} / "
              f"{sorted(theirs)[len(theirs) // 2]:.3f} s)")
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
