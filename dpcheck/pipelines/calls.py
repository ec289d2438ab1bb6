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
from typing import Any, TypeVar

from dpcheck.pipelines.binding import Binding
from dpcheck.pipelines.scope import Ctx
from dpcheck.sites.ir import IR, callee_name, tail_name, walk

T = TypeVar("T")
#: How many imports away from a candidate file the call index still reads a project file.
IMPORT_HOPS = 2
#: How many such imported files it reads at most (nearest first, then by path): a user project
#: stays far below it, while a library-sized tree (a scan of site-packages) does not summarise
#: hundreds of files serially for a rarely needed caller.
MAX_IMPORTED_FILES = 64
#: The IR of a ``*sequence`` argument (``sites.ir`` encodes every starred argument so).
STAR: IR = ["?", "star"]
#: What a ``functools.partial`` object is called with later, as the ``**`` of its call.
PARTIAL_REST: IR = ["?", "partial"]


class CallsMixin:
    """Functions and call sites of ``ProjectIndex`` (see the module docstring)."""

    def calls(self, scopes: Iterable[Ctx]) -> Iterator[tuple[Ctx, dict[str, Any], IR]]:
        """Every call expression in the statements of ``scopes``, with its statement."""
        for where, stmt in self.statements(scopes):
            for node in walk(stmt["e"]):
                if node[0] == "call":
                    yield where, stmt, node

    def calls_named(self, tail: str) -> list[tuple[Ctx, IR]]:
        """Every call in the indexed files (``indexed_paths``) whose callee ends in ``tail``
        (index built once)."""
        if self.shared.call_index is None:
            self.shared.call_index = {}
            self.shared.aliases = {}
            self.shared.assigned_from = {}
            for path in self.indexed_paths():
                summary = self.summary(path)
                for qual, scope in (summary or {}).get("scopes", {}).items():
                    for stmt in scope["stmts"]:
                        where = Ctx(path, qual, stmt["line"])
                        if stmt["k"] == "assign" and isinstance(stmt["t"], str):
                            for name in _alias_names(stmt["e"]):
                                self.shared.aliases.setdefault(tail_name(name), set()).add(
                                    tail_name(stmt["t"]))
                            if stmt["e"][0] == "call":
                                self.shared.assigned_from.setdefault(
                                    tail_name(callee_name(stmt["e"])), set()).add(
                                    tail_name(stmt["t"]))
                        for node in _calls(stmt["e"]):
                            name = tail_name(callee_name(node))
                            self.shared.call_index.setdefault(name, []).append((where, node))
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
        for target in [*(summary or {}).get("imports", {}).values(), *(summary or {}).get(
                "stars", ())]:
            located = self.module_path(path, target)
            if located is not None:
                yield located[0]

    def partial_aliases(self) -> tuple[str, ...]:
        """The names the indexed files call ``functools.partial`` by: ``partial`` (also the tail
        of ``functools.partial``) and each name an import binds it to (``from functools import
        partial as bind``). Computed once."""
        if self.shared.partials is None:
            self.shared.partials = ("partial", *sorted(
                {name for path in self.indexed_paths()
                 for name, target in ((self.summary(path) or {}).get("imports") or {}).items()
                 if target == "functools.partial" and name != "partial"}))
        return self.shared.partials

    def _partial_sites(self, wanted: Ctx, names: set[str]) -> Iterator[tuple[Ctx, IR]]:
        """``functools.partial(f, a, k=v)`` read as a call of ``f`` with those arguments. The
        arguments the partial object is called with later are not known here: a trailing ``*``
        and ``**`` stand for them, so the other parameters of ``f`` stay unresolved rather than
        taking their defaults."""
        if self.shared.partial_calls is None:
            self.shared.partial_calls = {}
            for alias in self.partial_aliases():
                for where, node in self.calls_named(alias):
                    func = node[2][0] if node[2] else None
                    if func is not None and func[0] == "r" and self.qualified(
                            callee_name(node) or "", where.path) == "functools.partial":
                        self.shared.partial_calls.setdefault(tail_name(func[1]), []).append(
                            (where, node))
        for name in sorted(names):
            for where, node in self.shared.partial_calls.get(name, ()):
                func = node[2][0]
                if wanted not in self.functions(func[1], where):
                    continue
                later = {**node[3], "**": PARTIAL_REST}
                yield where, ["call", func, [*node[2][1:], STAR], later, node[4], node[5]]

    def call_sites(self, target: Ctx) -> list[tuple[Ctx, IR]]:
        """Calls anywhere in the indexed files that resolve to the function ``target``
        (a class's ``__init__`` is called by the class name). Computed once per target and
        pipeline reach; a chain of callers that leads back to ``target`` while its sites are
        being found sees none (it decides nothing)."""
        key = (Ctx(target.path, target.scope), self.reach)
        if key not in self.shared.call_sites:
            self.shared.call_sites[key] = []
            self.shared.call_sites[key] = list(self._find_call_sites(key[0]))
        return self.shared.call_sites[key]

    def _find_call_sites(self, target: Ctx) -> Iterator[tuple[Ctx, IR]]:
        parts = target.scope.split(".")
        short = parts[-2] if parts[-1] == "__init__" and len(parts) > 1 else parts[-1]
        wanted = Ctx(target.path, target.scope)
        for where, node in self.calls_named(short):
            if self.function(callee_name(node) or "", where) == wanted:
                yield where, node
        aliases = set((self.shared.aliases or {}).get(short, ()))
        if len(parts) > 2 and parts[-1] == "__init__":
            factory = tail_name(".".join(parts[:-2]))
            aliases.update((self.shared.assigned_from or {}).get(factory, ()))
        for alias in sorted(aliases):
            for where, node in self.calls_named(alias):
                if wanted in self.functions(callee_name(node) or "", where):
                    yield where, node
        yield from self._partial_sites(wanted, {short, *aliases})

    def arguments(self, param: Binding) -> list[tuple[Ctx, IR]]:
        """What the callers of a parameter's function pass for it, with where they pass it
        (only the callers inside ``reach`` when there are any). A function passing its own
        parameter on to itself unchanged (recursion) adds no value the parameter could not
        already hold, so that argument is left out."""
        scope = self.scope(param.ctx)
        names = [p[0] for p in scope["params"]] if scope else []
        itself = ["r", param.name]
        passed: list[tuple[Ctx, IR]] = []
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
        own = [item for item in found if (item[0].path, item[0].scope) in self.reach]
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
        if callee.startswith("self."):
            scope = self.scope(ctx)
            cls = scope.get("class") if scope else None
            method = f"{cls}.{callee[5:]}" if cls else None
            summary = self.summary(ctx.path)
            if method and summary and method in summary["scopes"]:
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
                qual.rpartition(".")[2] for path in self.project.candidate_paths()
                if (summary := self.summary(path))
                for qual, scope in summary["scopes"].items()
                if scope.get("class") and qual not in summary["classes"])
        return self.shared.method_names

    def _member(self, cls: Ctx, name: str) -> Ctx | None:
        """The method ``name`` defined in the class body of ``cls`` (a class scope)."""
        summary = self.summary(cls.path)
        qual = f"{cls.scope}.{name}"
        return Ctx(cls.path, qual) if summary and qual in summary["scopes"] else None

    def returns(self, function: Ctx) -> list[tuple[IR, Ctx]]:
        """The expressions a project function returns, each with where to read it."""
        scope = self.scope(function)
        return [(stmt["e"], Ctx(function.path, function.scope, stmt["line"]))
                for stmt in (scope["stmts"] if scope else ()) if stmt["k"] == "return"]

    def returned_parts(self, function: Ctx, index: tuple[int, ...] = (),
                       width: int | None = None
                       ) -> Iterator[tuple[IR, Ctx, dict[str, Any]]]:
        """Element ``index`` of what each ``return`` of ``function`` gives (the whole value for
        ``()``), with where to read it and the return statement. A return of a tuple whose
        length differs from ``width`` (the unpacking target) cannot be the one unpacked there and
        is left out; one that cannot be unpacked gives the opaque ``["?", "unpacked"]``."""
        scope = self.scope(function)
        for stmt in scope["stmts"] if scope else ():
            if stmt["k"] != "return" or not self.runs(function, stmt):
                continue
            value = stmt["e"]
            if index and width is not None and value[0] == "t" and len(value[1]) != width:
                continue
            for position in index:
                value = value[1][position] if value[0] == "t" and position < len(value[1]) \
                    else ["?", "unpacked"]
            yield value, Ctx(function.path, function.scope, stmt["line"]), stmt


