"""Benchmark: T-round SGM eps(delta = 1e-5) at q = 0.01, sigma = 1 for T = 1000 and 10^4,
dpcheck's PLD (default grid) against dp_accounting's PLDAccountant at interval 1e-3.

Accuracy is measured against a reference: dp_accounting at interval 2e-5 (pessimistic, error
well under 1e-4 here). Times are the best of ``REPEATS`` runs. Run:
    PYTHONPATH=. python bench/bench_sgm_accounting.py
"""

from __future__ import annotations

import time
from collections.abc import Callable

import dp_accounting
from dp_accounting import pld

from dpcheck.privacy.pld import default_interval
from dpcheck.privacy.sgm import poisson_sgm_epsilon

Q, SIGMA, DELTA = 0.01, 1.0, 1e-5
STEPS = (1000, 10_000)
REPEATS = 5


def dp_accounting_epsilon(steps: int, interval: float) -> float:
    accountant = pld.PLDAccountant(value_discretization_interval=interval)
    event = dp_accounting.PoissonSampledDpEvent(Q, dp_accounting.GaussianDpEvent(SIGMA))
    accountant.compose(dp_accounting.SelfComposedDpEvent(event, steps))
    return float(accountant.get_epsilon(DELTA))


def timed(run: Callable[[], float]) -> tuple[float, float]:
    """(value, best wall time in seconds)."""
    best, value = float("inf"), float("nan")
    for _ in range(REPEATS):
        start = time.perf_counter()
        value = run()
        best = min(best, time.perf_counter() - start)
    return value, best


def main() -> None:
    print(f"SGM q={Q} sigma={SIGMA} delta={DELTA}; best of {REPEATS} runs")
    header = f"{'T':>6} {'reference':>10} {'dpcheck eps':>12} {'err':>9} {'s':>7} {'h':>8}   "
    print(header + f"{'dp_acc eps':>11} {'err':>9} {'s':>7}   {'time ratio':>10}")
    for steps in STEPS:
        reference = dp_accounting_epsilon(steps, 2e-5)
        ours, t_ours = timed(lambda: poisson_sgm_epsilon(Q, SIGMA, steps, DELTA))
        theirs, t_theirs = timed(lambda: dp_accounting_epsilon(steps, 1e-3))
        print(
            f"{steps:>6} {reference:>10.6f} {ours:>12.6f} {ours - reference:>9.2e} {t_ours:>7.4f} "
            f"{default_interval(steps):>8.2e}   {theirs:>11.6f} {theirs - reference:>9.2e} {t_theirs:>7.4f}"
            f"   {t_ours / t_theirs:>10.2f}"
        )


if __name__ == "__main__":
    main()
