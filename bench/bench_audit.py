"""Benchmark of `dpcheck audit`: the Figure 3 trend of Wang, Cui, Cui, Yuan (2026), and throughput.

Run ``PYTHONPATH=. python bench/bench_audit.py [--trials 10000] [--device cpu|cuda]``. It prints
markdown tables (for bench/RESULTS.md):

1. Figure 3 trend (Wang, Cui, Cui, Yuan 2026, §5.2; docs/theory.md#audit): one-step audits at N=4,
   sigma=10, C=0.1, delta=1e-5 for dimensions n in {1, 10, 50, 100, 500, 1000}: EASGM at q=0.5 and
   q=0.05, ASGM at q=0.7. Leakage should grow with n and exceed the SGM claim for n >= 100.
2. Speed: Gaussian coordinates generated and tested per second, and the wall time of a
   10,000-trial audit at n=1e4 on CPU (and at n=1e6 with --device cuda).
"""

from __future__ import annotations

import argparse
import time

import torch

from dpcheck.audit.mechanisms import simulate_reference
from dpcheck.audit.releases import resolve_device
from dpcheck.audit.runner import AuditOptions, run_audit
from dpcheck.audit.setting import AuditSetting

DIMENSIONS = (1, 10, 50, 100, 500, 1000)
TREND_CASES = (("EASGM", 0.5), ("EASGM", 0.05), ("ASGM", 0.7))


def trend_table(trials: int, device: str) -> str:
    """Markdown table of ε_L, δ_L(ε_claimed), β(0.05) and the verdict across n."""
    rows = [
        "| mechanism | q | n | eps_L | claimed eps | delta_L at claimed eps | beta(0.05) | "
        "beta_upper(0.05) | claimed beta(0.05) | verdict |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for mechanism, q in TREND_CASES:
        for dim in DIMENSIONS:
            setting = AuditSetting(mechanism, 4, q, 10.0, 0.1, dim)
            report = run_audit(setting, AuditOptions(trials=trials, device=device)).to_json()
            point = next(p for p in report["empirical"]["curve"] if p["alpha"] == 0.05)
            claimed = next(p for p in report["claimed"]["curve"] if p["alpha"] == 0.05)
            rows.append(
                f"| {mechanism} | {q} | {dim} | {report['epsilon_lower']:.3f} | "
                f"{report['claimed']['epsilon_at_delta']:.4f} | "
                f"{report['empirical']['delta_at_claimed_epsilon']:.4f} | {point['beta']:.4f} | "
                f"{point['beta_upper']:.4f} | {claimed['beta']:.4f} | {report['verdict']} |"
            )
    return "\n".join(rows)


def speed_table(trials: int, dim: int, device: str) -> str:
    """Throughput of the reference releases alone and wall time of the whole audit."""
    setting = AuditSetting("EASGM", 4, 0.5, 10.0, 0.1, dim)
    torch_device = resolve_device(device)
    generator = torch.Generator(device=torch_device).manual_seed(0)
    simulate_reference(setting, False, min(trials, 200), generator, torch_device)  # warm-up
    if torch_device.type == "cuda":
        torch.cuda.synchronize()
    start = time.perf_counter()
    simulate_reference(setting, False, trials, generator, torch_device)
    simulate_reference(setting, True, trials, generator, torch_device)
    if torch_device.type == "cuda":
        torch.cuda.synchronize()
    simulate_s = time.perf_counter() - start
    start = time.perf_counter()
    run_audit(setting, AuditOptions(trials=trials, device=device))
    audit_s = time.perf_counter() - start
    coords = 2 * trials * dim
    return "\n".join([
        "| device | threads | n | trials per dataset | coordinates | releases (s) | "
        "coords/s | full audit wall (s) |",
        "|---|---|---|---|---|---|---|---|",
        f"| {device} | {torch.get_num_threads()} | {dim:.0e} | {trials} | {coords:.1e} | "
        f"{simulate_s:.2f} | {coords / simulate_s:.2e} | {audit_s:.2f} |",
    ])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=10_000)
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--skip-trend", action="store_true")
    args = parser.parse_args()
    if not args.skip_trend:
        print(f"## Figure 3 trend ({args.trials} trials per dataset, N=4, sigma=10, C=0.1)\n")
        print(trend_table(args.trials, args.device), "\n")
    print("## Speed\n")
    dim = 10**6 if args.device == "cuda" else 10**4
    print(speed_table(args.trials, dim, args.device))


if __name__ == "__main__":
    main()
