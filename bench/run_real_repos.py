"""Scan local clones of real DP training repositories and print one summary per repository.

Usage: PYTHONPATH=. python bench/run_real_repos.py CLONE [CLONE ...] [--json-dir DIR] [--jobs N]

Each CLONE is a directory already on disk (a clone or an extracted snapshot); this script never
fetches anything. For every clone it runs a cold ``dpcheck scan`` (no cache) in-process, times it,
and prints the pipelines (entry, mechanism, sampling, accountant) and the findings (rule,
file:line) as Markdown, ready to be pasted into ``bench/REAL_REPOS.md`` and judged by hand there.
``--json-dir`` also writes each full JSON report as ``DIR/<name>.json`` for a closer look.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import git

from dpcheck.engine import ScanOptions, scan
from dpcheck.errors import DpcheckError
from dpcheck.model import ScanResult


@dataclass(frozen=True)
class RepoScan:
    """One timed scan of one clone."""

    name: str
    commit: str
    seconds: float
    result: ScanResult


def head_commit(clone: Path) -> str:
    """The clone's HEAD commit, or ``n/a`` for a snapshot that is not a git work tree."""
    try:
        return git.Repo(clone, search_parent_directories=False).head.commit.hexsha
    except (git.InvalidGitRepositoryError, git.NoSuchPathError, ValueError):
        return "n/a"


def scan_clone(clone: Path, jobs: int) -> RepoScan:
    """Cold-scan one clone (cache off, so the time is the real analysis time)."""
    if not clone.is_dir():
        raise DpcheckError(f"{clone}: not a directory (pass the path of a local clone)")
    start = time.perf_counter()
    result = scan(ScanOptions(paths=(clone,), jobs=jobs, use_cache=False))
    return RepoScan(clone.resolve().name, head_commit(clone), time.perf_counter() - start, result)


def summary_table(scans: list[RepoScan]) -> str:
    """One Markdown row per repository: size, time, pipelines by mechanism, findings by rule."""
    rows = [
        "| repository | commit | files | scan s | pipelines (mechanism × n) | findings (rule × n) | errors |",
        "|---|---|---|---|---|---|---|",
    ]
    for s in scans:
        mechanisms = Counter(p.mechanism for p in s.result.pipelines)
        rules = Counter(f.rule for f in s.result.findings)
        rows.append(
            f"| {s.name} | {s.commit[:10]} | {s.result.files_scanned} | {s.seconds:.2f} "
            f"| {_counts(mechanisms)} | {_counts(rules)} | {len(s.result.errors)} |"
        )
    return "\n".join(rows)


def details(s: RepoScan) -> str:
    """Every pipeline and every finding of one scan, with file:line anchors."""
    lines = [f"### {s.name}", "", "Pipelines:", ""]
    for p in s.result.pipelines:
        acct = p.accountant
        q = acct.q.value if acct.q else None
        steps = acct.steps.value if acct.steps else None
        params = ", ".join(f"{k}={v.value}" for k, v in sorted(p.params.items()))
        lines.append(
            f"* `{p.entry}` ({p.path}:{p.line}): mechanism={p.mechanism}, sampling={p.sampling}, "
            f"library={p.library}, accountant={acct.name} [{acct.assumes}] q={q} steps={steps}; "
            f"params: {params or '-'}"
        )
    lines += ["", "Findings:", ""]
    lines += [
        f"* {f.rule} {f.span.path}:{f.span.line} (pipeline `{f.pipeline}`): {f.message}"
        for f in s.result.findings
    ] or ["* none"]
    lines += [f"* scan error {e.path}: {e.message}" for e in s.result.errors]
    return "\n".join(lines) + "\n"


def _counts(counter: Counter[str]) -> str:
    return ", ".join(f"{k} × {n}" for k, n in sorted(counter.items())) or "-"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("clones", nargs="+", type=Path, metavar="CLONE")
    parser.add_argument("--json-dir", type=Path, help="also write each JSON report to DIR/<name>.json")
    parser.add_argument("--jobs", type=int, default=1, help="parallel processes per scan (default 1)")
    args = parser.parse_args(argv)
    try:
        scans = [scan_clone(clone, args.jobs) for clone in args.clones]
    except DpcheckError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(summary_table(scans), end="\n\n")
    for s in scans:
        print(details(s))
        if args.json_dir is not None:
            args.json_dir.mkdir(parents=True, exist_ok=True)
            report = json.dumps(s.result.to_json("bench"), indent=1)
            (args.json_dir / f"{s.name}.json").write_text(report, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
