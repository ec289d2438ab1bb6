"""The conditions a pipeline's DP code runs under: its guards.

A pipeline is the DP run of an entry, so it is judged on the path where its DP code runs, even
when the default configuration switches DP off (``--dp 0``). The ``if`` tests around the DP
code (``if private:``, ``if not args.no_dp:``) then hold, and whatever else reads the same flag
(a helper that returns a Poisson loader when ``dp`` is true and a shuffled one otherwise) must
be read with it holding too; reading that helper under the default configuration would judge
the non-private loader against the private update.

A guard is a test that is a name or ``not name``. When the name is a parameter of the guarded
function, what each caller passes for it is a name that holds the same truth in the caller
(``train(private=use_dp)``), followed up the callers (bounded). The result is the
``(path, scope, name) -> truth`` map the value evaluator takes as ``assumed``.
"""

from __future__ import annotations

from dpcheck.pipelines.index import ProjectIndex
from dpcheck.pipelines.scope import Ctx
from dpcheck.sites.nodes import Name, UnaryOp, node

#: How many callers up a guarded parameter is followed.
_MAX_DEPTH = 6

Guards = dict[tuple[str, str, str], bool]


def guards(index: ProjectIndex, site: Ctx) -> Guards:
    """The guards of the statement at ``site`` (its ``if`` arms), with the callers' names that
    carry a guarded parameter's truth."""
    scope = index.scope(site)
    found: Guards = {}
    statement = next((s for s in scope.statements if s.line == site.line), None) if scope else None
    for line, arm in statement.arms if statement is not None else ():
        test = index.if_test(site, line)
        named = _named(node(test)) if test is not None else None
        if named is not None:
            name, truth = named
            _assume(index, Ctx(site.path, site.scope, line), name, truth == (arm == 0), found, 0)
    return found


def _named(test: object) -> tuple[str, bool] | None:
    """``(name, True)`` for a test ``name``, ``(name, False)`` for ``not name``, else None."""
    if isinstance(test, Name):
        return test.dotted, True
    if isinstance(test, UnaryOp) and test.op == "not" and isinstance(test.operand, Name):
        return test.operand.dotted, False
    return None


def _assume(index: ProjectIndex, ctx: Ctx, name: str, truth: bool, found: Guards, depth: int) -> None:
    key = (ctx.path, ctx.scope, name)
    if key in found or depth > _MAX_DEPTH:
        return
    binding = index.attribute(name, ctx)
    if binding is None or binding.kind not in ("param", "assign", "option") or \
            (binding.kind == "assign" and (binding.index or index.mutated(binding))):
        return
    found[key] = truth
    if binding.kind != "param":
        return
    for where, argument in index.arguments(binding):
        passed = node(argument)
        if isinstance(passed, Name):
            _assume(index, where, passed.dotted, truth, found, depth + 1)
