"""Benchmark: the full bound report of an EASGM finding (witness, per-pair T-round guarantee,
claimed PLD) for a model with n = 1.5e6 parameters and T = 3500 steps (target: <= 1 s), and the
same report again from the per-parameter-set cache.

Usage: python bench/bench_bounds.py [--dim 1500000] [--steps 3500] [--repeat 3]
"""

from __future__ import annotations

import argparse
import time

from dpcheck.bounds.report import build_report
from dpcheck.bounds.request import BoundRequest


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dim", type=int, default=1_500_000)
    parser.add_argument("--steps", type=int, default=3500)
    parser.add_argument("--N", type=int, default=50_000)
    parser.add_argument("--q", type=float, default=0.01)
    parser.add_argument("--sigma", type=float, default=1.0)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    request = BoundRequest("easgm", sigma=args.sigma, q=args.q, n_records=args.N, steps=args.steps,
                           dim=args.dim, accountant="opacus-rdp")
    cold = []
    for _ in range(args.repeat):
        build_report.cache_clear()
        start = time.perf_counter()
        report = build_report(request)
        cold.append(time.perf_counter() - start)
    start = time.perf_counter()
    build_report(request)
    warm = time.perf_counter() - start
    j = report.to_json()
    print(f"EASGM n={args.dim} T={args.steps} N={args.N} q={args.q} sigma={args.sigma}")
    print(f"  full report (cold, best of {args.repeat}): {min(cold):.3f} s   cached: {warm * 1e6:.0f} us")
    for part in ("claimed", "witness", "guarantee"):
        b = j[part]
        if b is not None:
            print(f"  {part:9s} [{b['label']}] eps(delta)={b['epsilon_at_delta']} delta(eps)={b['delta_at_epsilon']}")
    print(f"  verdict: {j['verdict']}")


if __name__ == "__main__":
    main()
