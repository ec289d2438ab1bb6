"""Benchmark: how a cold scan's time grows with the size of a project (linking must stay close to
linear), on generated projects and on dpcheck's own repository.

Usage: ``python bench/bench_scale.py [--sizes 10 100 1000] [--jobs N] [--self-repo PATH]``

Each generated project has N training scripts that share a helper package: an argparse config
factory every script calls, a chain of ``CHAIN`` helpers where each calls the next two (the
number of call paths through it grows like Fibonacci(CHAIN)), and two mutually recursive helpers
that pass the noise multiplier back and forth. Every script samples with a Bernoulli mask, adds
Gaussian noise to the clipped sum, divides by the realized batch size or a constant, and calls an
accountant, so every script is a pipeline with a finding or a decided SGM; all scripts share
their parameters, so the bounds of their findings are computed once and the figure measures
parsing and linking. The scan is run
without a cache in a fresh process per size (what a new CI runner pays); seconds per script
should stay about constant as N grows. ``--self-repo`` also times a cold scan of a git clone of
dpcheck itself and a cold and a warm scan of one named file in it (the pre-commit hook's run).
Results go to bench/RESULTS.md.
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

CHAIN = 24

CONFIG = '''
import argparse


def parser(description):
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--sigma", type=float, default=1.1)
    p.add_argument("--clip", type=float, default=1.0)
    p.add_argument("--lot", type=int, default=256)
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--mode", default="dp")
    return p
'''

RECURSIVE = '''
def pass_down(sigma, rounds):
    if rounds == 0:
        return sigma
    return pass_up(sigma, rounds - 1)


def pass_up(sigma, rounds):
    return pass_down(sigma, rounds)
'''

SCRIPT = '''
import numpy as np
import torch
from opacus.accountants import RDPAccountant

from shared.config import parser
from shared.chain import step0
from shared.recursive import pass_down

N = 60000


def per_example(model, xb, yb):
    return torch.stack([torch.ones(3) * float(i) for i in range(len(xb))])


def train(args, model, data, labels):
    q = args.lot / N
    sigma = pass_down(args.sigma, 3)
    accountant = RDPAccountant()
    for epoch in range(args.epochs):
        for _ in range(int(1 / q)):
            mask = torch.rand(N) < q
            xb, yb = data[mask], labels[mask]
            grads = per_example(model, xb, yb)
            norms = grads.norm(dim=1, keepdim=True)
            clipped = grads / torch.clamp(norms / args.clip, min=1.0)
            noisy = clipped.sum(0) + torch.normal(0.0, sigma * args.clip, size=(3,))
            update = noisy / {divisor}
            step0(args.mode, update)
            accountant.step(noise_multiplier=args.sigma, sample_rate=q)
    return accountant.get_epsilon(1e-5)


if __name__ == "__main__":
    train(parser("script {i}").parse_args(), None, torch.zeros(N, 3), torch.zeros(N))
'''


def chain(length: int) -> str:
    """Helpers where each calls the next two, dispatching on a configured mode."""
    lines = ["import torch", ""]
    for i in range(length):
        calls = [f"    step{j}(mode, x)" for j in (i + 1, i + 2) if j < length]
        lines += [f"def step{i}(mode, x):", "    if mode == 'dp':", "        x = x * 1.0",
                  *(calls or ["    return x"]), ""]
    return "\n".join(lines)


def generate(root: Path, scripts: int) -> None:
    """A project of ``scripts`` training scripts sharing the helper package (module docstring)."""
    shared = root / "shared"
    shared.mkdir(parents=True)
    (shared / "__init__.py").write_text("")
    (shared / "config.py").write_text(CONFIG)
    (shared / "chain.py").write_text(chain(CHAIN))
    (shared / "recursive.py").write_text(RECURSIVE)
    (root / "requirements.txt").write_text("opacus==1.4.0\ntorch==2.13.0\n")
    for i in range(scripts):
        folder = root / "experiments" / f"group{i // 50}"
        folder.mkdir(parents=True, exist_ok=True)
        divisor = "len(xb)" if i % 2 else "args.lot"
        text = SCRIPT.format(divisor=divisor, i=i)
        (folder / f"train_{i}.py").write_text(text)


def timed(command: list[str], cwd: Path) -> tuple[float, str]:
    """Wall time of a command in a fresh process, and its last output line."""
    start = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}): {done.stderr[-2000:]}")
    last = (done.stdout.strip().splitlines() or [""])[-1]
    return elapsed, last


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 100, 1000])
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--self-repo", type=Path, help="a git clone of dpcheck to scan as well")
    args = parser.parse_args()
    dpcheck = [sys.executable, "-m", "dpcheck", "scan", "-q", "--jobs", str(args.jobs)]
    workdir = Path(tempfile.mkdtemp(prefix="dpcheck-scale-"))
    print(f"| scripts | files | cold scan (s) | per script (ms) | result |")
    print(f"|---|---|---|---|---|")
    try:
        for size in args.sizes:
            root = workdir / f"p{size}"
            generate(root, size)
            files = sum(1 for _ in root.rglob("*.py"))
            elapsed, last = timed([*dpcheck, "--no-cache", "."], root)
            print(f"| {size} | {files} | {elapsed:.2f} | {1000 * elapsed / size:.1f} | {last} |")
        if args.self_repo is not None:
            repo = args.self_repo
            named = "fixtures/mnist_opacus_feasgm/train.py"
            cache = workdir / "self-cache"
            whole, last = timed([*dpcheck, "--no-cache", "."], repo)
            print(f"\ndpcheck's own repository ({repo}): cold scan {whole:.2f} s — {last}")
            cold, last = timed([*dpcheck, "--cache-dir", str(cache), named], repo)
            warm, _ = timed([*dpcheck, "--cache-dir", str(cache), named], repo)
            print(f"one named file ({named}): cold {cold:.2f} s, warm {warm:.2f} s — {last}")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
