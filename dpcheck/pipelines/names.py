"""Name resolution: what a name read at a place is bound to, and which library object it is.

``bind`` answers "what does ``name`` mean at line L of scope S of file P" with a ``Binding``: a
local assignment (possibly one element of a tuple unpacking), a loop target, a function
parameter, a module constant (of this or an imported module), a class attribute, an imported
library module or object. ``attribute`` resolves ``base.attr`` through what ``base`` is (parsed
options, a config object or class, ``self``, an imported module, a parameter followed to what its
callers pass). ``library_name`` gives the import-qualified name of a library object, so library
APIs are matched by where they come from, never by the last part of a name. Seen from a pipeline,
an assignment in a dispatch arm its default configuration skips binds nothing; ``reaching`` lists
the assignments a reader may see when an ``if`` before it is not decided.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from dpcheck.pipelines.binding import Binding
from dpcheck.pipelines.options import ABSL_FLAGS
from dpcheck.pipelines.scope import Ctx
from dpcheck.pipelines.vocabulary import calls_in
from dpcheck.sites.ir import IR, tail_name
from dpcheck.sites.modules import resolve_module
from dpcheck.sites.nodes import Attr, Call, Const, Name, Num, Opaque, Str, Subscript, node
from dpcheck.sites.views import ModuleSummary, Scope


class NamesMixin:
    """Name resolution of ``ProjectIndex`` (see the module docstring)."""

    def _module_path(self, importer: str, dotted: str) -> tuple[str, str] | None:
        """The project file a dotted import target lives in, and the remaining attribute path
        (``dpcheck.sites.modules.resolve_module``)."""
        return resolve_module(importer, dotted, self._paths)

    def bind(self, name: str, ctx: Ctx, depth: int = 0) -> Binding | None:
        """The binding of ``name`` (dotted) as read at ``ctx``; None if it cannot be found.
        Summaries do not change while a project is linked, so top-level answers are kept."""
        if depth:
            return self._bind(name, ctx, depth)
        key = (name, ctx, self.skipped_arms)
        if key not in self.shared.bindings:
            self.shared.bindings[key] = self._bind(name, ctx, 0)
        return self.shared.bindings[key]

    def _bind(self, name: str, ctx: Ctx, depth: int) -> Binding | None:
        if depth > 8:
            return None
        scope = self.scope(ctx)
        summary = self.summary(ctx.path)
        if scope is None or summary is None:
            return None
        found = self._local(name, ctx, scope, pruned=True)
        if found is not None:
            return found
        for param in scope.params:
            if param.name == name:
                return Binding("param", param.default, ctx, scope.line, name=param.name)
        nested = f"{ctx.scope}.{name}"
        if nested in summary.scopes and ctx.scope not in summary.classes \
                and ctx.scope != "<module>":
            kind = "class" if nested in summary.classes else "function"
            return Binding(kind, None, Ctx(ctx.path, nested), summary.scopes[nested].line,
                           name=nested)
        if ctx.scope != "<module>":
            enclosing, _, _ = ctx.scope.rpartition(".")
            parent = enclosing or "<module>"
            if parent in summary.classes:
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
        writer, *others = writers
        first = Ctx(reader.path, writer)
        if others:
            return Binding("global", None, first, self.scope(first).line, name=name)
        return self._local(name, first, self.scope(first))

    def _global_writers(self, path: str) -> dict[str, tuple[str, ...]]:
        """For each name of module ``path``: the functions that declare it ``global`` and
        assign it (computed once per file)."""
        summary = self.summary(path)
        writers: dict[str, list[str]] = {}
        for qual, scope in (summary.scopes if summary else {}).items():
            for name in scope.globals:
                if self._local(name, Ctx(path, qual), scope) is not None:
                    writers.setdefault(name, []).append(qual)
        return {name: tuple(quals) for name, quals in writers.items()}

    def _local(self, name: str, ctx: Ctx, scope: Scope, pruned: bool = False) -> Binding | None:
        """The last assignment of ``name`` in ``scope`` before the reader at ``ctx`` that may
        run with it (not in another arm of an ``if`` the reader sits in; with ``pruned``, not
        in an arm the pipeline skips either)."""
        found = self._assignments(name, ctx, scope, pruned)
        if not found:
            return None
        last, _ = found[-1]
        return last

    def _assignments(self, name: str, ctx: Ctx, scope: Scope,
                     pruned: bool) -> list[tuple[Binding, list[tuple[int, int]]]]:
        """The assignments ``_local`` chooses from, in order, each with its ``if`` arms."""
        found: list[tuple[Binding, list[tuple[int, int]]]] = []
        reader: list[tuple[int, int]] | None = None
        for stmt in scope.statements:
            if stmt.line >= ctx.line:
                break
            if stmt.kind not in ("assign", "for", "with"):
                continue
            index = _positions(stmt.target, name)
            if index is None:
                continue
            if stmt.arms:
                if reader is None:
                    reader = _arms_at(scope, ctx.line)
                if _exclusive(stmt.arms, reader) or (pruned and not self.runs(ctx, stmt)):
                    continue
            kind = "loop" if stmt.kind == "for" else "assign"
            found.append((Binding(kind, stmt.expr, Ctx(ctx.path, ctx.scope, stmt.line),
                                  stmt.line, index or None, name), stmt.arms))
        return found

    def reaching(self, name: str, ctx: Ctx) -> list[Binding]:
        """The local assignments of ``name`` whose value the reader at ``ctx`` may see: the
        last one (``bind``) and, when it sits in an ``if`` arm the reader is not inside, the
        earlier ones that some run does not replace (another arm's, one before the ``if``).
        Arms the pipeline skips are left out, so a dispatch decided by the default
        configuration leaves one. Several: which one the reader sees depends on an ``if`` that
        is not decided."""
        scope = self.scope(ctx)
        if scope is None:
            return []
        found = self._assignments(name, ctx, scope, pruned=True)
        reader = set(_arms_at(scope, ctx.line))
        return [binding for i, (binding, arms) in enumerate(found)
                if not any(_replaced(arms[:cut], reader, found[i + 1:])
                           for cut in range(len(arms) + 1))]

    def _global(self, name: str, ctx: Ctx, summary: ModuleSummary, depth: int) -> Binding | None:
        head, _, rest = name.partition(".")
        if name in summary.scopes and name != "<module>":
            scope = summary.scopes[name]
            kind = "class" if name in summary.classes else "function"
            return Binding(kind, None, Ctx(ctx.path, name), scope.line, name=name)
        target = summary.imports.get(head)
        if target is None:
            return self._starred(name, ctx, summary, depth)
        full = f"{target}.{rest}" if rest else target
        located = self.module_path(ctx.path, full)
        path, attr = located if located is not None else ("", "")
        if located is None or self._bundled_import(path, ctx.path):
            return Binding("module", None, ctx, 0, name=full, library=True)
        if not attr:
            return Binding("module", None, Ctx(path, "<module>"), 0, name=full)
        return self.bind(attr, Ctx(path, "<module>"), depth + 1)

    def _starred(self, name: str, ctx: Ctx, summary: ModuleSummary, depth: int) -> Binding | None:
        """``name`` bound by a ``from module import *`` of the module: the first project module
        imported so that defines it (a library's ``*`` names nothing dpcheck can list). Only a
        few star imports deep: chains of them are followed, cycles end."""
        if depth > 2:
            return None
        for module in summary.stars:
            located = self.module_path(ctx.path, module)
            path, attr = located if located is not None else (ctx.path, "")
            if attr or path == ctx.path:
                continue
            found = self.bind(name, Ctx(path, "<module>"), depth + 1)
            if found is not None:
                return found
        return None

    def imports_library(self, importer: str, target: str) -> bool:
        """Whether the import of ``target`` in the file ``importer`` is a library's: no project
        module is found for it, or it lands in a DP library bundled in the project from outside
        that library (``_bundled_import``)."""
        located = self.module_path(importer, target)
        if located is None:
            return True
        path, _ = located
        return self._bundled_import(path, importer)

    def _bundled_import(self, target: str, importer: str) -> bool:
        """Whether an import of ``importer`` lands in a DP library bundled in the project
        (``discover.vendored``) from outside it: that is the library, imported as the user's
        code imports it, not project code."""
        return any(target.startswith(folder) and not importer.startswith(folder)
                   for folder in self._bundled)

    def assigned(self, name: str, ctx: Ctx) -> tuple[IR, Ctx] | None:
        """What the name ``name`` read at ``ctx`` was assigned, and where
        (``Binding.assigned``); None when it is not a plain assignment."""
        binding = self.attribute(name, ctx)
        return binding.assigned() if binding is not None else None

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
        if owner.kind == "assign" and isinstance(owner.ir, Name) \
                and owner.ir.last == ABSL_FLAGS:
            return self.option(attr, ctx.path)
        if owner.kind == "param" and (owner.ir is None or _none(owner.ir)):
            # a default of None has no attributes: the object is what the callers pass
            return self._param_attribute(owner, attr)
        if owner.kind == "module":
            _, _, inside = name.partition(".")
            return None if owner.library else self.attribute(inside, owner.ctx)
        if owner.kind == "class":
            return self._class_attribute(owner.ctx.path, owner.name, attr)
        if owner.kind in ("assign", "param") and owner.ir is not None and owner.index is None:
            value = owner.ir
            if isinstance(value, Call):
                called = value.name or ""
                if calls_in("option_parses", value, replace(owner.ctx, line=owner.line), self):
                    return self.option(attr, owner.ctx.path)
                returned = self._returned_option(value, owner.ctx, attr)
                if returned is not None:
                    return returned
                if attr in value.kwargs:
                    return Binding("assign", value.kwargs[attr], owner.ctx, owner.line, name=attr)
                cls = self.bind(called, owner.ctx)
                if cls is not None and cls.kind == "class":
                    return self._class_attribute(cls.ctx.path, cls.name, attr)
            if isinstance(value, Subscript) and isinstance(value.value, Call) and calls_in(
                    "option_parses", value.value, replace(owner.ctx, line=owner.line), self):
                return self.option(attr, owner.ctx.path)  # the namespace of parse_known_args
        return self.dataclass_field(owner, attr)

    def library_name(self, dotted: str, ctx: Ctx) -> str | None:
        """The import-qualified name of the library object ``dotted`` denotes at ``ctx``:
        ``torch.normal`` for ``th.normal`` after ``import torch as th``;
        ``opacus.PrivacyEngine.make_private`` for ``engine.make_private`` after ``engine =
        PrivacyEngine()`` (an instance is named by its class, also through the callers that
        pass it in); a method a project class inherits from a library class is the library's;
        an object of a vendored copy of a library module is the library's. None for a project
        object (its code is analysed as such) and for an object whose origin
        is not decided. Library APIs are matched on this name, never on a name's last part.
        A name whose head is an imported library module is a table lookup, answered without
        spending the work budget."""
        head, _, rest = dotted.partition(".")
        imported = self.bind(head, ctx)
        if imported is not None and imported.kind == "module" and imported.library:
            return f"{imported.name}.{rest}" if rest else imported.name
        key = ("library-name", dotted, ctx, self.reach)
        return self.questions.ask(key, lambda: self._library_name(dotted, ctx), None)

    def _library_name(self, dotted: str, ctx: Ctx) -> str | None:
        parts = dotted.split(".")
        for cut in range(len(parts), 0, -1):
            head = ".".join(parts[:cut])
            binding = self.bind(head, ctx) or (self.attribute(head, ctx) if cut > 1 else None)
            if binding is None or (cut < len(parts) and cut > 1
                                   and isinstance(binding.ir, (Num, Str, Const))):
                # a literal has no attributes to call: ``engine.accountant`` read as the
                # constructor's ``accountant="rdp"`` keyword is not the object's attribute
                continue
            return self._named(binding, parts[cut:])
        return None

    def _named(self, binding: Binding, rest: list[str]) -> str | None:
        """The library name of ``binding`` followed by the attribute path ``rest``."""
        if binding.kind == "module":
            if binding.library:
                return ".".join([binding.name, *rest])
            return self.library_name(".".join(rest), binding.ctx) if rest else None
        if binding.kind in ("function", "class"):
            copied = self.copied_name(binding.ctx.path, binding.name)
            if copied is not None:
                return ".".join([copied, *rest])
        if binding.kind == "class":
            return self._inherited(binding.ctx.path, binding.name, rest)
        if binding.kind == "param" and binding.ir is None:
            named = {self._value_name(arg, where, rest) for where, arg in self.arguments(binding)}
            return named.pop() if len(named) == 1 else None
        if binding.kind in ("assign", "param", "option") and binding.ir is not None \
                and not binding.index:
            return self._value_name(binding.ir, replace(binding.ctx, line=binding.line), rest)
        return None

    def _value_name(self, value: IR, ctx: Ctx, rest: list[str]) -> str | None:
        """The library name of what ``value`` evaluates to, followed by ``rest``: a name's, or
        for a call, an instance of the library class (or of the project class) it calls; for
        ``a if c else b``, the name both arms have (None when they differ)."""
        value = node(value)
        if isinstance(value, Name):
            return self.library_name(".".join([value.dotted, *rest]), ctx)
        if isinstance(value, Opaque) and value.kind == "ifexp" and value.parts:
            arms = {self._value_name(arm, ctx, rest) for arm in value.parts}
            return arms.pop() if len(arms) == 1 else None
        if not isinstance(value, Call) or not isinstance(value.callee, Name):
            return None
        called = value.callee.dotted
        callee = self.bind(called, ctx) or self.attribute(called, ctx)
        if callee is not None and callee.kind == "class":
            return self._inherited(callee.ctx.path, callee.name, rest) if rest else None
        made = self.library_name(called, ctx)
        if made is None:
            return None
        return ".".join([made, *rest]) if rest else f"{made}()"

    def _inherited(self, path: str, cls: str, rest: list[str]) -> str | None:
        """``rest`` (a method and what follows) of the project class ``cls``: None when the
        class defines it (project code), else the library name of the method of the first base
        that is a library class. A class of a vendored copy of a library module
        (``dpcheck.pipelines.copies``) is that library's class."""
        copied = self.copied_name(path, cls) if rest else None
        if copied is not None:
            return ".".join([copied, *rest])
        summary = self.summary(path)
        method = next(iter(rest), None)
        if method is None or summary is None or f"{cls}.{method}" in summary.scopes \
                or cls not in summary.classes:
            return None
        where = Ctx(path, "<module>")
        for base in summary.bases(cls):
            named = self.library_name(".".join([base, *rest]), where) if base else None
            if named is not None:
                return named
        return None

    def _param_attribute(self, param: Binding, attr: str) -> Binding | None:
        """``args.x`` where ``args`` is a parameter: follow the single argument the callers pass
        (a name, or a project function returning ``parse_args()``)."""
        key = ("param-attribute", param.ctx.path, param.ctx.scope, param.name, attr, self.reach)
        return self.questions.ask(key, lambda: self._passed_attribute(param, attr), None)

    def _passed_attribute(self, param: Binding, attr: str) -> Binding | None:
        found: list[Binding | None] = []
        for where, arg in self.arguments(param):
            arg = node(arg)
            if isinstance(arg, Name):
                found.append(self.attribute(f"{arg.dotted}.{attr}", where))
            elif isinstance(arg, Call):
                found.append(self.parsed_option(arg, where, attr)
                             or self._returned_option(arg, where, attr))
        unique = {(b.kind, b.ctx, b.line, b.name) if b else None for b in found}
        return next(iter(found), None) if len(unique) == 1 else None

    def _self_attribute(self, name: str, ctx: Ctx) -> Binding | None:
        scope = self.scope(ctx)
        cls = scope.owner if scope else None
        if not cls:
            return None
        _, _, attr = name.partition(".")
        found = self._caller_attribute(ctx, attr) or self._class_attribute(
            ctx.path, cls, attr, f"self.{name[5:]}")
        if found is not None:
            return found
        head, dot, rest = attr.partition(".")
        if not dot:
            return self._base_keyword(ctx.path, cls, attr)
        # ``self.a.b``: attribute ``b`` of what ``self.a`` holds (a parameter stored there);
        # a question of the guard, since attributes may be copied into each other in a cycle
        holder = self._self_attribute(f"self.{head}", ctx)
        if holder is None or holder.index or not isinstance(holder.ir, Name) \
                or holder.kind not in ("assign", "param"):
            return None
        held, where = f"{holder.ir.dotted}.{rest}", replace(holder.ctx, line=holder.line)
        return self.questions.ask(("held-attribute", held, where, self.reach),
                                  lambda: self.attribute(held, where), None)

    def _base_keyword(self, path: str, cls: str, attr: str) -> Binding | None:
        """``self.attr`` that no method of the project class ``cls`` sets, where its
        ``__init__`` passes ``attr=value`` to the constructor of a library base
        (``super().__init__(args=args)``): the library keeps the keyword as the attribute of
        the same name, so it holds ``value``. None otherwise."""
        summary = self.summary(path)
        init = summary.scopes.get(f"{cls}.__init__") if summary else None
        if summary is None or init is None or cls not in summary.classes:
            return None
        module = Ctx(path, "<module>")
        heads = [base.partition(".") for base in summary.bases(cls) if base]
        if not any((found := self.bind(head, module)) is not None and found.kind == "module"
                   and found.library for head, _, _ in heads):
            return None
        for stmt in init.statements:
            for part in stmt.expr.walk():
                callee = part.callee if isinstance(part, Call) else None
                if isinstance(callee, Attr) and callee.attr == "__init__" \
                        and isinstance(callee.base, Call) and callee.base.name == "super" \
                        and attr in part.kwargs:
                    return Binding("assign", part.kwargs[attr], Ctx(path, f"{cls}.__init__"),
                                   stmt.line, name=attr)
        return None

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
        return [found for caller, arg in self.arguments(owner) if isinstance(arg, Name)
                for found in self._set_attribute(arg.dotted, attr, caller, depth + 1)]

    def _receivers(self, method: Ctx) -> tuple[tuple[Ctx, str], ...]:
        """Where ``obj.method()`` is called on a named object other than ``self``, and the
        object's name (computed once per method)."""
        found = []
        for where, call in self.call_sites(method):
            base, _, _ = (node(call).name or "").rpartition(".")
            if base and base != "self":
                found.append((where, base))
        return tuple(found)

    def _class_attribute(
        self, path: str, cls: str, attr: str, self_name: str | None = None
    ) -> Binding | None:
        summary = self.summary(path)
        if not summary:
            return None
        own = summary.scopes.get(cls)
        if own is not None:
            found = self._local(attr, Ctx(path, cls), own)
            if found is not None:
                return found
        wanted = self_name or f"self.{attr}"
        for qual, scope in summary.scopes.items():
            if scope.owner == cls and qual != cls:
                found = self._local(wanted, Ctx(path, qual), scope)
                if found is not None:
                    return found
        return None

    def mutated(self, binding: Binding) -> bool:
        """Whether the bound name is also updated in place (``steps += 1``, or ``t = t + 1``
        inside a loop; for ``self.x``, in any method of the class or as ``obj.x += ...``
        anywhere in the module, the object reached through another name): its first value is
        a counter's start, not its value."""
        summary = self.summary(binding.ctx.path)
        if summary is None or not binding.name:
            return False
        scope = summary.scopes.get(binding.ctx.scope)
        owner = scope.owner if scope and binding.name.startswith("self.") else None
        scopes = [s for s in summary.scopes.values() if s.owner == owner] if owner \
            else [scope] if scope else []
        read = Name(["r", binding.name])
        if any(stmt.target == binding.name and (stmt.kind == "aug" or (
               stmt.kind == "assign" and stmt.loop >= 0 and read in stmt.expr.walk()))
               for s in scopes for stmt in s.statements):
            return True
        _, _, last = binding.name.rpartition(".")
        attribute = "." + last
        return owner is not None and any(
            stmt.kind == "aug" and isinstance(stmt.target, str) and stmt.target.endswith(attribute)
            for s in summary.scopes.values() for stmt in s.statements)

    def unpacked_width(self, binding: Binding) -> int | None:
        """How many names the tuple target ``binding`` was unpacked into (``a, b, c = f()``:
        3); None for a plain binding."""
        scope = self.scope(binding.ctx) if binding.index else None
        for stmt in scope.statements if scope else ():
            target = stmt.target
            if stmt.line == binding.line and isinstance(target, list) \
                    and _positions(target, binding.name) == binding.index:
                return len(target)
        return None

    def qualified(self, name: str, path: str) -> str:
        """``name`` with its first part replaced by what the module ``path`` imports under it
        (``partial`` -> ``functools.partial``); ``name`` itself when that part is not imported."""
        summary = self.summary(path)
        head, dot, rest = name.partition(".")
        target = summary.imports.get(head) if summary else None
        return f"{target}{dot}{rest}" if target else name


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


def _arms_at(scope: Scope, line: int) -> list[tuple[int, int]]:
    """The ``if`` arms of the statement of ``scope`` at ``line`` (none if there is no such one)."""
    return next((s.arms for s in scope.statements if s.line == line), [])


def _replaced(path: list[tuple[int, int]], reader: set[tuple[int, int]],
              later: list[tuple[Binding, list[tuple[int, int]]]]) -> bool:
    """Whether every run through the ``if`` arms ``path`` (outside those the reader sits in)
    reaches one of the ``later`` assignments: one sits in exactly these arms, or both arms of
    one ``if`` inside them are replaced."""
    own = [arm for arm in path if arm not in reader]
    nested = [[arm for arm in arms if arm not in reader] for _, arms in later]
    if any(arms == own for arms in nested):
        return True
    depth = len(own)
    tests = {test for arms in nested if arms[:depth] == own for test, _ in arms[depth:depth + 1]}
    return any(all(_replaced([*own, (line, arm)], reader, later) for arm in (0, 1))
               for line in tests)


def _exclusive(arms: list[tuple[int, int]], other: list[tuple[int, int]]) -> bool:
    """Whether two statements sit in different arms of one ``if`` (never both run)."""
    taken = {line: arm for line, arm in other}
    return any(taken.get(line, arm) != arm for line, arm in arms)


def _none(value: IR) -> bool:
    """Whether ``value`` is the literal ``None``."""
    value = node(value)
    return isinstance(value, Const) and value.value is None