def _alias_names(ir: IR) -> list[str]:
    """The names an assigned value may alias: ``f`` of ``g = f``, both arms of ``a if c else b``."""
    if ir[0] == "r":
        return [ir[1]]
    if ir[0] == "?" and len(ir) == 4 and ir[1] == "ifexp":
        return [n for arm in ir[2:] for n in _alias_names(arm)]
    return []


def _calls(ir: IR) -> Iterator[IR]:
    for node in walk(ir):
        if node[0] == "call":
            yield node


def argument(call: IR, params: list[str], name: str) -> IR | None:
    """The argument a call passes for parameter ``name`` (by keyword or position); None when
    the call does not pass it (the parameter keeps its default). What a ``*sequence`` or
    ``**mapping`` may supply is not a default: a ``*`` argument at or before the position gives
    the opaque ``["?", "star"]``; a ``**mapping(...)`` call, the item ``["a", mapping call,
    name]``; any other mapping, the subscript ``["i", mapping, ["s", name]]`` (a dict literal's
    item, else unresolved)."""
    if name in call[3]:
        return call[3][name]
    offset = 1 if params and params[0] in ("self", "cls") else 0
    position = params.index(name) - offset if name in params else -1
    args = call[2]
    starred = next((i for i, arg in enumerate(args) if arg == STAR), None)
    if position >= 0 and starred is not None and starred <= position:
        return STAR
    if 0 <= position < len(args):
        return args[position]
    mapping = call[3].get("**")
    if mapping is None:
        return None
    return ["a", mapping, name] if mapping[0] == "call" else ["i", mapping, ["s", name]]
