"""Items of the dict a project function returns (``setup = self.training_setup()`` then
``setup["loader"]``): the value is followed to the ``return dict(loader=...)`` that made it."""

from __future__ import annotations

from dpcheck.pipelines.index import ProjectIndex
from dpcheck.pipelines.scope import Ctx
from dpcheck.sites.ir import IR, callee_name, dict_item


def returned_item(index: ProjectIndex, ir: IR, ctx: Ctx) -> tuple[IR, Ctx] | None:
    """For ``name["key"]`` where ``name`` is assigned the result of a project function whose
    single return is a dict display or ``dict(...)`` call with that key: the item's expression
    and where to read it. None for anything else (several returns, a computed key)."""
    if ir[0] != "i" or ir[1][0] != "r" or ir[2][0] != "s":
        return None
    binding = index.attribute(ir[1][1], ctx)
    assigned = binding.assigned() if binding is not None else None
    if assigned is None or assigned[0][0] != "call":
        return None
    function = index.function(callee_name(assigned[0]) or "", assigned[1])
    returns = index.returns(function) if function is not None else []
    if len(returns) != 1:
        return None
    value, where = returns[0]
    item = dict_item(value, ir[2][1])
    return (item, where) if item is not None else None
