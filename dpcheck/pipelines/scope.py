"""Where a pipeline's analysis reads: places in the project and the scope of one pipeline.

A ``Ctx`` is a place (file, scope, line a name is read at). A ``PipelineScope`` is the value that
says what one pipeline's analysis may read: the scopes its entry reaches (a function's callers
inside it are preferred to the others, so a helper shared by several entries gets each entry's
own arguments) and the dispatch ``if`` arms its default configuration skips (their statements
are never read). ``ProjectIndex.within(scope)`` gives the index seen from one pipeline.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Ctx:
    """A place in the project: file, scope qualname and the line a name is read at."""

    path: str
    scope: str
    line: int = 10**9


@dataclass(frozen=True)
class PipelineScope:
    """The scopes a pipeline reaches, as (path, qualified scope) pairs, and the ``if`` arms
    (path, scope, if line, 0 body | 1 else) its default configuration skips. The empty scope
    is the project as a whole (no pipeline)."""

    reach: frozenset[tuple[str, str]] = frozenset()
    skipped_arms: frozenset[tuple[str, str, int, int]] = frozenset()

    def skips(self, ctx: Ctx, arms: list[tuple[int, int]]) -> bool:
        """Whether a statement of the scope of ``ctx`` sitting in ``arms`` is in a skipped arm."""
        return bool(self.skipped_arms) and any(
            (ctx.path, ctx.scope, line, arm) in self.skipped_arms for line, arm in arms)


WHOLE_PROJECT = PipelineScope()
