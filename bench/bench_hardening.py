"""Benchmark: hostile inputs finish the scan in bounded time (README, "Security model").

Usage: python bench/bench_hardening.py [--jobs N]

Each case is one project in a temp dir, scanned cold (no cache) by the CLI in a fresh process,
so every figure includes interpreter start-up; all cases run in one session on the same machine,
so their ratios are meaningful even where absolute seconds are not. Results go to
bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

MEGABYTE = 1_000_000


def _functions(count: int) -> str:
    """A candidate module of ``count`` functions, each calling the next (one long call chain)."""
    body = "".join(
        f"def f{i}(a, b):\n    return f{i + 1}(torch.sum(a) / len(b), b)\n" for i in range(count)
    )
    return "import torch\nfrom opacus.accountants import RDPAccountant\n\n" + body + (
        "accountant = RDPAccountant()\nf0(1, 2)\nprint(accountant.get_epsilon(1e-5))\n"
    )


CASES: dict[str, Callable[[], dict[str, str | bytes]]] = {
    "empty project": lambda: {"a.py": "x = 1\n"},
    "1 MB single line (syntax error at its end)": lambda: {
        "minified.py": "x = 1; " * (MEGABYTE // 7) + "y = (\n"},
    "5 MB of functions (just under the size cap)": lambda: {"big.py": _functions(80_000)},
    "6 MB file (over the size cap)": lambda: {"huge.py": "x = 1\n" * MEGABYTE},
    "50,000-function module": lambda: {"train.py": _functions(50_000)},
    "100,000-term expression chain": lambda: {
        "chain.py": "import opacus\nx = " + "+".join(["a"] * 100_000) + "\n"},
    "190 nested calls, 99 nested defs": lambda: {
        "deep.py": "import opacus\nx = " + "f(" * 190 + ")" * 190 + "\n" + "".join(
            " " * i + f"def g{i}():\n" for i in range(99)) + " " * 99 + "return 1\n"},
}


def _scan(root: Path, jobs: int, extra: list[str]) -> tuple[float, dict]:
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "dpcheck", "scan", "--no-cache", "--jobs", str(jobs),
         "--format", "json", *extra, str(root)],
        capture_output=True, text=True, check=False,
    )
    seconds = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(f"{root}: exit {done.returncode}: {done.stderr[-2000:]}")
    return seconds, json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    print("| case | input | scan (s) | result |")
    print("|---|---|---|---|")
    for name, make in CASES.items():
        with tempfile.TemporaryDirectory(prefix="dpcheck-hardening-") as scratch:
            root = Path(scratch)
            size = 0
            for relative, text in make().items():
                path = root / relative
                path.parent.mkdir(parents=True, exist_ok=True)
                data = text.encode() if isinstance(text, str) else text
                path.write_bytes(data)
                size += len(data)
            seconds, report = _scan(root, args.jobs, [])
            dp001 = [f["message"].split(": ", 1)[1] for f in report["findings"]
                     if f["rule"] == "DP001"]
            outcome = dp001[0] if dp001 else f"{len(report['findings'])} findings"
            internal = sum(e["internal"] for e in report["errors"])
            files = report["files_scanned"]
            print(f"| {name} | {size / MEGABYTE:.1f} MB, {files} files | {seconds:.1f} | "
                  f"{outcome}{f'; {internal} internal errors' if internal else ''} |", flush=True)
    _time_budget_case(args.jobs)


def _time_budget_case(jobs: int) -> None:
    """The time budget at work: the 5 MB module again, in-process, with a 2 s budget."""
    from dpcheck.engine import ScanOptions, scan

    with tempfile.TemporaryDirectory(prefix="dpcheck-hardening-") as scratch:
        root = Path(scratch)
        (root / "big.py").write_text(_functions(80_000), encoding="utf-8")
        start = time.perf_counter()
        result = scan(ScanOptions(paths=[root], jobs=jobs, use_cache=False, file_time_budget=2.0))
        seconds = time.perf_counter() - start
        [message] = [f.message.split(": ", 1)[1] for f in result.findings if f.rule == "DP001"]
        print(f"| 5 MB of functions, 2 s time budget (in-process) | 4.9 MB, 1 files | "
              f"{seconds:.1f} | {message} |", flush=True)


if __name__ == "__main__":
    main()
