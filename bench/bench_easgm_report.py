"""Benchmark: one EASGM finding's full report in the MNIST-sized setting, with its breakdown.

N = 60000, q = 256/60000, sigma = 1.1, n = 1.5e6, T = 3500, delta = 1e-5 (target: <= 1 s).
The report has three parts, each with its read-outs (eps at delta, delta at the claimed eps,
the curve at the report's alphas):

* claimed: the T-round SGM PLD (pessimistic, both directions);
* witness: the variance witness N(0, I_m) vs N(0, s^2 I_m), m = n T (closed form);
* guarantee: the reconstructed per-pair T-round PLD (``normalized_rounds``, upper side only,
  as the report uses it); timed also with its optimistic side, which gives the bracket.

It then times the whole report through ``dpcheck.bounds.report.build_report`` (caches cleared).
Imports are timed apart. Times are the best of ``REPEATS`` runs in this one process. Run:
    PYTHONPATH=. python bench/bench_easgm_report.py
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

START = time.perf_counter()

import numpy as np  # noqa: E402

from dpcheck.bounds import corrected, report  # noqa: E402
from dpcheck.bounds.request import BoundRequest  # noqa: E402
from dpcheck.privacy.normalized import normalized_components, normalized_rounds  # noqa: E402
from dpcheck.privacy.pld import default_interval  # noqa: E402
from dpcheck.privacy.sgm import sgm_pld  # noqa: E402
from dpcheck.privacy.variance_witness import VarianceWitness  # noqa: E402

IMPORT_SECONDS = time.perf_counter() - START

N, Q, SIGMA, DIM, STEPS, DELTA = 60_000, 256 / 60_000, 1.1, 1_500_000, 3500, 1e-5
ALPHAS = np.array([1e-3, 1e-2, 0.05, 0.1, 0.25, 0.5])
REPEATS = 3
T = TypeVar("T")


def timed(run: Callable[[], T]) -> tuple[T, float]:
    """(result of the last run, best wall time in seconds)."""
    best, value = float("inf"), None
    for _ in range(REPEATS):
        start = time.perf_counter()
        value = run()
        best = min(best, time.perf_counter() - start)
    return value, best  # type: ignore[return-value]


def claimed() -> tuple[float, float]:
    upper = sgm_pld(Q, SIGMA, STEPS)[1]
    eps = upper.epsilon(DELTA)
    upper.tradeoff(ALPHAS)
    return eps, float(upper.delta(eps))


def witness(claim_eps: float) -> tuple[float, float]:
    pair = VarianceWitness(DIM * STEPS, N / (N + 1), 1 / (N + 1))
    bound = pair.bound(ALPHAS, claim_eps, DELTA)
    return float(bound.epsilon_at_delta or 0.0), float(bound.delta_at_epsilon or 0.0)


def guarantee(claim_eps: float, optimistic: bool) -> tuple[float, float, float]:
    components = normalized_components(N, Q, SIGMA, 1 / (N + 1))
    if optimistic:
        upper, lower = normalized_rounds(components, DIM, STEPS, optimistic=True)
        low = lower.epsilon(DELTA)
    else:
        upper, _ = normalized_rounds(components, DIM, STEPS, optimistic=False)
        low = float("nan")
    upper.tradeoff(ALPHAS)
    return low, upper.epsilon(DELTA), float(upper.delta(claim_eps))


def full_report() -> str:
    report.build_report.cache_clear()
    corrected.sgm_upper.cache_clear()
    request = BoundRequest("easgm", sigma=SIGMA, q=Q, n_records=N, steps=STEPS, dim=DIM, delta=DELTA)
    return report.build_report(request).verdict


def main() -> None:
    print(f"EASGM report: N={N} q={Q:.6g} sigma={SIGMA} n={DIM} T={STEPS} delta={DELTA}; "
          f"interval {default_interval(STEPS):.3g}; best of {REPEATS}; imports {IMPORT_SECONDS:.2f} s")
    (claim_eps, claim_delta), t_claimed = timed(claimed)
    (w_eps, w_delta), t_witness = timed(lambda: witness(claim_eps))
    (_, g_eps, g_delta), t_guarantee = timed(lambda: guarantee(claim_eps, optimistic=False))
    (g_low, g_high, _), t_bracket = timed(lambda: guarantee(claim_eps, optimistic=True))
    verdict, t_report = timed(full_report)
    rows = [
        ("claimed SGM PLD", t_claimed, f"eps={claim_eps:.4f}  delta(eps)={claim_delta:.3g}"),
        ("variance witness", t_witness, f"eps={w_eps:.4f}  delta(claimed eps)={w_delta:.4f}"),
        ("per-pair guarantee (upper)", t_guarantee, f"eps={g_eps:.4f}  delta(claimed eps)={g_delta:.4f}"),
        ("  sum of the three", t_claimed + t_witness + t_guarantee, ""),
        ("per-pair guarantee (bracket)", t_bracket, f"eps in [{g_low:.4f}, {g_high:.4f}]"),
        ("build_report (dpcheck.bounds)", t_report, f"verdict={verdict}"),
    ]
    for name, seconds, note in rows:
        print(f"{name:<31} {seconds:>7.3f} s   {note}")


if __name__ == "__main__":
    main()
