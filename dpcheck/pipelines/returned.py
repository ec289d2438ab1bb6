"""Items of the dict a project function returns (``setup = self.training_setup()`` then
``setup["loader"]``): the value is followed to the ``return dict(loader=...)`` that made it."""

from __future__ import annotations

from dpcheck.pipelines.index import ProjectIndex
from dpcheck.pipelines.scope import Ctx
from dpcheck.sites.ir import IR, dict_item
from dpcheck.sites.nodes import Call, Name, Node, Str, Subscript, node


def returned_item(index: ProjectIndex, ir: IR, ctx: Ctx) -> tuple[Node, Ctx] | None:
    """For ``name["key"]`` where ``name`` is assigned the result of a project function whose
    single return is a dict display or ``dict(...)`` call with that key: the item's expression
    and where to read it. None for anything else (several returns, a computed key)."""
    ir = node(ir)
    if not isinstance(ir, Subscript) or not isinstance(ir.value, Name) \
            or not isinstance(ir.index, Str):
        return None
    assigned = index.assigned(ir.value.dotted, ctx)
    made, place = assigned if assigned is not None else (None, ctx)
    if not isinstance(made, Call):
        return None
    function = index.function(made.name or "", place)
    returns = index.returns(function) if function is not None else []
    if len(returns) != 1:
        return None
    [(value, where)] = returns
    item = dict_item(value, ir.index.value)
    return (item, where) if item is not None else None
