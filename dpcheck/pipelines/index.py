"""Name resolution over module summaries: where a name used at a place was bound.

``ProjectIndex`` answers "what does ``name`` mean at line L of scope S of file P" with a
``Binding``: a local assignment (possibly one element of a tuple unpacking), a loop target, a
function parameter, a module constant (of this or an imported module), an argparse/click/absl
option default, or a class attribute. Value resolution (``values``) and data-dependence
classification (``divisor``) are both written on top of it, so they agree on what a name is.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any, TypeVar

from dpcheck.pipelines.questions import Questions
from dpcheck.project import Project
from dpcheck.sites.ir import IR, callee_name, tail_name, walk
from dpcheck.sites.modules import resolve_module
from dpcheck.sites.views import ModuleSummary, module_view

Summary = dict[str, Any]
T = TypeVar("T")
#: Tests and vendored copies: never entry points, and their calls never feed a user pipeline.
SKIPPED = re.compile(r"(^|/)(tests?|testing|vendor|vendored|third_party|site-packages)/|"
                     r"(^|/)test_[^/]*\.py$|_test\.py$|(^|/)conftest\.py$")
ARGS_PARSERS: frozenset[str] = frozenset({"parse_args", "parse_known_args"})
#: The absl flag-values object: ``FLAGS.x`` (or ``flags.FLAGS.x``) reads ``DEFINE_*("x", ...)``.
ABSL_FLAGS = "FLAGS"
#: How many hops (assignments, returns, callers, factories) a class or function is followed.
MAX_CHAIN = 16
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


@dataclass(frozen=True)
class Ctx:
    """A place in the project: file, scope qualname and the line a name is read at."""

    path: str
    scope: str
    line: int = 10**9


@dataclass(frozen=True)
class Binding:
    """What a name is bound to. ``kind`` is one of ``assign``, ``loop``, ``param``, ``option``,
    ``module`` (an imported module object), ``function``, ``class`` or ``global`` (a module name
    that several functions assign under ``global``: which value a reader sees is not decided).

    ``ir`` is the bound expression (the assigned value, the loop iterable, the parameter default,
    the option default); ``index`` the tuple-unpacking position (None if not unpacked); ``ctx``
    where ``ir`` must itself be read; ``line`` the line of the binding (for provenance).
    """

    kind: str
    ir: IR | None
    ctx: Ctx
    line: int
    index: tuple[int, ...] | None = None
    name: str = ""

    def assigned(self) -> tuple[IR, Ctx] | None:
        """The expression of a plain (not unpacked) assignment and where to read it, else None."""
        if self.kind != "assign" or self.ir is None or self.index:
            return None
        return self.ir, replace(self.ctx, line=self.line)


def _positions(target: Any, name: str, prefix: tuple[int, ...] = ()) -> tuple[int, ...] | None:
    """Where ``name`` sits in an (possibly nested) unpacking target; () for a plain target."""
    if isinstance(target, str):
        return prefix if target == name else None
    if isinstance(target, list):
        for i, item in enumerate(target):
            found = _positions(item, name, (*prefix, i))
            if found is not None:
                return found
    return None


class ProjectIndex:
    """Summaries plus the lookups the pipeline stage needs; caches per-file derived tables."""

    def __init__(self, project: Project) -> None:
        self.project = project
        self._paths = frozenset(project.paths)
        self._call_index: dict[str, list[tuple[Ctx, IR]]] | None = None
        self._indexed: tuple[str, ...] | None = None
        self._aliases: dict[str, set[str]] | None = None
        self._assigned_from: dict[str, set[str]] | None = None
        self._method_names: frozenset[str] | None = None
        self._partials: tuple[str, ...] | None = None
        self._partial_calls: dict[str, list[tuple[Ctx, IR]]] | None = None
        self._bindings: dict[tuple[str, Ctx], Binding | None] = {}
        self._views: dict[str, ModuleSummary | None] = {}
        #: The recursive questions of this linking run (one memo, cycle guard and budget).
        self.questions = Questions()
        self._call_sites: dict[tuple[Ctx, frozenset[tuple[str, str]]],
                               list[tuple[Ctx, IR]]] = {}
        self._functions: dict[tuple[str, Ctx, frozenset[tuple[str, str]]], Ctx | None] = {}
        #: The scopes of the pipeline being classified: a function's callers inside it are
        #: preferred to the others (a helper shared by several entries gets each entry's own).
        self.reach: frozenset[tuple[str, str]] = frozenset()
        #: The ``if`` arms (path, scope, if line, 0 body | 1 else) the pipeline being classified
        #: skips under its default configuration: ``statements`` leaves their statements out.
        self.skipped_arms: frozenset[tuple[str, str, int, int]] = frozenset()
        self.module_path = lru_cache(maxsize=None)(self._module_path)
        self.receivers = lru_cache(maxsize=None)(self._receivers)
        self.global_writers = lru_cache(maxsize=None)(self._global_writers)
        self.skipped = lru_cache(maxsize=None)(self._skipped)
        # The library view of ``dpcheck history`` (pipelines/library.py) has no facts.
        facts = getattr(project, "facts", None)
        self._bundled = tuple(f"{f}/" for f in facts.bundled_folders()) if facts else ()

    def _skipped(self, path: str) -> bool:
        """Whether ``path`` is a test, a vendored copy or a DP library bundled in the project:
        never an entry point, and its calls never feed a user pipeline."""
        return bool(SKIPPED.search(path)) or path.startswith(self._bundled)

    def summary(self, path: str) -> ModuleSummary | None:
        """The typed view of a project file's summary (None if it has none); built once."""
        if path not in self._views:
            stored = self.project.summary(path)
            self._views[path] = module_view(stored) if stored is not None else None
        return self._views[path]

    def scope(self, ctx: Ctx) -> dict[str, Any] | None:
        summary = self.summary(ctx.path)
        return summary["scopes"].get(ctx.scope) if summary else None

    def statements(self, scopes: Iterable[Ctx]) -> Iterator[tuple[Ctx, dict[str, Any]]]:
        """Every statement of ``scopes`` that may run, in order, with its location (statements
        in an ``if`` arm of ``skipped_arms`` are left out)."""
        for ctx in scopes:
            scope = self.scope(ctx)
            for stmt in scope["stmts"] if scope is not None else ():
                if self.runs(ctx, stmt):
                    yield Ctx(ctx.path, ctx.scope, stmt["line"]), stmt

    def runs(self, ctx: Ctx, stmt: dict[str, Any]) -> bool:
        """Whether ``stmt`` of the scope of ``ctx`` may run: False when it sits in an ``if`` arm
        that ``skipped_arms`` lists (a dispatch arm the default configuration skips)."""
        return not self.skipped_arms or not any(
            (ctx.path, ctx.scope, line, arm) in self.skipped_arms
            for line, arm in stmt.get("br", ()))

    def unpacked_width(self, binding: Binding) -> int | None:
        """How many names the tuple target ``binding`` was unpacked into (``a, b, c = f()``:
        3); None for a plain binding."""
        scope = self.scope(binding.ctx) if binding.index else None
        for stmt in scope["stmts"] if scope else ():
            target = stmt["t"]
            if stmt["line"] == binding.line and isinstance(target, list) \
                    and _positions(target, binding.name) == binding.index:
                return len(target)
        return None

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

    def calls(self, scopes: Iterable[Ctx]) -> Iterator[tuple[Ctx, dict[str, Any], IR]]:
        """Every call expression in the statements of ``scopes``, with its statement."""
        for where, stmt in self.statements(scopes):
            for node in walk(stmt["e"]):
                if node[0] == "call":
                    yield where, stmt, node

    # -- modules ----------------------------------------------------------------------------
    def _module_path(self, importer: str, dotted: str) -> tuple[str, str] | None:
        """The project file a dotted import target lives in, and the remaining attribute path
        (``dpcheck.sites.modules.resolve_module``)."""
        return resolve_module(importer, dotted, self._paths)

    # -- names ------------------------------------------------------------------------------
    def bind(self, name: str, ctx: Ctx, depth: int = 0) -> Binding | None:
        """The binding of ``name`` (dotted) as read at ``ctx``; None if it cannot be found.
        Summaries do not change while a project is linked, so top-level answers are kept."""
        if depth:
            return self._bind(name, ctx, depth)
        key = (name, ctx)
        if key not in self._bindings:
            self._bindings[key] = self._bind(name, ctx, 0)
        return self._bindings[key]

    def _bind(self, name: str, ctx: Ctx, depth: int) -> Binding | None:
        if depth > 8:
            return None
        scope = self.scope(ctx)
        summary = self.summary(ctx.path)
        if scope is None or summary is None:
            return None
        found = self._local(name, ctx, scope)
        if found is not None:
            return found
        for param, default in scope["params"]:
            if param == name:
                return Binding("param", default, ctx, scope["line"], name=param)
        nested = f"{ctx.scope}.{name}"
        if nested in summary["scopes"] and ctx.scope not in summary["classes"] \
                and ctx.scope != "<module>":
            kind = "class" if nested in summary["classes"] else "function"
            return Binding(kind, None, Ctx(ctx.path, nested), summary["scopes"][nested]["line"],
                           name=nested)
        if ctx.scope != "<module>":
            parent = ctx.scope.rsplit(".", 1)[0] if "." in ctx.scope else "<module>"
            if parent in summary["classes"]:
                parent = "<module>"
            rebound = self._rebound(name, ctx) if parent == "<module>" else None
            return rebound or self.bind(name, Ctx(ctx.path, parent), depth + 1)
        return self._global(name, ctx, summary, depth)

    def _rebound(self, name: str, reader: Ctx) -> Binding | None:
        """A module name read inside a function, where other functions of the module assign it
        under ``global name``: the function reads what they stored (the module's own
        assignment is only its value until then), so the one such function's last assignment;
        a ``global`` binding (value not decided) when several functions store it; None when
        none does."""
        writers = [w for w in self.global_writers(reader.path).get(name, ()) if w != reader.scope]
        if not writers:
            return None
        first = Ctx(reader.path, writers[0])
        if len(writers) > 1:
            return Binding("global", None, first, self.scope(first)["line"], name=name)
        return self._local(name, first, self.scope(first))

    def _global_writers(self, path: str) -> dict[str, tuple[str, ...]]:
        """For each name of module ``path``: the functions that declare it ``global`` and
        assign it (computed once per file)."""
        summary = self.summary(path)
        writers: dict[str, list[str]] = {}
        for qual, scope in (summary or {}).get("scopes", {}).items():
            for name in scope.get("globals", ()):
                if self._local(name, Ctx(path, qual), scope) is not None:
                    writers.setdefault(name, []).append(qual)
        return {name: tuple(quals) for name, quals in writers.items()}

    def _local(self, name: str, ctx: Ctx, scope: dict[str, Any]) -> Binding | None:
        best: Binding | None = None
        reader: list[list[int]] | None = None
        for stmt in scope["stmts"]:
            if stmt["line"] >= ctx.line:
                break
            if stmt["k"] not in ("assign", "for", "with"):
                continue
            index = _positions(stmt["t"], name)
            if index is None:
                continue
            if "br" in stmt:
                if reader is None:
                    reader = _arms_at(scope, ctx.line)
                if _exclusive(stmt["br"], reader):
                    continue
            kind = "loop" if stmt["k"] == "for" else "assign"
            best = Binding(kind, stmt["e"], Ctx(ctx.path, ctx.scope, stmt["line"]),
                           stmt["line"], index or None, name)
        return best

    def _global(self, name: str, ctx: Ctx, summary: Summary, depth: int) -> Binding | None:
        head, _, rest = name.partition(".")
        if name in summary["scopes"] and name != "<module>":
            scope = summary["scopes"][name]
            kind = "class" if name in summary["classes"] else "function"
            return Binding(kind, None, Ctx(ctx.path, name), scope["line"], name=name)
        target = summary["imports"].get(head)
        if target is None:
            return None
        full = f"{target}.{rest}" if rest else target
        located = self.module_path(ctx.path, full)
        if located is None:
            return Binding("module", None, ctx, 0, name=full)
        path, attr = located
        if not attr:
            return Binding("module", None, Ctx(path, "<module>"), 0, name=full)
        return self.bind(attr, Ctx(path, "<module>"), depth + 1)

    # -- attributes ---------------------------------------------------------------------------
    def option(self, dest: str, path: str) -> Binding | None:
        """The argparse/click/absl option ``dest`` declared in ``path`` (else anywhere)."""
        ordered = [path, *(p for p in self.project.candidate_paths() if p != path)]
        for candidate in ordered:
            summary = self.summary(candidate)
            if not summary:
                continue
            for entry in summary["argparse"]:
                if entry["dest"] == dest:
                    default = entry["default"] or _implicit_default(entry)
                    return Binding("option", default, Ctx(candidate, "<module>"),
                                   entry["line"], name=dest)
        return None

    def attribute(self, name: str, ctx: Ctx) -> Binding | None:
        """``base.attr`` resolved through what ``base`` is: parsed args, a config object or
        class, ``self``, an imported module."""
        direct = self.bind(name, ctx)
        if direct is not None and direct.kind != "module":
            return direct
        base, _, attr = name.rpartition(".")
        if not base:
            return direct
        if base == "self" or base.startswith("self."):
            return self._self_attribute(name, ctx)
        if tail_name(base) == ABSL_FLAGS:
            return self.option(attr, ctx.path)
        owner = self.bind(base, ctx)
        if owner is None:
            return None
        if owner.kind == "assign" and owner.ir is not None and owner.ir[0] == "r" \
                and tail_name(owner.ir[1]) == ABSL_FLAGS:
            return self.option(attr, ctx.path)
        if owner.kind == "param" and owner.ir is None:
            return self._param_attribute(owner, attr)
        if owner.kind == "module":
            return self.attribute(name.split(".", 1)[1], owner.ctx) if owner.ctx.path != ctx.path \
                else None
        if owner.kind == "class":
            return self._class_attribute(owner.ctx.path, owner.name, attr)
        if owner.kind in ("assign", "param") and owner.ir is not None and owner.index is None:
            value = owner.ir
            if value[0] == "call":
                called = callee_name(value) or ""
                tail = tail_name(called)
                if tail in ARGS_PARSERS:
                    return self.option(attr, owner.ctx.path)
                returned = self._returned_option(value, owner.ctx, attr)
                if returned is not None:
                    return returned
                if attr in value[3]:
                    return Binding("assign", value[3][attr], owner.ctx, owner.line, name=attr)
                cls = self.bind(called, owner.ctx)
                if cls is not None and cls.kind == "class":
                    return self._class_attribute(cls.ctx.path, cls.name, attr)
            if value[0] == "i" and value[1][0] == "call":
                if (callee_name(value[1]) or "").endswith("parse_known_args"):
                    return self.option(attr, owner.ctx.path)
        from dpcheck.pipelines.hf_trainer import dataclass_field  # hf_trainer imports this module
        return dataclass_field(self, owner, attr)

    def _param_attribute(self, param: Binding, attr: str) -> Binding | None:
        """``args.x`` where ``args`` is a parameter: follow the single argument the callers pass
        (a name, or a project function returning ``parse_args()``)."""
        key = ("param-attribute", param.ctx.path, param.ctx.scope, param.name, attr, self.reach)
        return self.questions.ask(key, lambda: self._passed_attribute(param, attr), None)

    def _passed_attribute(self, param: Binding, attr: str) -> Binding | None:
        found: list[Binding | None] = []
        for where, arg in self.arguments(param):
            if arg[0] == "r":
                found.append(self.attribute(f"{arg[1]}.{attr}", where))
            elif arg[0] == "call":
                found.append(self.parsed_option(arg, where, attr)
                             or self._returned_option(arg, where, attr))
        unique = {(b.kind, b.ctx, b.line, b.name) if b else None for b in found}
        return found[0] if len(unique) == 1 else None

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

    def _undeclared_option(self, arg: IR, ctx: Ctx) -> bool:
        """Whether ``arg`` is the item ``name`` of ``**vars(parser.parse_args())`` while the
        file's parser declares options but not ``name``: the keyword is not passed at all (the
        parameter keeps its default), whatever another script declares."""
        if arg[0] != "a" or arg[1][0] != "call" or tail_name(callee_name(arg[1])) != "vars":
            return False
        summary = self.summary(ctx.path)
        declared = {entry["dest"] for entry in summary["argparse"]} if summary else set()
        return bool(declared) and arg[2] not in declared

    def in_reach(self, found: list[tuple[Ctx, T]]) -> list[tuple[Ctx, T]]:
        """The items of ``found`` located inside ``reach``, or all of them if none is."""
        own = [item for item in found if (item[0].path, item[0].scope) in self.reach]
        return own or found

    def parsed_option(self, call: IR, ctx: Ctx, attr: str) -> Binding | None:
        """Option ``attr`` of a ``parser.parse_args()`` call, or of ``vars()`` of parsed args
        (``main(**vars(parser.parse_args()))`` passes every option as a keyword)."""
        tail = tail_name(callee_name(call))
        if tail == "vars" and len(call[2]) == 1:
            inner = call[2][0]
            if inner[0] == "call":
                return self.parsed_option(inner, ctx, attr)
            return self.attribute(f"{inner[1]}.{attr}", ctx) if inner[0] == "r" else None
        return self.option(attr, ctx.path) if tail in ARGS_PARSERS else None

    def mutated(self, binding: Binding) -> bool:
        """Whether the bound name is also updated in place (``steps += 1``, or ``t = t + 1``
        inside a loop; for ``self.x``, in any method of the class or as ``obj.x += ...``
        anywhere in the module, the object reached through another name): its first value is
        a counter's start, not its value."""
        summary = self.summary(binding.ctx.path)
        if summary is None or not binding.name:
            return False
        scope = summary["scopes"].get(binding.ctx.scope)
        owner = scope.get("class") if scope and binding.name.startswith("self.") else None
        scopes = [s for s in summary["scopes"].values() if s.get("class") == owner] if owner \
            else [scope] if scope else []
        if any(stmt["t"] == binding.name and (stmt["k"] == "aug" or (
               stmt["k"] == "assign" and stmt["loop"] >= 0
               and ["r", binding.name] in walk(stmt["e"])))
               for s in scopes for stmt in s["stmts"]):
            return True
        attribute = "." + binding.name.rpartition(".")[2]
        return owner is not None and any(
            stmt["k"] == "aug" and isinstance(stmt["t"], str) and stmt["t"].endswith(attribute)
            for s in summary["scopes"].values() for stmt in s["stmts"])

    def _returned_option(self, call: IR, ctx: Ctx, attr: str) -> Binding | None:
        target = self.function(callee_name(call) or "", ctx)
        scope = self.scope(target) if target else None
        if target is None or scope is None:
            return None
        for stmt in scope["stmts"]:
            value = stmt["e"]
            if stmt["k"] == "return" and value[0] == "call" and tail_name(
                    callee_name(value)) in ARGS_PARSERS:
                return self.option(attr, target.path)
        return None

    def _self_attribute(self, name: str, ctx: Ctx) -> Binding | None:
        scope = self.scope(ctx)
        cls = scope.get("class") if scope else None
        if not cls:
            return None
        attr = name.split(".", 1)[1]
        return self._caller_attribute(ctx, attr) or self._class_attribute(
            ctx.path, cls, attr, f"self.{name[5:]}")

    def _caller_attribute(self, method: Ctx, attr: str) -> Binding | None:
        """What the callers of ``obj.method()`` assign to ``obj.attr`` before the call
        (``opt.lot = len(x)`` then ``opt.noisy_step()``): the value ``self.attr`` holds in the
        method, overriding what the class set. None unless exactly one binding is found."""
        found: dict[tuple[Ctx, int], Binding] = {}
        receivers = self.in_reach(list(self.receivers(Ctx(method.path, method.scope))))
        for where, base in receivers:
            for binding in self._set_attribute(base, attr, where):
                found[(binding.ctx, binding.line)] = binding
        return next(iter(found.values())) if len(found) == 1 else None

    def _set_attribute(self, base: str, attr: str, where: Ctx, depth: int = 0) -> list[Binding]:
        """The assignments to ``base.attr`` that reach ``where``: in its own scope or, when
        ``base`` is a parameter, in each caller before it passes the object on."""
        binding = self.bind(f"{base}.{attr}", where)
        if binding is not None:
            return [binding]
        owner = self.bind(base, where)
        if owner is None or owner.kind != "param" or owner.ir is not None or depth > 4:
            return []
        return [found for caller, arg in self.arguments(owner) if arg[0] == "r"
                for found in self._set_attribute(arg[1], attr, caller, depth + 1)]

    def _receivers(self, method: Ctx) -> tuple[tuple[Ctx, str], ...]:
        """Where ``obj.method()`` is called on a named object other than ``self``, and the
        object's name (computed once per method)."""
        found = []
        for where, call in self.call_sites(method):
            base = (callee_name(call) or "").rpartition(".")[0]
            if base and base != "self":
                found.append((where, base))
        return tuple(found)

    def _class_attribute(
        self, path: str, cls: str, attr: str, self_name: str | None = None
    ) -> Binding | None:
        summary = self.summary(path)
        if not summary:
            return None
        own = summary["scopes"].get(cls)
        if own is not None:
            found = self._local(attr, Ctx(path, cls), own)
            if found is not None:
                return found
        wanted = self_name or f"self.{attr}"
        for qual, scope in summary["scopes"].items():
            if scope.get("class") == cls and qual != cls:
                found = self._local(wanted, Ctx(path, qual), scope)
                if found is not None:
                    return found
        return None

    # -- functions and calls --------------------------------------------------------------------
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
        if key not in self._functions:
            self._functions[key] = self._function(callee, ctx, 0)
        return self._functions[key]

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
        if self._method_names is None:
            self._method_names = frozenset(
                qual.rpartition(".")[2] for path in self.project.candidate_paths()
                if (summary := self.summary(path))
                for qual, scope in summary["scopes"].items()
                if scope.get("class") and qual not in summary["classes"])
        return self._method_names

    def _constructed_class(self, name: str, ctx: Ctx) -> Ctx | None:
        """The class of ``name`` when it is assigned a direct call of a project class."""
        binding = self.bind(name, ctx)
        assigned = binding.assigned() if binding is not None else None
        cls = self.bind(callee_name(assigned[0]) or "", assigned[1]) \
            if assigned is not None and assigned[0][0] == "call" else None
        return Ctx(cls.ctx.path, cls.name) if cls is not None and cls.kind == "class" else None

    def _member(self, cls: Ctx, name: str) -> Ctx | None:
        """The method ``name`` defined in the class body of ``cls`` (a class scope)."""
        summary = self.summary(cls.path)
        qual = f"{cls.scope}.{name}"
        return Ctx(cls.path, qual) if summary and qual in summary["scopes"] else None

    def class_named(self, callee: str, ctx: Ctx, depth: int = 0) -> Ctx | None:
        """The project class a callable name denotes: the class itself, or the class a class
        factory returns (``NoisySGD = noisy_class(SGD)`` where ``noisy_class`` returns a
        class defined inside it)."""
        binding = self.bind(callee, ctx)
        if binding is not None and binding.kind not in ("function", "class"):
            binding = self._factory_product(binding, depth + 1)
        return binding.ctx if binding is not None and binding.kind == "class" else None

    def _factory_product(self, binding: Binding, depth: int) -> Binding | None:
        """For ``x = factory(...)`` (or ``x, y = factory(...)``), the class or function the
        project function ``factory`` returns (by name: one defined in it, or any other), if
        every return agrees."""
        value = binding.ir
        if binding.kind != "assign" or value is None or value[0] != "call" or depth > MAX_CHAIN:
            return None
        where = replace(binding.ctx, line=binding.line)
        factory = self.function(callee_name(value) or "", where, depth + 1)
        found: set[Binding | None] = set()
        for returned, place in self.returns(factory) if factory is not None else ():
            for position in binding.index or ():
                returned = returned[1][position] if returned[0] == "t" \
                    and position < len(returned[1]) else ["?", "unpacked"]
            product = self.bind(returned[1], place) if returned[0] == "r" else None
            found.add(replace(product, ctx=Ctx(product.ctx.path, product.ctx.scope))
                      if product is not None and product.kind in ("function", "class") else None)
        return found.pop() if len(found) == 1 else None

    def instance_class(self, name: str, ctx: Ctx, depth: int = 0) -> Ctx | None:
        """The project class of the object ``name`` holds: built by calling the class (or a
        name a class factory returned), returned by a project function, or passed in by the
        callers of the enclosing function (all agreeing). None when not decided."""
        key = ("instance-class", name, ctx, self.reach)
        return self.questions.ask(key, lambda: self._instance_class(name, ctx, depth), None)

    def _instance_class(self, name: str, ctx: Ctx, depth: int) -> Ctx | None:
        binding = self.bind(name, ctx) if depth <= MAX_CHAIN else None
        if binding is None:
            return None
        if binding.kind == "param" and binding.ir is None:
            key = ("param-class", binding.ctx.path, binding.ctx.scope, binding.name, self.reach)
            return self.questions.ask(key, lambda: self._passed_class(binding, depth), None)
        assigned = binding.assigned()
        return self._made_class(*assigned, depth + 1) if assigned is not None else None

    def _passed_class(self, param: Binding, depth: int) -> Ctx | None:
        """The class of the objects every caller passes for a parameter, if they agree."""
        found = {self.instance_class(arg[1], where, depth + 1) if arg[0] == "r" else None
                 for where, arg in self.arguments(param)}
        return found.pop() if len(found) == 1 else None

    def _made_class(self, value: IR, ctx: Ctx, depth: int) -> Ctx | None:
        """The project class of the object an expression evaluates to (see ``instance_class``)."""
        if value[0] == "r":
            return self.instance_class(value[1], ctx, depth)
        if value[0] != "call" or depth > MAX_CHAIN:
            return None
        callee = callee_name(value) or ""
        cls = self.class_named(callee, ctx, depth)
        if cls is not None:
            return cls
        target = self.function(callee, ctx, depth)
        return self._returned_class(target, depth + 1) if target is not None else None

    def _returned_class(self, function: Ctx, depth: int) -> Ctx | None:
        """The project class of the objects a project function returns, if all its returns
        agree."""
        key = ("returned-class", function.path, function.scope, self.reach)
        return self.questions.ask(key, lambda: self._agreed_class(function, depth), None)

    def _agreed_class(self, function: Ctx, depth: int) -> Ctx | None:
        found = {self._made_class(returned, where, depth)
                 for returned, where in self.returns(function)}
        return found.pop() if len(found) == 1 else None

    def if_test(self, ctx: Ctx, line: int) -> IR | None:
        """The test of the ``if`` statement at ``line`` of the scope of ``ctx``."""
        scope = self.scope(ctx)
        return scope.get("ifs", {}).get(str(line)) if scope else None

    def returns(self, function: Ctx) -> list[tuple[IR, Ctx]]:
        """The expressions a project function returns, each with where to read it."""
        scope = self.scope(function)
        return [(stmt["e"], Ctx(function.path, function.scope, stmt["line"]))
                for stmt in (scope["stmts"] if scope else ()) if stmt["k"] == "return"]

    def loop_count(self, ctx: Ctx, stmt: dict[str, Any]) -> tuple[Ctx, IR] | None:
        """The iteration count of the ``for ... in range(n)`` directly enclosing ``stmt``."""
        scope = self.scope(ctx)
        if scope is None or stmt["loop"] < 0:
            return None
        header = scope["stmts"][stmt["loop"]]
        iterable = header["e"]
        if iterable[0] == "call" and callee_name(iterable) == "range" and len(iterable[2]) == 1:
            return Ctx(ctx.path, ctx.scope, header["line"]), iterable[2][0]
        return None

    def call_sites(self, target: Ctx) -> list[tuple[Ctx, IR]]:
        """Calls anywhere in the indexed files that resolve to the function ``target``
        (a class's ``__init__`` is called by the class name). Computed once per target and
        pipeline reach; a chain of callers that leads back to ``target`` while its sites are
        being found sees none (it decides nothing)."""
        key = (Ctx(target.path, target.scope), self.reach)
        if key not in self._call_sites:
            self._call_sites[key] = []
            self._call_sites[key] = list(self._find_call_sites(key[0]))
        return self._call_sites[key]

    def _find_call_sites(self, target: Ctx) -> Iterator[tuple[Ctx, IR]]:
        parts = target.scope.split(".")
        short = parts[-2] if parts[-1] == "__init__" and len(parts) > 1 else parts[-1]
        wanted = Ctx(target.path, target.scope)
        for where, node in self.calls_named(short):
            if self.function(callee_name(node) or "", where) == wanted:
                yield where, node
        aliases = set((self._aliases or {}).get(short, ()))
        if len(parts) > 2 and parts[-1] == "__init__":
            factory = tail_name(".".join(parts[:-2]))
            aliases.update((self._assigned_from or {}).get(factory, ()))
        for alias in sorted(aliases):
            for where, node in self.calls_named(alias):
                if wanted in self.functions(callee_name(node) or "", where):
                    yield where, node
        yield from self._partial_sites(wanted, {short, *aliases})

    def _partial_sites(self, wanted: Ctx, names: set[str]) -> Iterator[tuple[Ctx, IR]]:
        """``functools.partial(f, a, k=v)`` read as a call of ``f`` with those arguments. The
        arguments the partial object is called with later are not known here: a trailing ``*``
        and ``**`` stand for them, so the other parameters of ``f`` stay unresolved rather than
        taking their defaults."""
        if self._partial_calls is None:
            self._partial_calls = {}
            for alias in self.partial_aliases():
                for where, node in self.calls_named(alias):
                    func = node[2][0] if node[2] else None
                    if func is not None and func[0] == "r" and self.qualified(
                            callee_name(node) or "", where.path) == "functools.partial":
                        self._partial_calls.setdefault(tail_name(func[1]), []).append(
                            (where, node))
        for name in sorted(names):
            for where, node in self._partial_calls.get(name, ()):
                func = node[2][0]
                if wanted not in self.functions(func[1], where):
                    continue
                later = {**node[3], "**": PARTIAL_REST}
                yield where, ["call", func, [*node[2][1:], STAR], later, node[4], node[5]]

    def partial_aliases(self) -> tuple[str, ...]:
        """The names the indexed files call ``functools.partial`` by: ``partial`` (also the tail
        of ``functools.partial``) and each name an import binds it to (``from functools import
        partial as bind``). Computed once."""
        if self._partials is None:
            self._partials = ("partial", *sorted(
                {name for path in self.indexed_paths()
                 for name, target in ((self.summary(path) or {}).get("imports") or {}).items()
                 if target == "functools.partial" and name != "partial"}))
        return self._partials

    def qualified(self, name: str, path: str) -> str:
        """``name`` with its first part replaced by what the module ``path`` imports under it
        (``partial`` -> ``functools.partial``); ``name`` itself when that part is not imported."""
        summary = self.summary(path)
        head, dot, rest = name.partition(".")
        target = summary["imports"].get(head) if summary else None
        return f"{target}{dot}{rest}" if target else name

    def indexed_paths(self) -> tuple[str, ...]:
        """The files the call index reads: the candidate files and the project files they
        import, up to ``IMPORT_HOPS`` imports away and ``MAX_IMPORTED_FILES`` in all (tests and
        vendored copies excluded). A training step in a module without any DP marker still
        calls the optimizer's methods and sets their attributes; following imports, not every
        file, keeps the number of summaries small."""
        if self._indexed is None:
            seen = set(self.project.candidate_paths())
            frontier = sorted(seen)
            budget = MAX_IMPORTED_FILES
            for _ in range(IMPORT_HOPS):
                frontier = sorted({found for path in frontier for found in self._imported(path)
                                   if found not in seen and not self.skipped(found)})[:budget]
                budget -= len(frontier)
                seen.update(frontier)
            self._indexed = tuple(p for p in sorted(seen) if self.summary(p) is not None)
        return self._indexed

    def _imported(self, path: str) -> Iterator[str]:
        """The project files the imports of ``path`` name."""
        summary = self.summary(path)
        for target in (summary or {}).get("imports", {}).values():
            located = self.module_path(path, target)
            if located is not None:
                yield located[0]

    def calls_named(self, tail: str) -> list[tuple[Ctx, IR]]:
        """Every call in the indexed files (``indexed_paths``) whose callee ends in ``tail``
        (index built once)."""
        if self._call_index is None:
            self._call_index = {}
            self._aliases = {}
            self._assigned_from = {}
            for path in self.indexed_paths():
                summary = self.summary(path)
                for qual, scope in (summary or {}).get("scopes", {}).items():
                    for stmt in scope["stmts"]:
                        where = Ctx(path, qual, stmt["line"])
                        if stmt["k"] == "assign" and isinstance(stmt["t"], str):
                            for name in _alias_names(stmt["e"]):
                                self._aliases.setdefault(tail_name(name), set()).add(
                                    tail_name(stmt["t"]))
                            if stmt["e"][0] == "call":
                                self._assigned_from.setdefault(
                                    tail_name(callee_name(stmt["e"])), set()).add(
                                    tail_name(stmt["t"]))
                        for node in _calls(stmt["e"]):
                            name = tail_name(callee_name(node))
                            self._call_index.setdefault(name, []).append((where, node))
        return self._call_index.get(tail, [])


def _implicit_default(entry: dict[str, Any]) -> IR | None:
    """The default an argparse flag without ``default=`` has by its action: ``False`` for
    ``action="store_true"``, ``True`` for ``"store_false"``."""
    action = entry.get("action")
    return ["c", action == "store_false"] if action in ("store_true", "store_false") else None


def _alias_names(ir: IR) -> list[str]:
    """The names an assigned value may alias: ``f`` of ``g = f``, both arms of ``a if c else b``."""
    if ir[0] == "r":
        return [ir[1]]
    if ir[0] == "?" and len(ir) == 4 and ir[1] == "ifexp":
        return [n for arm in ir[2:] for n in _alias_names(arm)]
    return []


def _arms_at(scope: dict[str, Any], line: int) -> list[list[int]]:
    """The ``if`` arms of the statement of ``scope`` at ``line`` (none if there is no such one)."""
    return next((s.get("br", []) for s in scope["stmts"] if s["line"] == line), [])


def _exclusive(arms: list[list[int]], other: list[list[int]]) -> bool:
    """Whether two statements sit in different arms of one ``if`` (never both run)."""
    taken = {line: arm for line, arm in other}
    return any(taken.get(line, arm) != arm for line, arm in arms)


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
