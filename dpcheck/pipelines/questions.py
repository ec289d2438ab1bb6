"""Memoised questions about a project, with one cycle guard and one work budget.

Linking asks recursive questions — which constant does this parameter hold, what is this
value's origin, which class is this object — whose answers depend on other questions of the same
kind through callers, returns and imports. Asked naively, a question is answered again for every
call path that reaches it, which is exponential in the number of callers of callers. Every such
question goes through ``Questions.ask`` instead, keyed by what it asks (the expression or name,
the place it is read at, the pipeline reach it is asked in):

* a question is answered at most once per key: work is polynomial in the size of the project;
* a question asked again while it is being answered (a cycle), or nested deeper than
  ``MAX_NESTING`` questions, gets the question's *unknown* answer. This is pessimistic: a cycle
  only ever leaves a value undecided, never decided wrongly;
* an answer that relied on such a cut is kept only while the question it was cut at is still
  open (asked afresh later it may be decided); every other answer is kept for the whole run;
* each answer costs one unit of the budget of the pipeline being built. When the budget runs
  out every further question is answered unknown, and ``exhausted`` tells the pipeline builder,
  which reports the pipeline as not fully analysed instead of passing it in silence.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, TypeVar

T = TypeVar("T")

#: Questions answered for one pipeline before its analysis stops (a user project needs a few
#: thousand; the budget only binds on library-sized trees and pathological call graphs).
PIPELINE_BUDGET = 200_000
#: How many questions may be open inside each other (bounds the interpreter's stack).
MAX_NESTING = 120
#: The taint of an answer that relied on the budget or on the nesting limit: kept until the
#: outermost question finishes.
_EVERYWHERE = -1


class Questions:
    """The answers of one linking run (see the module docstring)."""

    def __init__(self, budget: int = PIPELINE_BUDGET) -> None:
        self._kept: dict[Hashable, Any] = {}
        self._transient: dict[Hashable, tuple[Any, int]] = {}
        self._relying: dict[int, list[Hashable]] = {}
        self._open: dict[Hashable, int] = {}
        self._lowest: list[int] = []
        self._budget = budget
        self._left = budget
        self.exhausted = False

    def begin(self, budget: int | None = None) -> None:
        """Start the budget of a new pipeline (answers already kept stay valid)."""
        self._left = self._budget if budget is None else budget
        self.exhausted = False

    @property
    def spent(self) -> int:
        """Questions answered since the last ``begin``."""
        return self._budget - self._left

    def ask(self, key: Hashable, answer: Callable[[], T], unknown: T) -> T:
        """The answer to the question ``key``, computing it with ``answer()`` at most once."""
        if key in self._kept:
            return self._kept[key]  # type: ignore[no-any-return]
        if key in self._transient:
            value, taint = self._transient[key]
            self._taint(taint)
            return value  # type: ignore[no-any-return]
        if key in self._open:
            self._taint(self._open[key])
            return unknown
        if self._left <= 0 or len(self._lowest) >= MAX_NESTING:
            self.exhausted = self.exhausted or self._left <= 0
            self._taint(_EVERYWHERE)
            return unknown
        self._left -= 1
        depth = len(self._lowest)
        self._open[key] = depth
        self._lowest.append(depth)
        try:
            value = answer()
        finally:
            del self._open[key]
            lowest = self._lowest.pop()
        if lowest >= depth:
            self._kept[key] = value
        else:
            self._transient[key] = (value, lowest)
            self._relying.setdefault(lowest, []).append(key)
            self._taint(lowest)
        self._forget(depth)
        if not self._lowest:
            self._forget(_EVERYWHERE)
        return value

    def _taint(self, depth: int) -> None:
        """The open question answering now relied on a cut at ``depth``."""
        if self._lowest and depth < self._lowest[-1]:
            self._lowest[-1] = depth

    def _forget(self, depth: int) -> None:
        """Drop the transient answers that relied on the question at ``depth`` being open."""
        for key in self._relying.pop(depth, ()):
            self._transient.pop(key, None)


def frozen(node: Any) -> Hashable:
    """A hashable copy of an IR expression (lists become tuples, dicts sorted item tuples),
    for use in question keys."""
    if isinstance(node, list):
        return tuple(frozen(item) for item in node)
    if isinstance(node, dict):
        return tuple(sorted((key, frozen(item)) for key, item in node.items()))
    return node  # type: ignore[no-any-return]
