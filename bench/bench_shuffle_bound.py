"""Benchmark: the full bound of a DP102 finding (shuffled fixed-size batches accounted as Poisson)
at M = 10^6 batches per epoch and E = 100 epochs (T = 10^8 rounds), through the same path a scan
takes (plan -> request -> report -> JSON and summary lines), cold and from the per-request cache;
then the parts on their own; then the multi-epoch witness on the setting of Chua et al.'s example
(sigma = 0.35, 1000 batches per epoch) next to the deterministic and Poisson numbers.

Usage: python bench/bench_shuffle_bound.py [--batches 1000000] [--epochs 100] [--repeat 3]
"""

from __future__ import annotations

import argparse
import time

from dpcheck.bounds.attach import bound_for
from dpcheck.bounds.corrected import sgm_upper
from dpcheck.bounds.report import build_report
from dpcheck.model import Accountant, Finding, ParamValue, Pipeline, Severity, Span
from dpcheck.privacy.fixed_batches import FIXED_SIZE_SHIFTS, MaxStatisticPair, deterministic_mu, max_statistic_witnesses
from dpcheck.privacy.gdp import gdp_epsilon
from dpcheck.privacy.rdp import poisson_sgm_rdp_epsilon


def _pipeline(n: int, batch: int, sigma: float, epochs: int) -> Pipeline:
    params = {name: ParamValue(name, value, "literal") for name, value in
              (("N", n), ("batch_size", batch), ("sigma", sigma), ("epochs", epochs), ("clip", 1.0))}
    return Pipeline(entry="train.py", path="train.py", line=1, mechanism="fixed-mean", sampling="shuffle",
                    sampler="shuffle", accountant=Accountant("opacus-rdp", "SGM+poisson"), params=params)


def _timed(call, repeat: int) -> tuple[float, object]:  # type: ignore[no-untyped-def]
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        result = call()
        best = min(best, time.perf_counter() - start)
    return best, result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--batches", type=int, default=1_000_000)
    parser.add_argument("--batch-size", type=int, default=50)
    parser.add_argument("--epochs", type=int, default=100)
    parser.add_argument("--sigma", type=float, default=1.0)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    n = args.batches * args.batch_size
    pipeline = _pipeline(n, args.batch_size, args.sigma, args.epochs)
    finding = Finding("DP102", Severity.ERROR, Span("train.py", 1), "shuffled batches", pipeline="train.py")

    def cold() -> tuple[dict, object]:
        build_report.cache_clear()
        sgm_upper.cache_clear()
        return bound_for(finding, pipeline)  # type: ignore[return-value]

    seconds, (bound, report) = _timed(cold, args.repeat)  # type: ignore[misc]
    start = time.perf_counter()
    bound_for(finding, pipeline)
    cached = time.perf_counter() - start
    print(f"DP102 finding: N={n:,}, b={args.batch_size}, M={args.batches:,}, E={args.epochs}, sigma={args.sigma}"
          f", T={args.batches * args.epochs:,}")
    print(f"  full bound (cold, best of {args.repeat}): {seconds:.2f} s   cached: {cached * 1e6:.0f} us")
    for line in bound["summary"]:
        print(f"  | {line}")
    for part, how in bound["computation"].items():
        print(f"  {part:9s}: {how}")

    q, steps = 1.0 / args.batches, args.batches * args.epochs
    t_rdp, eps_rdp = _timed(lambda: poisson_sgm_rdp_epsilon(q, args.sigma, steps, 1e-5), args.repeat)

    def claimed_pld() -> float:
        sgm_upper.cache_clear()
        return sgm_upper(q, args.sigma, steps).epsilon(1e-5)

    t_pld, eps_pld = _timed(claimed_pld, args.repeat)
    pair = MaxStatisticPair(args.batches, args.sigma, *FIXED_SIZE_SHIFTS)
    t_wit, (one, many) = _timed(lambda: max_statistic_witnesses(pair, args.epochs), args.repeat)  # type: ignore[misc]
    mu = deterministic_mu(args.epochs, args.sigma)
    t_gdp, eps_gdp = _timed(lambda: float(gdp_epsilon(1e-5, mu)), args.repeat)
    print("  parts (best of repeats):")
    print(f"    claimed, Opacus RDP eps(1e-5) = {eps_rdp:.4f}   {t_rdp:.3f} s")
    print(f"    claimed curve, SGM PLD eps(1e-5) = {eps_pld:.4f}   {t_pld:.3f} s")
    print(f"    witness one epoch / E epochs eps(1e-5) = {one.pld.epsilon(1e-5):.4f} / {many.pld.epsilon(1e-5):.4f}"
          f"   {t_wit:.3f} s ({many.describe()})")
    print(f"    guarantee sqrt(E)/sigma = {mu:.4g}-GDP eps(1e-5) = {eps_gdp:.4f}   {t_gdp * 1e3:.2f} ms")

    print("\nChua et al.'s example setting: sigma = 0.35, 1000 batches per epoch, delta = 1e-5")
    print("  E | witness eps (max statistic, PLD) | deterministic sqrt(E)/sigma-GDP eps | Poisson q=1/1000 RDP eps")
    for epochs in (1, 2, 5, 10):
        _, composed = max_statistic_witnesses(MaxStatisticPair(1000, 0.35, *FIXED_SIZE_SHIFTS), epochs)
        print(f"  {epochs:2d} | {composed.pld.epsilon(1e-5):8.3f} | {float(gdp_epsilon(1e-5, deterministic_mu(epochs, 0.35))):8.3f}"
              f" | {poisson_sgm_rdp_epsilon(1e-3, 0.35, 1000 * epochs, 1e-5):8.3f}")


if __name__ == "__main__":
    main()
