"""What a project sampler class iterates: the sampler it wraps.

A project sampler class often draws nothing itself: its ``__iter__`` loops over a sampler it was
given or built (``for ids in self.inner: yield [...]``) and maps each batch it gets to other
indices (the records of drawn users, of drawn authors ...). Its batches are then formed the way
the wrapped sampler forms them, so the class has that sampler's kind (a ``BatchSampler`` over a
``RandomSampler``: shuffled fixed-size batches). This module finds the wrapped sampler: the
objects ``__iter__`` iterates (``for``, ``yield from``) that are attributes of ``self``, followed
to what the class's methods store there. A stored constructor parameter is the argument the
construction passes: the constructor call itself for the class built, or the
``super().__init__(...)`` call of the project subclass below it (a subclass that builds the
inner sampler and hands it to its base). The values found are read like any sampler
expression by ``dpcheck.pipelines.sampling.loaders``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from dpcheck.pipelines.calls import argument
from dpcheck.pipelines.index import ProjectIndex
from dpcheck.pipelines.scope import Ctx
from dpcheck.sites.nodes import Attr, Call, Name, Node, Opaque
from dpcheck.sites.views import Statement

#: The method that yields a sampler's batches.
ITERATE = "__iter__"
#: How many project classes up the bases are followed.
MAX_BASES = 8


def iterated_samplers(index: ProjectIndex, cls: Ctx, built: Call,
                      where: Ctx) -> list[tuple[Node, Ctx]]:
    """The sampler values an instance of the project class ``cls``, built by ``built`` at
    ``where``, iterates in its ``__iter__`` (its own or a project base's), each with where to
    read it. Empty when ``__iter__`` iterates nothing stored on ``self`` or a stored value
    cannot be followed to its constructor argument."""
    chain = list(_chain(index, cls))
    found: list[tuple[Node, Ctx]] = []
    for owner in chain:
        method = Ctx(owner.path, f"{owner.scope}.{ITERATE}")
        scope = index.scope(method)
        if scope is None:
            continue
        for attr in _iterated_attributes(scope.statements):
            value = _stored(index, chain, method, attr, built, where)
            if value is None:
                return []
            found.append(value)
        return found
    return []


def _iterated_attributes(statements: list[Statement]) -> Iterator[str]:
    """The ``self.x`` names a method loops over or delegates its iteration to."""
    for stmt in statements:
        if stmt.kind == "for" and isinstance(stmt.expr, Name) \
                and stmt.expr.dotted.startswith("self."):
            yield stmt.expr.dotted
        for part in stmt.expr.walk() if stmt.kind != "for" else ():
            inner = next(iter(part.parts), None) \
                if isinstance(part, Opaque) and part.kind == "yieldfrom" else None
            if isinstance(inner, Name) and inner.dotted.startswith("self."):
                yield inner.dotted


def _stored(index: ProjectIndex, chain: list[Ctx], reader: Ctx, attr: str, built: Call,
            where: Ctx) -> tuple[Node, Ctx] | None:
    """What ``self.attr`` holds when ``reader`` runs: the value a method of the class stores,
    a constructor parameter followed to the argument passed for it."""
    binding = index.attribute(attr, reader)
    if binding is None or binding.ir is None or binding.kind != "assign" or binding.index:
        return None
    value, at = binding.ir, replace(binding.ctx, line=binding.line)
    param = index.bind(value.dotted, at) if isinstance(value, Name) else None
    if param is None or param.kind != "param" or param.ir is not None:
        return value, at
    owner = next((i for i, cls in enumerate(chain) if at.scope == f"{cls.scope}.__init__"), None)
    return _passed(index, chain, owner, param.name, built, where) if owner is not None else None


def _passed(index: ProjectIndex, chain: list[Ctx], owner: int, name: str, built: Call,
            where: Ctx) -> tuple[Node, Ctx] | None:
    """The argument the construction passes for parameter ``name`` of the ``__init__`` of
    ``chain[owner]``: the ``super().__init__(...)`` call of the nearest subclass below it that
    defines ``__init__``, else (none does) the constructor call itself."""
    scope = index.scope(Ctx(chain[owner].path, f"{chain[owner].scope}.__init__"))
    names = [p.name for p in scope.params[1:]] if scope is not None else []
    for below in reversed(chain[:owner]):
        init = Ctx(below.path, f"{below.scope}.__init__")
        if index.scope(init) is None:
            continue
        for site, _, call in index.calls([init]):
            callee = call.callee
            if isinstance(callee, Attr) and callee.attr == "__init__" \
                    and isinstance(callee.base, Call) and callee.base.name == "super":
                arg = argument(call, names, name)
                return (arg, site) if arg is not None else None
        return None
    arg = argument(built, names, name)
    return (arg, where) if arg is not None else None


def _chain(index: ProjectIndex, cls: Ctx) -> Iterator[Ctx]:
    """``cls`` and its first project bases, nearest first."""
    current: Ctx | None = cls
    for _ in range(MAX_BASES):
        summary = index.summary(current.path) if current is not None else None
        if current is None or summary is None or current.scope not in summary.classes:
            return
        yield current
        found = None
        for base in summary.bases(current.scope):
            binding = index.bind(base, Ctx(current.path, "<module>")) if base else None
            if binding is not None and binding.kind == "class":
                found = binding.ctx
                break
        current = found
