"""Which library made an object: the origin of a value, for the methods of library objects.

A method is matched by the import-qualified name of what it is called on, not by its own name
alone: ``rows.sample(n=500)`` is pandas' ``sample`` only when ``rows`` is an object pandas made
(``pd.read_csv(...)``), and ``splits["train"].select(...)`` is the ``datasets`` library's only when
``splits`` came from ``load_dataset(...)``. The origin is followed through assignments, subscripts
and method calls of library objects (a method of a library object returns one of that library's,
``frame.dropna().sample(...)``), each library call matched by its import-qualified name
(``ProjectIndex.library_name``). A project's own function or object is never a library's.
"""

from __future__ import annotations

from dataclasses import replace

from dpcheck.pipelines.index import ProjectIndex
from dpcheck.pipelines.scope import Ctx
from dpcheck.sites.nodes import Call, Name, Node, Subscript


def maker(index: ProjectIndex, value: Node, ctx: Ctx) -> str | None:
    """The root name of the library that made ``value`` read at ``ctx`` (``"pandas"``,
    ``"datasets"``); None when it is the project's or its origin is not decided. A name
    followed is a question of the memo and cycle guard (``dpcheck.pipelines.questions``)."""
    if isinstance(value, Subscript):
        return maker(index, value.value, ctx)
    if isinstance(value, Name):
        named = index.library_name(value.dotted, ctx)
        if named is not None:
            return _root(named)
        binding = index.attribute(value.dotted, ctx)
        if binding is None or binding.kind != "assign" or binding.ir is None or binding.index:
            return None
        bound, where = binding.ir, replace(binding.ctx, line=binding.line)
        key = ("library-maker", value.dotted, ctx, index.reach)
        return index.questions.ask(key, lambda: maker(index, bound, where), None)
    if isinstance(value, Call):
        callee = value.name
        named = index.library_name(callee, ctx) if callee and not callee.startswith("?.") \
            else None
        if named is not None:
            return _root(named)
        if value.receiver is None or index.function(callee or "", ctx) is not None:
            return None
        return maker(index, value.receiver, ctx)
    return None


def library_method(index: ProjectIndex, call: Node, ctx: Ctx) -> tuple[str, str] | None:
    """(library root, method name) of a method called on an object a library made, else None."""
    if not isinstance(call, Call) or call.receiver is None or not call.method:
        return None
    if call.name is not None and not call.name.startswith("?.") \
            and index.function(call.name, ctx) is not None:
        return None
    made = maker(index, call.receiver, ctx)
    return (made, call.method) if made is not None else None


def _root(named: str) -> str:
    root, _, _ = named.partition(".")
    return root
