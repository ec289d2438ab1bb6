"""The project as the pipeline stage reads it: summaries, and the lookups every analyser shares.

``ProjectIndex`` serves the typed module summaries and composes the lookups written in their
own modules: name resolution (``names``), command-line options (``options``), functions and
call sites (``calls``), instance classes (``classes``) and vendored copies of DP libraries
(``copies``). Every recursive question goes through
one memo with one cycle guard and one work budget (``questions``).

One index is built per linking run; ``within(scope)`` gives the same index seen from one
pipeline (``dpcheck.pipelines.scope.PipelineScope``): its callers are preferred where a question
is about a parameter, and the dispatch arms its default configuration skips are never read. The
views share every cache; answers that depend on the scope are keyed by it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Callable

from dpcheck.pipelines.binding import Binding
from dpcheck.pipelines.calls import CallsMixin
from dpcheck.pipelines.classes import ClassesMixin
from dpcheck.pipelines.copies import CopiesMixin
from dpcheck.pipelines.names import NamesMixin
from dpcheck.pipelines.options import OptionsMixin
from dpcheck.pipelines.questions import Questions
from dpcheck.pipelines.scope import WHOLE_PROJECT, Ctx, PipelineScope
from dpcheck.project import Project
from dpcheck.sites.ir import IR, callee_name
from dpcheck.sites.nodes import BinOp, Call
from dpcheck.sites.views import ModuleSummary, Scope, Statement, module_view

#: Tests and vendored copies: never entry points, and their calls never feed a user pipeline.
SKIPPED = re.compile(r"(^|/)(tests?|testing|vendor|vendored|third_party|site-packages)/|"
                     r"(^|/)test_[^/]*\.py$|_test\.py$|(^|/)conftest\.py$")


@dataclass
class _Shared:
    """What every view of one index shares: summaries, derived tables and the memo."""

    views: dict[str, ModuleSummary | None] = field(default_factory=dict)
    questions: Questions = field(default_factory=Questions)
    call_index: dict[str, list[tuple[Ctx, IR]]] | None = None
    indexed: tuple[str, ...] | None = None
    aliases: dict[str, set[str]] | None = None
    assigned_from: dict[str, set[str]] | None = None
    method_names: frozenset[str] | None = None
    partials: tuple[str, ...] | None = None
    partial_calls: dict[str, list[tuple[Ctx, IR]]] | None = None
    hook_classes: frozenset[str] | None = None
    bindings: dict[tuple[str, Ctx, frozenset[tuple[str, str, int, int]]], Binding | None] = field(
        default_factory=dict)
    call_sites: dict[tuple[Ctx, frozenset[tuple[str, str]]], list[tuple[Ctx, IR]]] = \
        field(default_factory=dict)
    functions: dict[tuple[str, Ctx, frozenset[tuple[str, str]]], Ctx | None] = \
        field(default_factory=dict)
    cached: dict[str, Callable[..., Any]] = field(default_factory=dict)


class ProjectIndex(NamesMixin, OptionsMixin, CallsMixin, ClassesMixin, CopiesMixin):
    """Summaries plus the lookups the pipeline stage needs (see the module docstring)."""

    def __init__(self, project: Project, scope: PipelineScope = WHOLE_PROJECT,
                 shared: _Shared | None = None) -> None:
        self.project = project
        self.within_scope = scope
        self.shared = shared if shared is not None else _Shared()
        self._paths = frozenset(project.paths)
        cached = self.shared.cached
        if not cached:
            cached.update(module_path=lru_cache(maxsize=None)(self._module_path),
                          receivers=lru_cache(maxsize=None)(self._receivers),
                          global_writers=lru_cache(maxsize=None)(self._global_writers),
                          skipped=lru_cache(maxsize=None)(self._skipped),
                          copied_module=lru_cache(maxsize=None)(self._copied_module))
        self.module_path = cached["module_path"]
        self.receivers = cached["receivers"]
        self.global_writers = cached["global_writers"]
        self.skipped = cached["skipped"]
        self.copied_module = cached["copied_module"]
        # The library view of ``dpcheck history`` (pipelines/library.py) has no facts.
        facts = getattr(project, "facts", None)
        self._bundled = tuple(f"{f}/" for f in facts.bundled_folders()) if facts else ()

    def within(self, scope: PipelineScope) -> ProjectIndex:
        """This index seen from one pipeline (caches shared)."""
        return ProjectIndex(self.project, scope, self.shared)

    @property
    def questions(self) -> Questions:
        """The memo, cycle guard and work budget of this linking run."""
        return self.shared.questions

    @property
    def reach(self) -> frozenset[tuple[str, str]]:
        """The scopes of the pipeline this view belongs to (empty for the whole project)."""
        return self.within_scope.reach

    @property
    def skipped_arms(self) -> frozenset[tuple[str, str, int, int]]:
        """The dispatch arms the pipeline this view belongs to skips."""
        return self.within_scope.skipped_arms

    def _skipped(self, path: str) -> bool:
        """Whether ``path`` is a test, a vendored copy or a DP library bundled in the project:
        never an entry point, and its calls never feed a user pipeline."""
        return bool(SKIPPED.search(path)) or path.startswith(self._bundled)

    def summary(self, path: str) -> ModuleSummary | None:
        """The typed view of a project file's summary (None if it has none); built once."""
        views = self.shared.views
        if path not in views:
            stored = self.project.summary(path)
            views[path] = module_view(stored) if stored is not None else None
        return views[path]

    def scope(self, ctx: Ctx) -> Scope | None:
        summary = self.summary(ctx.path)
        return summary.scopes.get(ctx.scope) if summary else None

    def statements(self, scopes: Iterable[Ctx]) -> Iterator[tuple[Ctx, Statement]]:
        """Every statement of ``scopes`` that may run, in order, with its location (statements
        in an ``if`` arm the pipeline skips are left out)."""
        for ctx in scopes:
            scope = self.scope(ctx)
            for stmt in scope.statements if scope is not None else ():
                if self.runs(ctx, stmt):
                    yield Ctx(ctx.path, ctx.scope, stmt.line), stmt

    def runs(self, ctx: Ctx, stmt: Statement) -> bool:
        """Whether ``stmt`` of the scope of ``ctx`` may run: False when it sits in an ``if`` arm
        the pipeline skips (a dispatch arm the default configuration does not take)."""
        return not self.within_scope.skips(ctx, stmt.arms)

    def if_test(self, ctx: Ctx, line: int) -> IR | None:
        """The test of the ``if`` statement at ``line`` of the scope of ``ctx``."""
        scope = self.scope(ctx)
        return scope.if_test(line) if scope else None

    def loop_count(self, ctx: Ctx, stmt: Statement) -> tuple[Ctx, IR] | None:
        """The iteration count of the ``for ... in range(n)`` (or ``range(start, stop)``:
        ``stop - start``) directly enclosing ``stmt``."""
        return self.header_count(ctx, stmt.loop)

    def iterations(self, ctx: Ctx, stmt: Statement,
                   within: Statement | None = None) -> tuple[Ctx, IR] | None:
        """How many times ``stmt`` runs each time the loops around ``within`` (a statement of
        the same scope; None: the scope) run once: the product of the counts of the loops around
        ``stmt`` that do not also hold ``within``, read at the innermost one; None when one of
        them is not a counted ``range`` loop or there is none."""
        scope = self.scope(ctx)
        if scope is None:
            return None
        held = set(_enclosing(scope.statements, within.loop)) if within is not None else set()
        counts = []
        for loop in _enclosing(scope.statements, stmt.loop):
            if loop in held:
                break
            count = self.header_count(ctx, loop)
            if count is None:
                return None
            counts.append(count)
        if not counts:
            return None
        (where, product), *outers = counts
        for _, outer in outers:
            product = BinOp(["b", "*", outer, product])
        return where, product

    def reruns_after(self, ctx: Ctx, stmt: Statement, line: int) -> bool:
        """Whether ``stmt``, a statement of ``ctx``'s scope before the statement at ``line``,
        runs again after it: a loop holds both (a loop that ended before ``line`` does not; a
        baseline trained before the private one reuses names, not the private objects)."""
        scope = self.scope(ctx)
        if scope is None:
            return False
        later = next((s for s in scope.statements if s.line == line), None)
        held = set(_enclosing(scope.statements, later.loop)) if later is not None else set()
        return any(loop in held for loop in _enclosing(scope.statements, stmt.loop))

    def header_count(self, ctx: Ctx, loop: int) -> tuple[Ctx, IR] | None:
        """The iteration count of the loop whose header is statement ``loop`` of ``ctx``'s scope,
        when it is a ``range`` loop; None otherwise (no loop: ``loop`` < 0)."""
        scope = self.scope(ctx)
        if scope is None or loop < 0:
            return None
        header = scope.statements[loop]
        iterable = header.expr
        if not isinstance(iterable, Call) or callee_name(iterable) != "range" or iterable.kwargs:
            return None
        where = Ctx(ctx.path, ctx.scope, header.line)
        if len(iterable.args) == 1:
            [stop] = iterable.args
            return where, stop
        if len(iterable.args) == 2:
            start, stop = iterable.args
            return where, BinOp(["b", "-", stop, start])
        return None


def _enclosing(statements: Sequence[Statement], loop: int) -> Iterator[int]:
    """The loop headers around a statement whose innermost loop header is ``loop``, innermost
    first."""
    while loop >= 0:
        yield loop
        loop = statements[loop].loop
