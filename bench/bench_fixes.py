"""What the fix stage costs a scan: proposing (libcst) and verifying (a re-scan with the edits in
memory), against the scan it follows.

For each case (a fixture copied outside the checkout, optionally padded with plain modules to
make the re-scan's file walk, reads and cache look-ups count), one process measures, best of
``--repeat``:

* ``scan``: ``gated_scan`` alone, warm cache (the report without the fix stage);
* ``fix stage, first``: ``plan_fixes`` over its findings, the re-scan's project state not yet
  cached (what the first run after an edit pays);
* ``fix stage, warm``: ``plan_fixes`` again (the re-scan's state cached: what every later run,
  a pre-commit hook on an unchanged project, pays).

Run: ``python bench/bench_fixes.py [--repeat 3] [--padding 0 300]``. Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from dpcheck.engine import ScanOptions, settle  # noqa: E402
from dpcheck.fixing import plan_fixes  # noqa: E402
from dpcheck.gate import GateOptions, gated_scan  # noqa: E402

CASES = {
    "mnist_opacus_feasgm": "DP101 in Opacus: no fix, decided without parsing",
    "torch_loop_asgm_len_batch": "DP101 hand-written: no public batch size, file parsed",
    "accountant_steps_mismatch": "DP103: one fix proposed and verified",
    "opacus1_unpinned_era_shuffle": "DP102 + DP105: two fixes verified (unsafe on)",
}


def _best(run: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def _project(name: str, padding: int, where: Path) -> Path:
    root = where / f"{name}-{padding}"
    shutil.copytree(ROOT / "fixtures" / name, root, ignore=shutil.ignore_patterns("expected.json"))
    for i in range(padding):
        (root / "pad" / f"m{i:04d}.py").parent.mkdir(exist_ok=True)
        (root / "pad" / f"m{i:04d}.py").write_text(
            f'"""Filler module {i}."""\n\n\ndef f{i}(x):\n    return x * {i} + 1\n', "utf-8")
    return root


def measure(name: str, padding: int, repeat: int, where: Path) -> tuple[float, float, float]:
    root = _project(name, padding, where)
    settings = settle(ScanOptions(paths=[root], jobs=1, cache_dir=where / f"cache-{name}-{padding}"))
    gated_scan(settings, GateOptions())  # fill the cache
    scan_time = _best(lambda: gated_scan(settings, GateOptions()), repeat)
    outcome = gated_scan(settings, GateOptions())
    findings = outcome.result.findings

    def stage() -> None:
        plan_fixes(settings, outcome.scanned or outcome.result, findings, unsafe=True)

    start = time.perf_counter()
    stage()
    first = time.perf_counter() - start
    return scan_time, first, _best(stage, repeat)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--padding", type=int, nargs="+", default=[0, 300])
    args = parser.parse_args()
    print("| case | extra files | scan (warm) | fix stage, first | fix stage, warm |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="dpcheck-bench-fixes-") as folder:
        for padding in args.padding:
            for name, what in CASES.items():
                scan_time, first, warm = measure(name, padding, args.repeat, Path(folder))
                print(f"| `{name}` ({what}) | {padding} | {scan_time:.3f} s | {first:.3f} s | "
                      f"{warm:.3f} s |")


if __name__ == "__main__":
    main()
