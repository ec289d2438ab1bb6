"""Calls across the project: which project function a callee is, and who calls a function.

``function`` resolves a callee name at a place to a project function (a class call to its
``__init__``, ``obj.method`` through the class ``obj`` is an instance of, a name a factory
returned); ``call_sites`` lists the calls of a function anywhere in the indexed files (through
aliases, ``functools.partial`` objects and class factories), and ``arguments`` what they pass for
one parameter. The call index reads the candidate files and the project files they import (a few
hops away), not every file.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TypeVar

from dpcheck.pipelines.binding import Binding
from dpcheck.pipelines.scope import Ctx
from dpcheck.sites.ir import IR, tail_name
from dpcheck.sites.nodes import Attr, Call, Name, Node, Opaque, Seq, Str, Subscript, node
from dpcheck.sites.views import Statement

T = TypeVar("T")
#: How many imports away from a candidate file the call index still reads a project file.
IMPORT_HOPS = 2
#: How many such imported files it reads at most (nearest first, then by path): a user project
#: stays far below it, while a library-sized tree (a scan of site-packages) does not summarise
#: hundreds of files serially for a rarely needed caller.
MAX_IMPORTED_FILES = 64
#: The IR of a ``*sequence`` argument (``sites.ir`` encodes every starred argument so).
STAR = Opaque(["?", "star"])
#: What a ``functools.partial`` object is called with later, as the ``**`` of its call.
PARTIAL_REST = Opaque(["?", "partial"])


class CallsMixin:
    """Functions and call sites of ``ProjectIndex`` (see the module docstring)."""

    def calls(self, scopes: Iterable[Ctx]) -> Iterator[tuple[Ctx, Statement, Call]]:
        """Every call expression in the statements of ``scopes``, with its statement."""
        for where, stmt in self.statements(scopes):
            for call in _calls(stmt.expr):
                yield where, stmt, call

    def calls_named(self, tail: str) -> list[tuple[Ctx, Call]]:
        """Every call in the indexed files (``indexed_paths``) whose callee ends in ``tail``
        (index built once)."""
        if self.shared.call_index is None:
            self.shared.call_index = {}
            self.shared.aliases = {}
            self.shared.assigned_from = {}
            for path in self.indexed_paths():
                summary = self.summary(path)
                for qual, scope in (summary.scopes if summary else {}).items():
                    for stmt in scope.statements:
                        where = Ctx(path, qual, stmt.line)
                        if stmt.kind == "assign" and isinstance(stmt.target, str):
                            for name in _alias_names(stmt.expr):
                                self.shared.aliases.setdefault(tail_name(name), set()).add(
                                    tail_name(stmt.target))
                            if isinstance(stmt.expr, Call):
                                self.shared.assigned_from.setdefault(
                                    stmt.expr.method, set()).add(tail_name(stmt.target))
                        for call in _calls(stmt.expr):
                            self.shared.call_index.setdefault(call.method, []).append(
                                (where, call))
        return self.shared.call_index.get(tail, [])

    def indexed_paths(self) -> tuple[str, ...]:
        """The files the call index reads: the candidate files and the project files they
        import, up to ``IMPORT_HOPS`` imports away and ``MAX_IMPORTED_FILES`` in all (tests and
        vendored copies excluded). A training step in a module without any DP marker still
        calls the optimizer's methods and sets their attributes; following imports, not every
        file, keeps the number of summaries small."""
        if self.shared.indexed is None:
            seen = set(self.project.candidate_paths())
            frontier = sorted(seen)
            budget = MAX_IMPORTED_FILES
            for _ in range(IMPORT_HOPS):
                frontier = sorted({found for path in frontier for found in self._imported(path)
                                   if found not in seen and not self.skipped(found)})[:budget]
                budget -= len(frontier)
                seen.update(frontier)
            self.shared.indexed = tuple(p for p in sorted(seen) if self.summary(p) is not None)
        return self.shared.indexed

    def _imported(self, path: str) -> Iterator[str]:
        """The project files the imports of ``path`` name."""
        summary = self.summary(path)
        for target in [*summary.imports.values(), *summary.stars] if summary else ():
            located = self.module_path(path, target)
            if located is not None:
                found, _ = located
                yield found

    def partial_aliases(self) -> tuple[str, ...]:
        """The names the indexed files call ``functools.partial`` by: ``partial`` (also the tail
        of ``functools.partial``) and each name an import binds it to (``from functools import
        partial as bind``). Computed once."""
        if self.shared.partials is None:
            self.shared.partials = ("partial", *sorted(
                {name for path in self.indexed_paths()
                 if (summary := self.summary(path)) is not None
                 for name, target in summary.imports.items()
                 if target == "functools.partial" and name != "partial"}))
        return self.shared.partials

    def _partial_sites(self, wanted: Ctx, names: set[str]) -> Iterator[tuple[Ctx, Call]]:
        """``functools.partial(f, a, k=v)`` read as a call of ``f`` with those arguments. The
        arguments the partial object is called with later are not known here: a trailing ``*``
        and ``**`` stand for them, so the other parameters of ``f`` stay unresolved rather than
        taking their defaults."""
        if self.shared.partial_calls is None:
            self.shared.partial_calls = {}
            for alias in self.partial_aliases():
                for where, call in self.calls_named(alias):
                    func = call.argument(0)
                    if isinstance(func, Name) and self.qualified(
                            call.name or "", where.path) == "functools.partial":
                        self.shared.partial_calls.setdefault(func.last, []).append(
                            (where, call))
        for name in sorted(names):
            for where, call in self.shared.partial_calls.get(name, ()):
                func = call.argument(0)
                if not isinstance(func, Name) or wanted not in self.functions(func.dotted, where):
                    continue
                later = {**call.kwargs, "**": PARTIAL_REST}
                yield where, Call(["call", func, [*call.args[1:], STAR], later,
                                   list(call.position), call.keyword_lines])

    def call_sites(self, target: Ctx) -> list[tuple[Ctx, Call]]:
        """Calls anywhere in the indexed files that resolve to the function ``target``
        (a class's ``__init__`` is called by the class name). Computed once per target and
        pipeline reach; a chain of callers that leads back to ``target`` while its sites are
        being found sees none (it decides nothing)."""
        function = Ctx(target.path, target.scope)
        key = (function, self.reach)
        if key not in self.shared.call_sites:
            self.shared.call_sites[key] = []
            self.shared.call_sites[key] = list(self._find_call_sites(function))
        return self.shared.call_sites[key]

    def _find_call_sites(self, target: Ctx) -> Iterator[tuple[Ctx, Call]]:
        parts = target.scope.split(".")
        short = parts[-2] if parts[-1] == "__init__" and len(parts) > 1 else parts[-1]
        wanted = Ctx(target.path, target.scope)
        for where, call in self.calls_named(short):
            if self.function(call.name or "", where) == wanted:
                yield where, call
        aliases = set((self.shared.aliases or {}).get(short, ()))
        if len(parts) > 2 and parts[-1] == "__init__":
            factory = tail_name(".".join(parts[:-2]))
            aliases.update((self.shared.assigned_from or {}).get(factory, ()))
        for alias in sorted(aliases):
            for where, call in self.calls_named(alias):
                if wanted in self.functions(call.name or "", where):
                    yield where, call
        yield from self._partial_sites(wanted, {short, *aliases})

    def arguments(self, param: Binding) -> list[tuple[Ctx, Node]]:
        """What the callers of a parameter's function pass for it, with where they pass it
        (only the callers inside ``reach`` when there are any). A function passing its own
        parameter on to itself unchanged (recursion) adds no value the parameter could not
        already hold, so that argument is left out."""
        scope = self.scope(param.ctx)
        names = [p.name for p in scope.params] if scope else []
        itself = Name(["r", param.name])
        passed: list[tuple[Ctx, Node]] = []
        for where, call in self.call_sites(param.ctx):
            if self.skipped(where.path) and not self.skipped(param.ctx.path):
                continue
            arg = argument(call, names, param.name)
            if arg == itself and (where.path, where.scope) == (param.ctx.path, param.ctx.scope):
                continue
            if arg is not None and not self._undeclared_option(arg, where):
                passed.append((where, arg))
        return self.in_reach(passed)

    def in_reach(self, found: list[tuple[Ctx, T]]) -> list[tuple[Ctx, T]]:
        """The items of ``found`` located inside ``reach``, or all of them if none is."""
        own = [(where, item) for where, item in found if (where.path, where.scope) in self.reach]
        return own or found

    def functions(self, callee: str, ctx: Ctx) -> list[Ctx]:
        """The project functions a callee may be: the function itself, or each function a
        local alias may hold (``f = fast if flag else slow``)."""
        direct = self.function(callee, ctx)
        if direct is not None:
            return [direct]
        binding = self.bind(callee, ctx) if callee and "." not in callee else None
        assigned = binding.assigned() if binding is not None else None
        if assigned is None:
            return []
        value, where = assigned
        return [f for name in _alias_names(value) if (f := self.function(name, where)) is not None]

    def function(self, callee: str, ctx: Ctx, depth: int = 0) -> Ctx | None:
        """The project function (or class ``__init__``) a callee name refers to; for
        ``obj.method``, the method of the project class ``obj`` is an instance of."""
        if depth:
            return self._function(callee, ctx, depth)
        key = (callee, ctx, self.reach)
        if key not in self.shared.functions:
            self.shared.functions[key] = self._function(callee, ctx, 0)
        return self.shared.functions[key]

    def _function(self, callee: str, ctx: Ctx, depth: int) -> Ctx | None:
        if callee.startswith("self.") and callee.count(".") == 1:
            scope = self.scope(ctx)
            cls = scope.owner if scope else None
            method = f"{cls}.{callee[5:]}" if cls else None
            summary = self.summary(ctx.path)
            if method and summary and method in summary.scopes:
                return Ctx(ctx.path, method)
            return None
        binding = self.bind(callee, ctx)
        if binding is None and "." in callee:
            base, _, method = callee.rpartition(".")
            cls = self.instance_class(base, ctx, depth + 1) if method in self.method_names() \
                else self._constructed_class(base, ctx)
            return self._member(cls, method) if cls is not None else None
        if binding is None:
            return None
        product = binding if binding.kind in ("function", "class") else \
            self._factory_product(binding, depth + 1)
        if product is None:
            return None
        if product.kind == "function":
            return product.ctx
        return self._member(product.ctx, "__init__")

    def method_names(self) -> frozenset[str]:
        """The names of the methods the classes of the candidate files define (computed once):
        only a call ``obj.name()`` with one of them is worth following ``obj`` through
        parameters and factories."""
        if self.shared.method_names is None:
            self.shared.method_names = frozenset(
                tail_name(qual) for path in self.project.candidate_paths()
                if (summary := self.summary(path))
                for qual, scope in summary.scopes.items()
                if scope.owner and qual not in summary.classes)
        return self.shared.method_names

    def _member(self, cls: Ctx, name: str) -> Ctx | None:
        """The method ``name`` defined in the class body of ``cls`` (a class scope)."""
        summary = self.summary(cls.path)
        qual = f"{cls.scope}.{name}"
        return Ctx(cls.path, qual) if summary and qual in summary.scopes else None

    def returns(self, function: Ctx) -> list[tuple[Node, Ctx]]:
        """The expressions a project function returns, each with where to read it."""
        scope = self.scope(function)
        return [(stmt.expr, Ctx(function.path, function.scope, stmt.line))
                for stmt in (scope.statements if scope else ()) if stmt.kind == "return"]

    def returned_parts(self, function: Ctx, index: tuple[int, ...] = (),
                       width: int | None = None
                       ) -> Iterator[tuple[Node, Ctx, Statement]]:
        """Element ``index`` of what each ``return`` of ``function`` gives (the whole value for
        ``()``), with where to read it and the return statement. A return of a tuple whose
        length differs from ``width`` (the unpacking target) cannot be the one unpacked there and
        is left out; one that cannot be unpacked gives the opaque ``["?", "unpacked"]``."""
        scope = self.scope(function)
        for stmt in scope.statements if scope else ():
            if stmt.kind != "return" or not self.runs(function, stmt):
                continue
            value = stmt.expr
            if index and width is not None and isinstance(value, Seq) \
                    and len(value.items) != width:
                continue
            for position in index:
                value = value.items[position] \
                    if isinstance(value, Seq) and position < len(value.items) \
                    else Opaque(["?", "unpacked"])
            yield value, Ctx(function.path, function.scope, stmt.line), stmt

    def elements(self, value: IR, index: tuple[int, ...], ctx: Ctx,
                 width: int | None = None) -> list[tuple[Node, Ctx]]:
        """Element ``index`` of the tuple ``value`` holds at ``ctx``, one expression per way it
        can be made, each with where to read it: unpacking takes an element of whatever the
        unpacked value holds, wherever that value was made — a tuple display, a name assigned
        (or itself unpacked from) one, a parameter given one by its callers, a project
        function's returns (``train, test = loaders`` where ``loaders`` is a parameter fed
        ``make_loaders(args)``). ``width``: how many names the outermost unpacking has (a return
        of another length is not the one unpacked). Empty when nothing is followed; each name
        followed is a question of the index's memo and cycle guard."""
        value = node(value)
        if not index:
            return [(value, ctx)]
        position, *rest = index
        if isinstance(value, Seq):
            return self.elements(value.items[position], tuple(rest), ctx) \
                if position < len(value.items) and (width is None or len(value.items) == width) \
                else []
        if isinstance(value, Call):
            function = self.function(value.name or "", ctx)
            if function is None or function.scope.endswith(".__init__"):
                return []
            return [found for part, where, _ in self.returned_parts(function)
                    for found in self.elements(part, index, where, width)]
        if not isinstance(value, Name):
            return []
        return self.questions.ask(("elements", value.dotted, index, ctx, width, self.reach),
                                  lambda: self._named_elements(value, index, ctx, width), [])

    def _named_elements(self, name: Name, index: tuple[int, ...], ctx: Ctx,
                        width: int | None) -> list[tuple[Node, Ctx]]:
        binding = self.attribute(name.dotted, ctx)
        if binding is not None and binding.kind == "param":
            return [found for where, arg in self.arguments(binding)
                    for found in self.elements(arg, index, where, width)]
        if binding is None or binding.ir is None or binding.kind != "assign":
            return []
        where = Ctx(binding.ctx.path, binding.ctx.scope, binding.line)
        outer = self.unpacked_width(binding) if binding.index else width
        return self.elements(binding.ir, (*binding.index, *index), where, outer) \
            if binding.index else self.elements(binding.ir, index, where, width)


