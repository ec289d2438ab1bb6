"""Methods a DP engine installs on the optimizer at run time, and what they call.

Some engines outside Opacus (private-transformers, bench/REAL_REPOS.md) do not wrap the optimizer:
``engine.attach(optimizer)`` replaces its methods in place,

    def dp_step(_self, **kwargs):
        _self.privacy_engine.step(**kwargs)
        ...
    optimizer.privacy_engine = self
    optimizer.step = types.MethodType(dp_step, optimizer)

so the noisy update runs in the engine's own ``step`` although no call in the project names it.
The nested ``dp_step`` is reached like any function passed as an argument; what this module adds
is the meaning of its first parameter: it is the object the function is bound to, so
``_self.privacy_engine.step()`` calls ``step`` on whatever the binding scope stored in
``optimizer.privacy_engine`` (``self``: the engine's own class; another object: its class).
"""

from __future__ import annotations

from collections.abc import Iterator

from dpcheck.pipelines.index import ProjectIndex
from dpcheck.pipelines.scope import Ctx
from dpcheck.sites.nodes import Call, Name, Node
from dpcheck.sites.views import Scope, Statement

#: Calls binding a function to an object as a method (``types.MethodType(fn, obj)``).
BINDERS = frozenset({"MethodType"})


def patched_callees(index: ProjectIndex, ctx: Ctx) -> Iterator[Ctx]:
    """The project methods a function bound to an object at run time reaches through its first
    parameter (``_self.attr.method()`` where the binding scope set ``obj.attr``). Nothing for a
    function that is not nested in a scope binding it with ``MethodType``."""
    parent, _, name = ctx.scope.rpartition(".")
    summary = index.summary(ctx.path)
    scope = summary.scopes.get(ctx.scope) if summary and parent else None
    outer = summary.scopes.get(parent) if summary and scope else None
    if scope is None or outer is None or not scope.params:
        return
    objects = set(_bound_objects(outer.statements, name))
    if not objects:
        return
    bound, *_ = scope.params
    first = bound.name
    for stmt in scope.statements:
        for node in stmt.expr.walk():
            called = node.name if isinstance(node, Call) else None
            holder, _, method = (called or "").rpartition(".")
            base, _, attr = holder.partition(".")
            if base != first or not attr or "." in attr:
                continue
            for obj in sorted(objects):
                found = _method_of(index, Ctx(ctx.path, parent), outer, f"{obj}.{attr}", method)
                if found is not None:
                    yield found


def _bound_objects(stmts: list[Statement], function: str) -> Iterator[str]:
    """The names of the objects ``function`` is bound to in these statements
    (``types.MethodType(function, obj)``)."""
    for stmt in stmts:
        for node in stmt.expr.walk():
            if not isinstance(node, Call) or node.method not in BINDERS or len(node.args) != 2:
                continue
            bound, obj = node.args
            if isinstance(bound, Name) and bound.dotted == function and isinstance(obj, Name):
                yield obj.dotted


def _method_of(index: ProjectIndex, where: Ctx, outer: Scope, holder: str,
               method: str) -> Ctx | None:
    """Method ``method`` of the object the binding scope stores in ``holder`` (``obj.attr =
    self`` in a method: the method's own class; any other value: the project class it is an
    instance of)."""
    stored = [(stmt.line, stmt.expr) for stmt in outer.statements
              if stmt.kind == "assign" and stmt.target == holder]
    if len(stored) != 1:
        return None
    [(line, value)] = stored
    cls = _class_of(index, Ctx(where.path, where.scope, line), outer, value)
    summary = index.summary(cls.path) if cls is not None else None
    qual = f"{cls.scope}.{method}" if cls is not None else ""
    return Ctx(cls.path, qual) if cls is not None and summary and qual in summary.scopes \
        else None


def _class_of(index: ProjectIndex, where: Ctx, outer: Scope, value: Node) -> Ctx | None:
    """The project class of a stored value: ``self`` in a method is the method's class; an
    attribute (``self.accountant``) is the class it was built from."""
    if not isinstance(value, Name):
        return None
    if value.dotted == "self" and outer.owner:
        return Ctx(where.path, outer.owner)
    found = index.instance_class(value.dotted, where)
    binding = index.attribute(value.dotted, where) if found is None else None
    assigned = binding.assigned() if binding is not None else None
    made, place = assigned if assigned is not None else (None, where)
    if isinstance(made, Call):
        return index.class_named(made.name or "", place)
    return found

