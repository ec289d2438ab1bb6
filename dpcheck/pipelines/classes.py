"""Objects and their project classes: which class an object is an instance of, which class a
factory returns.

``instance_class`` follows an object to the project class it was built from: a direct call of
the class (or of a name a class factory returned), the return of a project function, or what the
callers of the enclosing function pass in (all agreeing). Every question goes through the
index's memo (``dpcheck.pipelines.questions``): a cycle or an over-deep chain leaves a class
undecided, never decided wrongly.
"""

from __future__ import annotations

from dataclasses import replace

from dpcheck.pipelines.binding import Binding
from dpcheck.pipelines.scope import Ctx
from dpcheck.sites.ir import IR
from dpcheck.sites.nodes import Call, Name, Node, Opaque, Seq, node

#: How many hops (assignments, returns, callers, factories) a class or function is followed.
MAX_CHAIN = 16


class ClassesMixin:
    """Instance classes of ``ProjectIndex`` (see the module docstring)."""

    def _constructed_class(self, name: str, ctx: Ctx) -> Ctx | None:
        """The class of ``name`` when it is assigned a direct call of a project class."""
        binding = self.bind(name, ctx)
        assigned = binding.assigned() if binding is not None else None
        value, where = assigned if assigned is not None else (None, ctx)
        cls = self.bind(value.name or "", where) if isinstance(value, Call) else None
        return Ctx(cls.ctx.path, cls.name) if cls is not None and cls.kind == "class" else None

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
        if binding.kind != "assign" or not isinstance(value, Call) or depth > MAX_CHAIN:
            return None
        where = replace(binding.ctx, line=binding.line)
        factory = self.function(value.name or "", where, depth + 1)
        found: set[Binding | None] = set()
        for returned, place in self.returns(factory) if factory is not None else ():
            for position in binding.index or ():
                returned = returned.items[position] if isinstance(returned, Seq) \
                    and position < len(returned.items) else Opaque(["?", "unpacked"])
            product = self.bind(returned.dotted, place) if isinstance(returned, Name) else None
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
        binding = self._holder(name, ctx) if depth <= MAX_CHAIN else None
        if binding is None:
            return None
        if binding.kind == "param" and binding.ir is None:
            key = ("param-class", binding.ctx.path, binding.ctx.scope, binding.name, self.reach)
            return self.questions.ask(key, lambda: self._passed_class(binding, depth), None)
        assigned = binding.assigned()
        return self._made_class(*assigned, depth + 1) if assigned is not None else None

    def _holder(self, name: str, ctx: Ctx) -> Binding | None:
        """The binding of ``name`` at ``ctx``; for an attribute of ``self`` the method does not
        set, the class's own assignment (``self.model = model`` in ``__init__``: a constructor
        parameter stored there holds what the callers pass). Not what callers of the method
        assign to the object (``NamesMixin.attribute``): asked for every object whose class
        is wanted, that walk over every caller grows with the project (all of torch: 51 s ->
        over 250 s)."""
        binding = self.bind(name, ctx)
        head, dot, attr = name.partition(".")
        if binding is not None or head != "self" or not dot or "." in attr:
            return binding
        scope = self.scope(ctx)
        return self._class_attribute(ctx.path, scope.owner, attr) if scope and scope.owner \
            else None

    def _passed_class(self, param: Binding, depth: int) -> Ctx | None:
        """The class of the objects every caller passes for a parameter (a name holding one, or
        the constructor call itself: ``Runner(Participant(...))``), if they agree."""
        found = {self._given_class(node(arg), where, depth + 1)
                 for where, arg in self.arguments(param)}
        return found.pop() if len(found) == 1 else None

    def _given_class(self, arg: Node, ctx: Ctx, depth: int) -> Ctx | None:
        """The class of an argument: what a name holds, or the class a constructor call builds.
        A call is not followed into a project function's returns here: asked for every caller
        of every parameter whose class is wanted, that walk grew past any bound on large
        projects (all of site-packages)."""
        if isinstance(arg, Name):
            return self.instance_class(arg.dotted, ctx, depth)
        return self.class_named(arg.name or "", ctx, depth) \
            if isinstance(arg, Call) and depth <= MAX_CHAIN else None

    def _made_class(self, value: IR, ctx: Ctx, depth: int) -> Ctx | None:
        """The project class of the object an expression evaluates to (see ``instance_class``)."""
        value = node(value)
        given = self._given_class(value, ctx, depth)
        if given is not None or not isinstance(value, Call) or depth > MAX_CHAIN:
            return given
        target = self.function(value.name or "", ctx, depth)
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
