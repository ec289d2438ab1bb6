"""The per-file budgets of a scan: how long, and how deep, the analysis of one file may go.

A scanned repository may hold a minified or generated module, a file nested thousands of levels
deep, or one written to make an analyser spin. Each file's read/decode/parse/summarise work runs
under two budgets, and a file over either is reported as skipped with the reason (a DP001
finding), never as a crash and never as a hang:

* **time** — ``FILE_TIME_BUDGET`` seconds of wall-clock time, enforced with a ``SIGALRM``
  interval timer in the thread that runs the analysis. Only the main thread of a process can
  receive signals, so the budget holds in the CLI and in the worker processes of a parallel
  scan; analysis called from another thread (or on a platform without ``setitimer``) runs
  without a time budget and relies on the recursion budget and the file-size cap alone.
* **recursion** — ``RECURSION_BUDGET`` Python frames above the caller's depth, so a file is
  accepted or refused the same way wherever the analysis is called from. CPython's parser scales
  the same limit for its own tree building (three levels per frame).
"""

from __future__ import annotations

import signal
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

FILE_TIME_BUDGET = 20.0
RECURSION_BUDGET = 1000
TIME_BUDGET_REASON = "over the per-file time budget"


class BudgetExceeded(BaseException):
    """A file's analysis went over a budget; the message says which.

    A ``BaseException`` (like ``KeyboardInterrupt``), so no ``except Exception`` inside the
    analysis can swallow the timer's interruption."""


class Deadline:
    """What a running ``time_budget`` knows: whether its timer went off, and why.

    C code interrupted by the timer may not pass the timer's exception on (CPython's tree
    builder, interrupted mid-way, raises ``SystemError: AST constructor recursion depth
    mismatch`` instead); an exception met after expiry is the budget's, whatever its type."""

    def __init__(self, seconds: float | None) -> None:
        self.seconds = seconds
        self.expired = False

    @property
    def reason(self) -> str:
        return f"{TIME_BUDGET_REASON} ({self.seconds:g} s)"


def _stack_depth() -> int:
    frame = sys._getframe()
    depth = 0
    while frame is not None:
        depth += 1
        frame = frame.f_back  # type: ignore[assignment]
    return depth


@contextmanager
def recursion_budget(frames: int = RECURSION_BUDGET) -> Iterator[None]:
    """Run the body with at most ``frames`` Python frames above the current depth; a
    ``RecursionError`` inside becomes ``BudgetExceeded``."""
    previous = sys.getrecursionlimit()
    sys.setrecursionlimit(_stack_depth() + frames)
    try:
        yield
    except RecursionError:
        raise BudgetExceeded(
            f"nested deeper than the analysis recursion budget ({frames} frames)"
        ) from None
    finally:
        sys.setrecursionlimit(previous)


def _can_time() -> bool:
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


@contextmanager
def time_budget(seconds: float | None = FILE_TIME_BUDGET) -> Iterator[Deadline]:
    """Interrupt the body with ``BudgetExceeded`` after ``seconds`` (None or 0: no limit).

    A timer armed by the caller is suspended for the body and re-armed after it with the time
    it had left, less the body's own."""
    deadline = Deadline(seconds)
    if not seconds or not _can_time():
        yield deadline
        return

    def expire(signum: int, frame: object) -> None:
        deadline.expired = True
        raise BudgetExceeded(deadline.reason)

    started = time.monotonic()
    handler = signal.signal(signal.SIGALRM, expire)
    outer, interval = signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield deadline
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, handler)
        if outer > 0:
            left = max(outer - (time.monotonic() - started), 1e-3)
            signal.setitimer(signal.ITIMER_REAL, left, interval)


@contextmanager
def file_budget(seconds: float | None = FILE_TIME_BUDGET) -> Iterator[Deadline]:
    """Both budgets around one file's analysis."""
    with time_budget(seconds) as deadline, recursion_budget():
        yield deadline
