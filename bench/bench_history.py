"""Benchmark of `dpcheck history` on a real Opacus clone: the full history cold and warm.

Run ``PYTHONPATH=. python bench/bench_history.py REPO [--package opacus] [--repeat 3]``
(REPO: a clone or bare mirror of github.com/pytorch/opacus, kept outside the project). Each run
is a fresh ``python -m dpcheck history`` process (interpreter start and imports included):
"cold" with an empty cache directory, "warm" against the cache the cold run wrote. The package
is first copied to a temporary directory, because the cache namespace fingerprints dpcheck's
own files and edits elsewhere in a working tree would otherwise turn a warm run cold. It prints
the timings (targets: cold <= 15 s, warm <= 2 s on a 2-core machine) and the grouped table
with its evidence, as markdown for bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "dpcheck"


def _history(snapshot: Path, repo: str, package: str, cache: Path, *more: str) -> tuple[float, str]:
    env = {**os.environ, "PYTHONPATH": str(snapshot)}
    command = [sys.executable, "-m", "dpcheck", "history", repo, "--package", package,
               "--cache-dir", str(cache), "--quiet", *more]
    start = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    return time.perf_counter() - start, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repo")
    parser.add_argument("--package", default="opacus")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="dpcheck-bench-") as tmp:
        snapshot = Path(tmp) / "src"
        shutil.copytree(PACKAGE, snapshot / "dpcheck",
                        ignore=shutil.ignore_patterns("__pycache__"))
        cold, warm = [], []
        for index in range(args.repeat):
            cache = Path(tmp) / f"cache{index}"
            cold.append(_history(snapshot, args.repo, args.package, cache)[0])
            warm.append(_history(snapshot, args.repo, args.package, cache)[0])
        _, table = _history(snapshot, args.repo, args.package, Path(tmp) / "cache0",
                            "--format", "md", "--group", "--evidence")
    print("| run | median s | min s | max s |\n|---|---|---|---|")
    for name, times in (("cold", cold), ("warm", warm)):
        print(f"| {name} | {statistics.median(times):.2f} | {min(times):.2f} | {max(times):.2f} |")
    print()
    print(table)


if __name__ == "__main__":
    main()
