"""Where a value comes from: the provenance analysis of data values.

Every value the divisor, sampling and parameter readers ask about is tagged with its *origin*, a
point of a small lattice, decided by where the value comes from and never by what it is called:

```
            UNKNOWN                 nothing decided, or values of different kinds met
          /    |    \\
      DATA   LOADER  EXAMPLE        DATA: the dataset or a batch of it, not decided which
      /  \\
 DATASET  BATCH
```

* **DATASET** — the training data: what a data library loads or builds (the ``datasets``
  vocabulary: ``torchvision.datasets.*``, ``TensorDataset``, ``load_dataset``, ``np.load`` ...),
  a loader's ``dataset`` (the data loader API's attribute, read on any object whose class is not
  decided, as tensor methods are), the examples a dataset object exposes (``data_attributes``,
  ``data_containers``), a value
  whose length sizes a sampling draw (``rand(len(x)) < q``), and the value a sampling mask or
  index set indexes.
* **BATCH** — a sampled part of the dataset: the dataset indexed by a mask, an index set or a
  slice; an element of a loader; the examples a comprehension or a per-example ``append`` keeps.
* **EXAMPLE** — one item of a batch or of the dataset.
* **LOADER** — an iterable of batches (the ``loaders`` vocabulary, Opacus' private loader),
  and an object the code reads through the loader API (``data_loader.dataset``).

Origins flow through assignments, tuple unpacking, ``for`` targets, comprehensions, views and
conversions that keep the examples (``keeps_examples``), ``iter``/``next``, returns of project
functions and the arguments every caller passes for a parameter (callers of callers). Where
several flow into one value they are joined: a dataset and a batch give DATA, which still
depends on the private data (a divisor built from it normalizes by a data-dependent size,
whichever of the two it is); anything else that disagrees gives UNKNOWN. A parameter no caller
passes has no origin (UNKNOWN): unknown stays unknown, and the pipeline says so.

Every question goes through the index's memo (``dpcheck.pipelines.questions``): answered once
per place and pipeline scope, a cycle leaves the origin UNKNOWN.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from enum import Enum

from dpcheck.pipelines.binding import Binding
from dpcheck.pipelines.index import ProjectIndex
from dpcheck.pipelines.opacus_usage import engine_api
from dpcheck.pipelines.questions import frozen
from dpcheck.pipelines.sampling.sampler_calls import SamplerCalls
from dpcheck.pipelines.scope import Ctx
from dpcheck.pipelines.values import known_dataset
from dpcheck.pipelines.vocabulary import calls_in, vocabulary
from dpcheck.sites.nodes import (
    Attr,
    BinOp,
    Call,
    Comp,
    Compare,
    Const,
    Name,
    Node,
    Num,
    Seq,
    Str,
    Subscript,
    node,
)

#: Opacus' ``make_private*`` return ``(module, optimizer, data_loader)``: the private loader.
PRIVATE_LOADER_POSITION = 2


class Origin(Enum):
    """A point of the provenance lattice (module docstring)."""

    DATASET = "dataset"
    BATCH = "batch"
    DATA = "data"
    EXAMPLE = "example"
    LOADER = "loader"
    UNKNOWN = "unknown"

    @property
    def is_data(self) -> bool:
        """Whether the value is the private data or a sampled part of it."""
        return self in (Origin.DATASET, Origin.BATCH, Origin.DATA)

    def join(self, other: Origin) -> Origin:
        """The least origin above both (module docstring)."""
        if self == other:
            return self
        if self.is_data and other.is_data:
            return Origin.DATA
        return Origin.UNKNOWN

    def element(self) -> Origin:
        """The origin of one item of a value of this origin: a loader yields batches, a batch
        and a dataset yield examples."""
        return {Origin.LOADER: Origin.BATCH, Origin.BATCH: Origin.EXAMPLE,
                Origin.DATASET: Origin.EXAMPLE, Origin.DATA: Origin.EXAMPLE}.get(
                    self, Origin.UNKNOWN)


def joined(origins: list[Origin]) -> Origin:
    """The join of several origins; UNKNOWN for none."""
    if not origins:
        return Origin.UNKNOWN
    result, *rest = origins
    for origin in rest:
        result = result.join(origin)
    return result


class Provenance:
    """The provenance analysis over one (scoped) project index."""

    def __init__(self, index: ProjectIndex) -> None:
        self.index = index

    # -- origins -------------------------------------------------------------------------------
    def origin(self, expr: Node, ctx: Ctx) -> Origin:
        """The origin of the value ``expr`` holds at ``ctx``."""
        expr = node(expr)
        key = ("origin", frozen(expr), ctx, self.index.reach)
        return self.index.questions.ask(key, lambda: self._origin(expr, ctx), Origin.UNKNOWN)

    def _origin(self, expr: Node, ctx: Ctx) -> Origin:
        if isinstance(expr, Name):
            return self._name(expr, ctx)
        if isinstance(expr, Subscript):
            return self._subscript(expr, ctx)
        if isinstance(expr, Attr):
            return self._attribute(self.origin(expr.base, ctx), expr.attr)
        if isinstance(expr, Comp):
            if len(expr.iterables) == 1 and not expr.filtered:
                [iterable] = expr.iterables
                if self._element(iterable, ctx, None) == Origin.EXAMPLE:
                    return Origin.BATCH
            return Origin.BATCH if self._mask_kept(expr, ctx) else Origin.UNKNOWN
        if isinstance(expr, BinOp) and not isinstance(expr, Compare):
            left = self.origin(expr.left, ctx)
            return left if left != Origin.UNKNOWN else self.origin(expr.right, ctx)
        if isinstance(expr, Call):
            return self._call(expr, ctx)
        return Origin.UNKNOWN

    def _name(self, expr: Name, ctx: Ctx) -> Origin:
        binding = self.index.attribute(expr.dotted, ctx)
        found = self._binding(binding) if binding is not None else Origin.UNKNOWN
        if found == Origin.UNKNOWN and expr.base:
            found = self._attribute(self.origin(Name(["r", expr.base]), ctx), expr.last)
        if found == Origin.UNKNOWN and self.sizes_a_draw(expr.dotted, ctx):
            return Origin.DATASET
        if found == Origin.UNKNOWN and self._read_as_loader(expr.dotted, ctx):
            return Origin.LOADER
        return found

    def _read_as_loader(self, name: str, ctx: Ctx) -> bool:
        """Whether the scope reads ``name``'s loader attributes (``data_loader.dataset``): an
        object used through the data loader API is a data loader."""
        scope = self.index.scope(ctx)
        attributes = vocabulary()["loader_attributes"].attributes
        wanted = {f"{name}.{attr}" for attr in attributes}
        return scope is not None and any(
            isinstance(part, Name) and part.dotted in wanted
            for stmt in scope.statements for part in stmt.expr.walk())

    @staticmethod
    def _attribute(base: Origin, attr: str) -> Origin:
        """An attribute of a value of origin ``base``: a loader's dataset (also of an object
        whose class is not decided: the name is the data loader API's, as a tensor method's
        is), the examples a data object exposes."""
        words = vocabulary()
        if base in (Origin.LOADER, Origin.UNKNOWN) \
                and attr in words["loader_attributes"].attributes:
            return Origin.DATASET
        if base.is_data and (attr in words["data_attributes"].attributes
                             or attr in words["data_containers"].attributes):
            return base
        return Origin.UNKNOWN

    def _subscript(self, expr: Subscript, ctx: Ctx) -> Origin:
        if self.is_sample_index(expr.index, ctx):
            return Origin.BATCH
        base = self.origin(expr.value, ctx)
        if base in (Origin.BATCH, Origin.EXAMPLE):
            return base
        if base.is_data and not isinstance(expr.index, Num):
            return Origin.BATCH
        return Origin.UNKNOWN

    def _call(self, call: Call, ctx: Ctx) -> Origin:
        name = call.name or ""
        if calls_in("loaders", call, ctx, self.index) or self._private(call, ctx):
            return Origin.LOADER
        if call.args and (name == "iter" or self._converts(call, ctx)):
            return self.origin(next(iter(call.args)), ctx)
        if name == "next" and call.args:
            return self.origin(next(iter(call.args)), ctx).element()
        if calls_in("mask_indices", call, ctx, self.index) and self._lists_mask(call, ctx):
            return Origin.BATCH
        if calls_in("datasets", call, ctx, self.index) or known_dataset(call, None):
            return Origin.DATASET
        receiver = call.receiver
        if receiver is not None and call.method in vocabulary()["keeps_examples"].methods \
                and self.index.function(name, ctx) is None:
            return self.origin(receiver, ctx)
        return self._returned(call, ctx, (), None)

    def _converts(self, call: Call, ctx: Ctx) -> bool:
        """A library conversion function of the ``keeps_examples`` vocabulary
        (``np.asarray(x)``, ``tf.cast(x, ...)``) rather than a method on a value."""
        qualified = self.index.library_name(call.name or "", ctx)
        return qualified is not None and vocabulary()["keeps_examples"].has_library_function(
            qualified)

    def _private(self, call: Call, ctx: Ctx) -> bool:
        """Whether ``call`` is an Opacus engine's ``make_private*`` (its result holds the private
        loader), decided as the Opacus usage reader decides it (the engine catalog, through the
        engine the call is made on: ``PrivacyEngine().make_private(...)`` too)."""
        api = engine_api(self.index, call, ctx)
        return api is not None and api.role == "entry"

    def _returned(self, call: Call, ctx: Ctx, position: tuple[int, ...],
                  width: int | None) -> Origin:
        """The origin of what a project function returns (element ``position`` of its returned
        tuples, unpacked into ``width`` names), joined over its returns."""
        target = self.index.function(call.name or "", ctx)
        if target is None or target.scope.endswith(".__init__"):
            return Origin.UNKNOWN
        key = ("returned-origin", target.path, target.scope, position, width, self.index.reach)
        return self.index.questions.ask(key, lambda: joined([
            self.origin(value, where)
            for value, where, _ in self.index.returned_parts(target, position, width)]),
            Origin.UNKNOWN)

    # -- bindings ------------------------------------------------------------------------------
    def _binding(self, binding: Binding) -> Origin:
        value = node(binding.ir) if binding.ir is not None else None
        where = replace(binding.ctx, line=binding.line)
        if binding.kind == "loop" and value is not None:
            return self._element(value, where, binding.index)
        if binding.kind == "param":
            return self._parameter(binding)
        if binding.kind != "assign" or value is None:
            return Origin.UNKNOWN
        if isinstance(value, Seq) and not value.items and not binding.index:
            return Origin.BATCH if self._appended_per_example(binding) else Origin.UNKNOWN
        if binding.index and isinstance(value, Seq):
            for position in binding.index:
                if not isinstance(value, Seq) or position >= len(value.items):
                    return Origin.UNKNOWN
                value = value.items[position]
            return self.origin(value, where)
        if binding.index and isinstance(value, Call):
            if self._private(value, where):
                return Origin.LOADER if binding.index == (PRIVATE_LOADER_POSITION,) \
                    else Origin.UNKNOWN
            if known_dataset(value, binding.index):
                return Origin.DATASET
            return self._returned(value, where, binding.index,
                                  self.index.unpacked_width(binding))
        return self.origin(value, where)

    def _parameter(self, binding: Binding) -> Origin:
        """What the callers pass for a parameter, joined (a parameter nobody passes and that
        has no default: UNKNOWN)."""
        key = ("param-origin", binding.ctx.path, binding.ctx.scope, binding.name,
               self.index.reach)
        return self.index.questions.ask(key, lambda: joined([
            self.origin(arg, where) for where, arg in self.index.arguments(binding)]),
            Origin.UNKNOWN)

    def _element(self, iterable: Node, ctx: Ctx, position: tuple[int, ...] | None) -> Origin:
        """The origin of the items a loop over ``iterable`` binds (``position``: the unpacked
        name's place in the loop target)."""
        iterable = node(iterable)
        name = iterable.name if isinstance(iterable, Call) else None
        if isinstance(iterable, Call) and name == "enumerate" and iterable.args:
            if position and position[:1] == (0,):
                return Origin.UNKNOWN
            return self._element(next(iter(iterable.args)), ctx,
                                 position[1:] if position else None)
        if self.is_sample_index(iterable, ctx):
            return Origin.EXAMPLE
        if isinstance(iterable, Call) and name == "zip":
            parts = [self.origin(a, ctx) for a in iterable.args]
            if position:
                first, *_ = position
                if first < len(parts):
                    return parts[first].element()
            return Origin.UNKNOWN
        return self.origin(iterable, ctx).element()

    def _appended_per_example(self, binding: Binding) -> bool:
        """Whether the empty list ``binding`` binds gets exactly one ``append`` per iteration of
        a later loop over sampled examples (unconditionally): its length is the realized batch
        size."""
        scope = self.index.scope(binding.ctx)
        stmts = scope.statements if scope else []
        appends = [s for s in stmts if s.kind == "expr" and isinstance(s.expr, Call)
                   and s.expr.callee == ["r", f"{binding.name}.append"]]
        if len(appends) != 1:
            return False
        [append] = appends
        if append.loop < 0:
            return False
        header = stmts[append.loop]
        targets = header.target if isinstance(header.target, list) else [header.target]
        first = next(iter(targets), None)
        if header.kind != "for" or header.line <= binding.line or not isinstance(first, str) \
                or append.arms != header.arms:
            return False
        inside = Ctx(binding.ctx.path, binding.ctx.scope, header.line + 1)
        return self.origin(Name(["r", first]), inside) == Origin.EXAMPLE

    # -- sampling masks and index sets -------------------------------------------------------
    def is_sample_index(self, expr: Node, ctx: Ctx) -> bool:
        """Whether ``expr``, used as an index, is drawn at random: a sampling mask
        (``rand(n) < q``, a Bernoulli draw) or an index set (a slice of a permutation, a
        choice of indices), followed through names, conversions and method chains."""
        expr = node(expr)
        key = ("sample-index", frozen(expr), ctx, self.index.reach)
        return self.index.questions.ask(key, lambda: self._sample_index(expr, ctx), False)

    def _sample_index(self, expr: Node, ctx: Ctx) -> bool:
        if isinstance(expr, Name):
            assigned = self.index.assigned(expr.dotted, ctx)
            return assigned is not None and self.is_sample_index(*assigned)
        if isinstance(expr, Subscript):
            # What a random selection selects is a random selection (``arange(n)[mask]``).
            return self.is_sample_index(expr.value, ctx) or self.is_sample_index(expr.index, ctx)
        if isinstance(expr, Compare):
            return self.is_sample_index(expr.left, ctx) or self._allocates(expr, ctx)
        if not isinstance(expr, Call):
            return False
        if calls_in("sampling_draws", expr, ctx, self.index):
            return True
        receiver = expr.receiver
        return (receiver is not None and self.is_sample_index(receiver, ctx)) or any(
            self.is_sample_index(arg, ctx) for arg in expr.args)

    def is_mask(self, expr: Node, ctx: Ctx) -> bool:
        """Whether ``expr`` is a Bernoulli sampling mask (``torch.rand(n) < q``,
        ``rng.random(n) > 1 - q``, ``torch.bernoulli(...)``, ``np.random.binomial(1, q, n)``),
        possibly converted."""
        expr = node(expr)
        if isinstance(expr, Name):
            binding = self.index.attribute(expr.dotted, ctx)
            if binding is not None and binding.kind == "param":
                return self._passed_mask(binding)
            assigned = binding.assigned() if binding is not None else None
            return assigned is not None and self.index.questions.ask(
                ("mask", frozen(expr), ctx, self.index.reach), lambda: self.is_mask(*assigned), False)
        if isinstance(expr, Compare):
            found = self.uniform_draw(expr.left, ctx)
            if found is None:
                return False
            draw, _ = found
            return expr.op in ("<", "<=") or (expr.op in (">", ">=") and bool(draw.args))
        if not isinstance(expr, Call):
            return False
        if calls_in("bernoulli_draws", expr, ctx, self.index):
            return True
        receiver = expr.receiver
        keeps = expr.method in vocabulary()["keeps_examples"].methods
        if receiver is not None and keeps and self.is_mask(receiver, ctx):
            return True
        return self._returns_mask(expr, ctx)

    def uniform_draw(self, expr: Node, ctx: Ctx) -> tuple[Call, Ctx] | None:
        """The uniform draw (``np.random.rand(n)``) a value holds and where it is made: the
        call itself, or the draw a local name was assigned (``u = rand(n); keep = u < q``)."""
        return self._held_call(expr, ctx, "uniform", lambda call, where: calls_in(
            "uniform_draws", call, where, self.index))

    def _allocates(self, test: Compare, ctx: Ctx) -> bool:
        """Whether an equality test picks the members of one batch of a random allocation:
        random integers drawn with replacement (the sampler table's ``with-replacement``
        draws: ``randint``, ``rng.integers``), one per example, compared with a batch number
        that is not a literal (``bins == b``). A random integer is a selection only by such a
        use (or as an index, which ``_subscript`` reads from the indexed value): random labels
        put in a dataset, or compared with a class constant, select no examples."""
        if test.op != "==":
            return False
        calls = SamplerCalls(self.index)

        def with_replacement(call: Call, where: Ctx) -> bool:
            api = calls.api_of(call, where)
            return api is not None and api.role == "draw" \
                and calls.selected(api, call, where) == "with-replacement"

        sides = (test.left, test.right), (test.right, test.left)
        return any(not isinstance(other, (Num, Str, Const))
                   and self._held_call(drawn, ctx, "with-replacement", with_replacement) is not None
                   for drawn, other in sides)

    def _held_call(self, expr: Node, ctx: Ctx, kind: str,
                   accepts: Callable[[Call, Ctx], bool]) -> tuple[Call, Ctx] | None:
        """The call ``accepts`` takes (``kind`` names what it accepts) that a value holds and
        where it is made: the call itself, or the call a local name was assigned, followed
        through plain assignments, each name a question of the memo and cycle guard."""
        expr = node(expr)
        if isinstance(expr, Call):
            return (expr, ctx) if accepts(expr, ctx) else None
        if not isinstance(expr, Name):
            return None

        def followed() -> tuple[Call, Ctx] | None:
            assigned = self.index.assigned(expr.dotted, ctx)
            return self._held_call(*assigned, kind, accepts) if assigned is not None else None

        return self.index.questions.ask(("held-call", kind, expr.dotted, ctx, self.index.reach),
                                        followed, None)

    def _passed_mask(self, binding: Binding) -> bool:
        """Whether a parameter is a sampling mask: its callers (in the pipeline's reach when
        any is) pass one, every one of them, as ``_parameter`` joins what they pass."""
        key = ("param-mask", binding.ctx.path, binding.ctx.scope, binding.name, self.index.reach)

        def passed() -> bool:
            arguments = self.index.arguments(binding)
            return bool(arguments) and all(self.is_mask(arg, where) for where, arg in arguments)

        return self.index.questions.ask(key, passed, False)

    def _returns_mask(self, call: Call, ctx: Ctx) -> bool:
        """Whether ``call`` calls a project function every return of which is a sampling mask
        (a helper drawing the mask): decided by where the value comes from, not by names."""
        target = self.index.function(call.name or "", ctx)
        if target is None or target.scope.endswith(".__init__"):
            return False
        key = ("returned-mask", target.path, target.scope, self.index.reach)
        returns = self.index.returns(target)
        return self.index.questions.ask(key, lambda: bool(returns) and all(
            self.is_mask(value, where) for value, where in returns), False)

    def _lists_mask(self, call: Call, ctx: Ctx) -> bool:
        """Whether ``call`` lists the indices of a sampling mask (``mask.nonzero()``,
        ``np.flatnonzero(mask)``, ``torch.where(mask)`` with the mask alone): one index per
        sampled example, so its size is the realized batch size."""
        if len(call.args) > 1 or call.kwargs:
            return False
        operand = next(iter(call.args), call.receiver)
        return operand is not None and self.is_mask(operand, ctx)

    def _mask_kept(self, comp: Comp, ctx: Ctx) -> bool:
        """Whether a comprehension lists the indices a sampling mask keeps (``[i for i in
        range(n) if mask[i]]``)."""
        if len(comp.names) != 1 or len(comp.iterables) != 1 or len(comp.conditions) != 1:
            return False
        [name], [iterable], [test] = comp.names, comp.iterables, comp.conditions
        if comp.element != ["r", name] or not isinstance(iterable, Call):
            return False
        return calls_in("index_ranges", iterable, ctx, self.index) \
            and isinstance(test, Subscript) \
            and test.index == comp.element and self.is_mask(test.value, ctx)

    def sizes_a_draw(self, name: str, ctx: Ctx, itself: bool = False) -> bool:
        """Whether ``len(name)`` / ``name.shape[0]`` (or, with ``itself``, ``name``) sizes a
        sampling draw in the scope (``torch.rand(len(x)) < q``): then ``name`` is the dataset
        (size)."""
        scope = self.index.scope(ctx)
        if scope is None:
            return False
        for stmt in scope.statements:
            for part in stmt.expr.walk():
                if not isinstance(part, Call) or not part.args \
                        or not calls_in("sampling_draws", part, Ctx(ctx.path, ctx.scope,
                                                                    stmt.line), self.index):
                    continue
                size = next(iter(part.args))
                if isinstance(size, Seq) and size.items:
                    size = next(iter(size.items))
                if _sizes(size, name, itself):
                    return True
        return False


def _sizes(size: Node, name: str, itself: bool) -> bool:
    """Whether the draw size ``size`` is ``name``'s length (or ``name`` itself)."""
    if itself:
        return size == ["r", name]
    if isinstance(size, Call) and size.name == "len" and size.args == [["r", name]]:
        return True
    return isinstance(size, Subscript) and size.value == ["r", f"{name}.shape"] \
        and size.index == ["n", 0]
