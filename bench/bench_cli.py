"""Benchmark: what a user waits for at the command line, each figure beside its anchor.

Usage: ``python bench/bench_cli.py CORPUS [--runs 5] [--jobs N] [--scale-scripts 1000]``

Every row runs the installed ``dpcheck`` command in a fresh process, as a pre-commit hook or a CI
step does, and reports the median of ``--runs`` runs (the machine is shared, so compare ratios
measured in the same run, not seconds across runs):

* start-up: ``python -c pass`` and ``ruff --version`` (if installed) against ``dpcheck
  --version`` and ``dpcheck rules``;
* the corpus (a copy of CORPUS in a temporary folder, so its cache is the benchmark's): a cold
  scan (``--no-cache``) against a bare ``libcst.parse_module`` of the same files (in process),
  a warm scan of the unchanged tree, a scan after appending a comment to a file that is no
  candidate (``--quiet-file``: default the first file the text pre-filter passes over), and a
  scan after appending a comment to a training script (``--script``);
* the pre-commit hook's run: a generated project of ``--scale-scripts`` training scripts
  (``bench_scale.generate``), warm, with one script edited and named on the command line; then
  the same after a scan of the whole project (as a user who also scans it has: its cache then
  holds every file's summary and the whole project's linking).

Results go to bench/RESULTS.md.
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
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_scale import generate  # noqa: E402
from bench_scan import bare_parse  # noqa: E402

from dpcheck.discover.files import discover_files  # noqa: E402
from dpcheck.parse.notebook import display_text  # noqa: E402
from dpcheck.parse.source import is_candidate  # noqa: E402
from dpcheck.sites import CANDIDATE_MARKERS  # noqa: E402


def timed(command: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(command, cwd=cwd, capture_output=True, check=False)
    return time.perf_counter() - start


def median_of(runs: int, action: Callable[[], float]) -> float:
    return statistics.median(action() for _ in range(runs))


def edited(path: Path, command: list[str], cwd: Path) -> Callable[[], float]:
    """A timed run of ``command`` after appending a comment line to ``path``."""
    counter = iter(range(10**6))

    def run() -> float:
        with path.open("a", encoding="utf-8") as handle:
            handle.write(f"# edit {next(counter)}\n")
        return timed(command, cwd)

    return run


def first_quiet_file(root: Path) -> Path:
    """The first Python file of ``root`` the candidate pre-filter passes over."""
    for path in sorted(discover_files([root]).files):
        text = display_text(path.name, path.read_bytes())
        if path.suffix == ".py" and not is_candidate(text, tuple(CANDIDATE_MARKERS)):
            return path
    raise SystemExit(f"{root}: every Python file is a candidate; name one with --quiet-file")


def row(name: str, seconds: float, note: str = "") -> None:
    print(f"| {name} | {seconds:.3f} s | {note} |")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--script", default="examples/mnist.py",
                        help="a training script of the corpus, relative to it")
    parser.add_argument("--quiet-file", default=None, help="a file that is no candidate, relative")
    parser.add_argument("--scale-scripts", type=int, default=1000)
    args = parser.parse_args()
    dpcheck = [shutil.which("dpcheck") or "dpcheck"]
    here = Path.cwd()

    print(f"| measure | median of {args.runs} | anchor / ratio |")
    print("|---|---|---|")
    python_s = median_of(args.runs, lambda: timed([sys.executable, "-c", "pass"], here))
    row("`python -c pass`", python_s, "anchor: starting Python")
    if shutil.which("ruff"):
        row("`ruff --version`", median_of(args.runs, lambda: timed(["ruff", "--version"], here)), "anchor")
    row("`dpcheck --version`", median_of(args.runs, lambda: timed([*dpcheck, "--version"], here)),
        "target <= 0.12 s")
    row("`dpcheck rules`", median_of(args.runs, lambda: timed([*dpcheck, "rules"], here)), "target <= 0.2 s")

    with tempfile.TemporaryDirectory(prefix="dpcheck-bench-cli-") as tmp:
        corpus = Path(tmp) / "corpus"
        shutil.copytree(args.corpus, corpus, ignore=shutil.ignore_patterns(".dpcheck_cache", ".git"))
        files = list(discover_files([corpus]).files)
        scan = [*dpcheck, "scan", "--quiet", "--jobs", str(args.jobs), "."]
        parse_s = median_of(args.runs, lambda: _in_process(lambda: bare_parse(files)))
        cold_s = median_of(args.runs, lambda: timed([*scan, "--no-cache"], corpus))
        row("bare `libcst.parse_module` of the corpus (in process)", parse_s, "anchor")
        row("cold scan (`--no-cache`)", cold_s, f"{cold_s / parse_s:.2f}x the bare parse (target <= 1.0x)")
        timed(scan, corpus)
        warm_s = median_of(args.runs, lambda: timed(scan, corpus))
        row("warm scan, nothing changed", warm_s, f"cold/warm {cold_s / warm_s:.1f}x (targets <= 0.25 s, >= 6x)")
        quiet = corpus / args.quiet_file if args.quiet_file else first_quiet_file(corpus)
        row(f"one changed non-DP file (`{quiet.relative_to(corpus)}`)",
            median_of(args.runs, edited(quiet, scan, corpus)), "target <= 0.35 s")
        row(f"one changed training script (`{args.script}`)",
            median_of(args.runs, edited(corpus / args.script, scan, corpus)), "target <= 0.6 s")

        project = Path(tmp) / "scale"
        generate(project, args.scale_scripts)
        subprocess.run(["git", "init", "-q"], cwd=project, check=True)
        named = project / "experiments" / "group0" / "train_0.py"
        hook = [*dpcheck, "scan", "--quiet", str(named.relative_to(project))]
        timed(hook, project)
        row(f"pre-commit: one edited script named, {args.scale_scripts}-script project, warm",
            median_of(args.runs, edited(named, hook, project)), "target <= 0.4 s")
        timed([*dpcheck, "scan", "--quiet", "--jobs", str(args.jobs), "."], project)
        row("pre-commit, the same after a scan of the whole project",
            median_of(args.runs, edited(named, hook, project)), "target <= 0.4 s")


def _in_process(action: Callable[[], None]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


if __name__ == "__main__":
    main()