def _alias_names(expr: Node) -> list[str]:
    """The names an assigned value may alias: ``f`` of ``g = f``, both arms of ``a if c else b``."""
    if isinstance(expr, Name):
        return [expr.dotted]
    if isinstance(expr, Opaque) and expr.kind == "ifexp":
        return [n for arm in expr.parts for n in _alias_names(arm)]
    return []


def _calls(expr: Node) -> Iterator[Call]:
    """The calls inside ``expr`` (pre-order), ``expr`` itself included."""
    for part in expr.walk():
        if isinstance(part, Call):
            yield part


def argument(call: IR, params: list[str], name: str) -> Node | None:
    """The argument a call passes for parameter ``name`` (by keyword or position); None when
    the call does not pass it (the parameter keeps its default). What a ``*sequence`` or
    ``**mapping`` may supply is not a default: a ``*`` argument at or before the position gives
    the opaque ``["?", "star"]``; a ``**mapping(...)`` call, the item ``["a", mapping call,
    name]``; any other mapping, the subscript ``["i", mapping, ["s", name]]`` (a dict literal's
    item, else unresolved)."""
    call = node(call)
    if not isinstance(call, Call):
        return None
    if name in call.kwargs:
        return call.kwargs[name]
    offset = 1 if next(iter(params), None) in ("self", "cls") else 0
    position = params.index(name) - offset if name in params else -1
    args = call.args
    starred = next((i for i, arg in enumerate(args) if arg == STAR), None)
    if position >= 0 and starred is not None and starred <= position:
        return STAR
    if 0 <= position < len(args):
        return args[position]
    mapping = call.kwargs.get("**")
    if mapping is None:
        return None
    return Attr(["a", mapping, name]) if isinstance(mapping, Call) \
        else Subscript(["i", mapping, Str(["s", name])])
