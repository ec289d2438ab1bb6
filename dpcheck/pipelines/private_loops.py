"""Which statements of a pipeline's reach run its private update.

A statement runs the private update when it draws the pipeline's noise, or calls, through
project functions of the reach, a function that draws it. What a DP pipeline is made of is
read from the loops around those statements: the sampling of the batches its noisy update sees
(``sampling.analyzer``) and the epochs it trains for (``params``), not those of a non-private
model trained in the same run (a membership-inference attack model, a shadow model, a probe
fitted for evaluation). For a hand-written update these are the statements that draw the noise;
for Opacus, which clips, noises and divides in the ``step`` of the optimizer ``make_private``
returns, the statements where that optimizer steps (``opacus_usage.private_steps``).
"""

from __future__ import annotations

from collections.abc import Iterable

from dpcheck.pipelines.index import ProjectIndex
from dpcheck.pipelines.sampling.loops import body
from dpcheck.pipelines.scope import Ctx
from dpcheck.sites.views import Statement

#: A statement's place: (path, scope, line).
Place = tuple[str, str, int]


def private_lines(index: ProjectIndex, noise: Iterable[Ctx],
                  reached: frozenset[tuple[str, str]]) -> frozenset[Place]:
    """The statements of the reach that draw the noise (``noise``: where it is drawn) or call,
    through project functions of the reach, a function that draws it."""
    found: set[Place] = set()
    frontier = list(noise)
    while frontier:
        site = frontier.pop()
        if (site.path, site.scope, site.line) in found:
            continue
        found.add((site.path, site.scope, site.line))
        frontier.extend(where for where, _ in index.call_sites(site)
                        if (where.path, where.scope) in reached)
    return frozenset(found)


def runs_private(ctx: Ctx, stmts: list[Statement], loop: int, lines: frozenset[Place]) -> bool:
    """Whether the loop at ``stmts[loop]`` of the scope ``ctx`` runs the private update."""
    return any((ctx.path, ctx.scope, stmt.line) in lines for stmt in body(stmts, loop))
