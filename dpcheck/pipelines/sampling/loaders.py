"""The sampling of a loader expression, followed to the call that built it.

A name is followed to its binding (a parameter to what the callers inside the pipeline pass,
an unpacked project helper's result to the element its returns give); a project helper's
returned loader is the one of the ``return`` the default configuration reaches. An Opacus
``make_private`` that returns a Poisson loader wins over the ``shuffle=True`` of the loader
passed in. Library loaders and samplers are recognised by import-qualified name through the
sampler table (``dpcheck/data/samplers.json``), which also lists wrappers that yield the batches
of the loader they are given (``contextlib.nullcontext(loader)``, read through a ``with ... as``
target); a ``DataLoader`` is decided by its sampler (a
library sampler, a project sampler class whose methods draw a Bernoulli mask, a Hugging Face
sampler method), else by its own shuffle flag, unless it serves its whole dataset as one batch
(``single_batch``: then the draws that made that dataset decide). A loop over a project
generator function reads what it yields (``generators``: fixed slices are shuffle,
Bernoulli-masked items Poisson, a ``yield from`` the loader it delegates to).
"""

from __future__ import annotations

from dataclasses import replace

from dpcheck.model import Evidence, Span
from dpcheck.pipelines.binding import Binding
from dpcheck.pipelines.calls import argument
from dpcheck.pipelines.generators import Yielded, yielded_batches
from dpcheck.pipelines.guards import Guards
from dpcheck.pipelines.hf_datasets import is_to_tf_dataset
from dpcheck.pipelines.hf_trainer import inherited_loader, sampler_method
from dpcheck.pipelines.private_loops import Place
from dpcheck.pipelines.questions import frozen
from dpcheck.pipelines.returned import returned_item
from dpcheck.pipelines.sampling.decision import Sampling, of_scheme, title
from dpcheck.pipelines.sampling.index_draws import IndexDraws
from dpcheck.pipelines.sampling.sampler_classes import ITERATE, iterated_samplers
from dpcheck.pipelines.sampling.tf_inputs import batch_chain, to_tf_dataset
from dpcheck.pipelines.scope import Ctx
from dpcheck.pipelines.single_batch import WholeBatch, draws, whole_batch
from dpcheck.pipelines.values import Evaluator
from dpcheck.samplers import SamplerApi
from dpcheck.sites.nodes import Call, Name, Node, Opaque, Subscript, node

#: Calls that iterate over a loader unchanged (a progress bar, an index pairing).
ITERATION_WRAPPERS = frozenset({"tqdm", "enumerate"})


class LoaderReader:
    """Reads the sampling of loader expressions within one pipeline: ``reached`` holds its
    scopes (``(path, scope)``), whose callers are preferred for a parameter; ``assumed`` the
    conditions its DP code runs under (``dpcheck.pipelines.guards``), with which a helper's arm
    chosen by the same flag is read; ``poisson_default`` whether Opacus samples by Poisson when
    ``make_private`` does not say (None: not known); ``private`` the statements that run the
    pipeline's private update (``dpcheck.pipelines.private_loops``)."""

    def __init__(self, draws: IndexDraws, poisson_default: bool | None, assumed: Guards,
                 reached: frozenset[tuple[str, str]], private: frozenset[Place] = frozenset()) -> None:
        self.draws = draws
        self.calls = draws.calls
        self.index = draws.index
        self.poisson_default = poisson_default
        self.assumed = assumed
        self.reached = reached
        self.private = private
        self._key = (poisson_default, frozenset(assumed.items()), reached, private)

    def loader(self, expr: Node, ctx: Ctx) -> Sampling:
        """The sampling of a loader expression (followed to the call that built it), a question
        of the memo and guard of ``dpcheck.pipelines.questions``: never change one in place."""
        expr = node(expr)  # what callers pass for a parameter may be built, not stored
        key = ("loader", frozen(expr), ctx, self.index.reach, self._key)
        return self.index.questions.ask(key, lambda: self._loader(expr, ctx), Sampling(
            note="the loader is defined through itself, or followed past the analysis' limit"))

    def _loader(self, expr: Node, ctx: Ctx) -> Sampling:
        if isinstance(expr, Name):
            return self._named(expr, ctx)
        item = returned_item(self.index, expr, ctx)
        if item is not None:
            return self.loader(*item)
        items = Evaluator(self.index, self.assumed).items(expr, ctx) \
            if isinstance(expr, Subscript) else None
        if items:  # the item a constant key selects of the display(s) the container holds
            made = {self.loader(value, where).kind: (value, where) for value, where in items}
            if len(made) != 1:
                return Sampling(note="the containers the loader is taken from hold different loaders")
            _, (value, where) = made.popitem()
            return self.loader(value, where)
        if isinstance(expr, Opaque) and expr.kind == "ifexp":
            chosen = Evaluator(self.index, self.assumed).decided(expr, ctx)
            if chosen is not expr:
                return self.loader(chosen, ctx)
            arms = {self.loader(arm, ctx).kind: arm for arm in expr.parts}
            if len(arms) == 1:  # an undecided test: both arms are kept, and must agree
                _, arm = arms.popitem()
                return self.loader(arm, ctx)
            return Sampling(note="the arms of a conditional expression hold loaders that "
                                 "sample in different ways")
        if not isinstance(expr, Call):
            return Sampling(note="loader expression not followed")
        return self._called(expr, ctx)

    def _named(self, name: Name, ctx: Ctx) -> Sampling:
        """The loader a name is bound to: what the callers pass for a parameter (when they
        agree), the value assigned or looped over, the element an unpacking takes of what a
        project helper or ``make_private`` returns."""
        binding = self.index.attribute(name.dotted, ctx)
        if binding is not None and binding.kind == "param":
            passed = {self.loader(arg, where).kind: (arg, where)
                      for where, arg in self._arguments(binding)}
            if len(passed) == 1:
                _, (arg, where) = passed.popitem()
                return self.loader(arg, where)
        if binding is None or binding.ir is None or binding.kind not in ("assign", "loop"):
            return Sampling(note=f"{name.dotted} is not bound to a loader dpcheck can follow")
        value = binding.ir
        where = replace(binding.ctx, line=binding.line)
        if binding.index and isinstance(value, Call) and value.method in (
                "make_private", "make_private_with_epsilon"):
            return self._opacus(value, where)
        target = self.index.function(value.name or "", where) \
            if binding.index and isinstance(value, Call) else None
        if target is not None and not target.scope.endswith(".__init__"):
            return self.returned_loader(target, value.method, binding.index,
                                        self.index.unpacked_width(binding), (value, where))
        if binding.index:
            made = {self.loader(element, at).kind: (element, at) for element, at in
                    self.index.elements(value, binding.index, where,
                                        self.index.unpacked_width(binding))}
            if len(made) == 1:
                _, (element, at) = made.popitem()
                return self.loader(element, at)
            return Sampling(note=f"{name.dotted} is unpacked from an expression not followed")
        return self.loader(value, where)

    def _called(self, call: Call, ctx: Ctx) -> Sampling:
        """The loader a call makes: an iteration wrapper's argument, a library loader or
        sampler of the table, a tf.data or Hugging Face batching, a project generator or
        helper."""
        tail = call.method
        span = Span(ctx.path, *call.position)
        if tail in ITERATION_WRAPPERS and call.args:
            return self.loader(next(iter(call.args)), ctx)
        inherited = inherited_loader(self.index, call, ctx)
        if inherited is not None:
            return of_scheme("shuffle", [inherited])
        if call.name == "iter" and call.args:
            return self.loader(next(iter(call.args)), ctx)
        api = self.calls.api_of(call, ctx)
        if api is not None and api.role == "wrapper" and api.wraps is not None:
            inner = api.wraps.of(list(call.args), call.kwargs)  # it yields its loader's batches
            return self.loader(inner, ctx) if inner is not None \
                else Sampling(note=f"{tail}() is given no loader")
        if api is not None and api.sampler_keywords:
            return self._data_loader(call, ctx, span, api)
        if api is not None and api.role in ("loader", "sampler", "strategy"):
            scheme = self.calls.selected(api, call, ctx)
            return of_scheme(scheme, [Evidence("sampler", span, f"{tail}: {title(scheme)}")],
                             (ctx, call))
        if tail == "BatchMemoryManager":
            inner = call.kwargs.get("data_loader")
            return self.loader(inner, ctx) if inner else Sampling()
        if is_to_tf_dataset(self.index, call, ctx):
            return to_tf_dataset(self.calls, call, ctx)
        chained = batch_chain(self.calls, call, ctx) if tail == "batch" else None
        if chained is not None:
            return chained
        target = self.index.function(call.name or "", ctx)
        if target is not None and not target.scope.endswith(".__init__"):
            yielded = yielded_batches(self.index, target, call, ctx)
            if yielded is not None:
                return self._generator(target, yielded, span)
            return self.returned_loader(target, tail, called=(call, ctx))
        return Sampling(note=f"{tail}() is not a loader dpcheck knows")

    def _generator(self, function: Ctx, yielded: Yielded, call: Span) -> Sampling:
        """The batches of a project generator the loop iterates: fixed-size slices are shuffle
        (sequential, or after the permutation the generator draws), items indexed by the
        Bernoulli mask it draws are Poisson; a generator that delegates yields its iterable's
        batches, read as a loader, or where that loader is not followed (a tf.data chain
        rebuilt by reassignment) as the one sampling the generator's own statements draw (its
        ``.shuffle(buffer)``). Anything else (slices with a mask, a mask with fixed slices,
        nothing drawn for indexed items) stays unknown."""
        drawn = [found for where, stmt in self.index.statements([function])
                 for found in self.draws.in_statement(stmt, where)]
        kinds = {d.kind for d in drawn}
        via = Evidence("sampler", call, "the training loop iterates this project generator")
        evidence = [Evidence("sampler", yielded.span, yielded.note), via]
        if yielded.source is not None:
            where, iterable = yielded.source
            inner = self.loader(iterable, where)
            if inner.kind == "unknown" and len(kinds) == 1:
                inner, *_ = drawn
            note = f"{yielded.note}: {inner.note}" if inner.kind == "unknown" else inner.note
            return replace(inner, note=note, evidence=[*inner.evidence, *evidence])
        if yielded.kind == "slices" and kinds <= {"shuffle"}:
            order = "after a permutation: shuffled" if kinds else "in order: sequential"
            evidence = [Evidence("sampler", yielded.span,
                                 f"{yielded.note}, {order} fixed-size batches"), via]
            return of_scheme("shuffle" if kinds else "sequential",
                             [*evidence, *(e for d in drawn for e in d.evidence)], batch=yielded.width)
        if yielded.kind == "indexed" and kinds == {"poisson"}:
            # its loop counts the batches of one call (one pass), not the training steps
            first, *_ = drawn
            return replace(first, steps=None, per_pass=first.steps,
                           evidence=[*evidence, *first.evidence])
        why = yielded.note if yielded.kind == "unknown" else (
            f"{yielded.note}, drawn {' and '.join(sorted(kinds)) or 'without a sampling draw'}")
        return Sampling(note=why, evidence=evidence)

    def returned_loader(self, function: Ctx, name: str, index: tuple[int, ...] = (),
                        width: int | None = None,
                        called: tuple[Call, Ctx] | None = None) -> Sampling:
        """The loader a project function returns (``get_loader(...)``, a loader factory's
        closure), or element ``index`` of the tuples it returns, unpacked into ``width`` names
        (``train, test, n = get_loaders(...)``: a return of another length is not the one
        unpacked). Returns in an ``if`` arm the default configuration skips are left out; the
        rest must agree. ``called``: the call that runs the function, and where; a parameter
        that call passes a decided truth for (``dp=private`` where ``private`` holds) is read
        with that truth, whatever other callers pass (a helper called with ``dp=False`` for
        evaluation elsewhere), in the returns' tests and in the conditional expressions the
        returned loader is built from (``DataLoader(...) if train else ...``)."""
        passed = self._passed_truths(function, called)
        reader = LoaderReader(self.draws, self.poisson_default, {**self.assumed, **passed},
                              self.reached, self.private) if passed else self
        evaluator = Evaluator(self.index, reader.assumed)
        found: list[Sampling] = []
        for value, where, stmt in self.index.returned_parts(function, index, width):
            runs = evaluator.arms(where, stmt)
            if False in runs:
                continue
            found.append(reader.loader(value, where))
            if stmt.loop_depth == 0 and None not in runs:
                break  # this return always runs: the later ones are unreachable
        kinds = {f.kind for f in found}
        if len(kinds) == 1:
            return next(iter(found))
        return Sampling(note=f"{name}() returns loaders that sample in different ways" if found
                        else f"{name}() returns no loader dpcheck can follow")

    def _passed_truths(self, function: Ctx, called: tuple[Call, Ctx] | None) -> Guards:
        """The truths the call ``called`` passes for the parameters of ``function``, where
        decided."""
        scope = self.index.scope(function)
        if called is None or scope is None:
            return {}
        call, caller = called
        names = [param.name for param in scope.params]
        evaluator = Evaluator(self.index, self.assumed)
        truths: Guards = {}
        for name in names:
            passed = argument(call, names, name)
            holds = evaluator.truth(passed, caller) if passed is not None else None
            if holds is not None:
                truths[function.path, function.scope, name] = holds
        return truths

    def _project_sampler(self, call: Call, ctx: Ctx, key: str) -> Sampling | None:
        """A sampler class of the project: the index sampling its methods draw (a Bernoulli
        mask in ``__iter__`` is Poisson sampling)."""
        cls = self.index.bind(call.name or "", ctx)
        summary = self.index.summary(cls.ctx.path) if cls is not None else None
        if cls is None or cls.kind != "class" or summary is None:
            return None
        found = [sampling for qual, scope in summary.scopes.items()
                 if scope.owner == cls.name and qual != cls.name
                 for stmt in scope.statements
                 for sampling in self.draws.in_statement(stmt, Ctx(cls.ctx.path, qual, stmt.line))]
        kinds = {f.kind for f in found}
        if len(kinds) != 1:
            return None
        # its range() counts the batches of one pass over the loader, not the training steps
        first, *_ = found
        chosen = replace(first, steps=None, per_pass=first.steps)
        note = f"DataLoader({key}={cls.name}) draws its batches in the project's sampler" + (
            "; its iteration count is per pass over the loader, not a step count"
            if chosen.per_pass is not None else "")
        chosen.evidence = [Evidence("sampler", Span(ctx.path, *call.position), note),
                           *chosen.evidence]
        return chosen

    def _arguments(self, param: Binding) -> list[tuple[Ctx, Node]]:
        """What callers pass for a parameter, preferring the callers inside this pipeline (a
        helper shared by several entry points gets each entry's own loader), and among them
        the calls that run the private update (a helper that trains both the private model and
        a shadow model gets the private model's loader)."""
        passed = list(self.index.arguments(param))
        own = [(w, a) for w, a in passed if (w.path, w.scope) in self.reached]
        hot = [(w, a) for w, a in own if (w.path, w.scope, w.line) in self.private]
        return hot or own or passed

    def _data_loader(self, call: Call, ctx: Ctx, span: Span, api: SamplerApi) -> Sampling:
        """A loader that takes a sampler (``DataLoader``): the sampler decides, else the
        loader's own shuffle flag."""
        for key in api.sampler_keywords:
            sampler = call.kwargs.get(key)
            if sampler is None:
                continue
            where = ctx
            if isinstance(sampler, Name):
                binding = self.index.attribute(sampler.dotted, ctx)
                if binding is not None and binding.ir:
                    sampler, where = binding.ir, replace(binding.ctx, line=binding.line)
            sampler = Evaluator(self.index, self.assumed).decided(node(sampler), where)
            if not isinstance(sampler, Call):
                return Sampling(note=f"DataLoader {key} not recognised")
            known = self.calls.api_of(sampler, where)
            if known is not None and known.role == "sampler":
                scheme = self.calls.selected(known, sampler, where)
                words = "Poisson" if scheme == "poisson" else title(scheme)
                return of_scheme(scheme, [Evidence(
                    "sampler", span, f"DataLoader({key}={sampler.method}): {words}")], (ctx, call))
            own = self._project_sampler(sampler, ctx, key)
            fixed = sampler_method(self.index, sampler, ctx, self.calls.sampler_kind) \
                if own is None and key == "sampler" else None
            if fixed:
                scheme = "sequential" if all("sequential" in e.note for e in fixed) else "shuffle"
                return of_scheme(scheme, [*fixed, Evidence(
                    "sampler", span, "DataLoader(sampler=...) batches the sampler returned")],
                    (ctx, call))
            wrapped = self._sampler(sampler, where) if own is None else None
            if wrapped is not None and wrapped.kind != "unknown":
                # batches cut by a batch sampler are not sized by the loader's batch_size
                loader = (ctx, call) if key != "batch_sampler" else None
                return replace(wrapped, loader=loader, evidence=[*wrapped.evidence, Evidence(
                    "sampler", span, f"DataLoader({key}=...) batches what that sampler yields")])
            return own or Sampling(note=f"DataLoader {key} not recognised")
        whole = whole_batch(self.index, call, ctx)
        if whole is not None:
            return self._whole_batch(whole, span)
        scheme = self.calls.selected(api, call, ctx)
        note = {"shuffle": "DataLoader(shuffle=True): shuffled fixed-size batches",
                "sequential": "DataLoader without shuffle: sequential fixed-size batches"}.get(
            scheme, "DataLoader with a shuffle flag not resolved: fixed-size batches, shuffled or "
                    "sequential")
        return of_scheme(scheme, [Evidence("sampler", span, note)], (ctx, call))

    def _sampler(self, expr: Node, ctx: Ctx) -> Sampling | None:
        """The kind of a sampler expression: a library sampler of the table, a batching
        wrapper (``BatchSampler``) of the sampler it wraps, a project sampler class of the
        sampler its ``__iter__`` iterates (``sampler_classes``), a project function of the
        samplers its default returns give (all agreeing). None when not followed. A question of
        the memo and guard of ``dpcheck.pipelines.questions``, as ``loader`` is."""
        expr = node(expr)
        key = ("sampler", frozen(expr), ctx, self.index.reach, self._key)
        return self.index.questions.ask(key, lambda: self._sampler_of(expr, ctx), None)

    def _sampler_of(self, expr: Node, ctx: Ctx) -> Sampling | None:
        if isinstance(expr, Name):
            binding = self.index.attribute(expr.dotted, ctx)
            if binding is None or binding.ir is None or binding.kind != "assign" or binding.index:
                return None
            return self._sampler(binding.ir, replace(binding.ctx, line=binding.line))
        if not isinstance(expr, Call):
            return None
        span = Span(ctx.path, *expr.position)
        api = self.calls.api_of(expr, ctx)
        if api is not None and api.role == "sampler":
            scheme = self.calls.selected(api, expr, ctx)
            return of_scheme(scheme, [Evidence("sampler", span, f"{expr.method}: {title(scheme)}")])
        if api is not None and api.role == "batching" and api.wraps is not None:
            inner = api.wraps.of(list(expr.args), expr.kwargs)
            found = self._sampler(inner, ctx) if inner is not None else None
            return replace(found, evidence=[*found.evidence, Evidence(
                "sampler", span, f"{expr.method} cuts the batches of the sampler it wraps")]) \
                if found is not None else None
        cls = self.index.class_named(expr.name or "", ctx)
        if cls is not None:
            values = iterated_samplers(self.index, cls, expr, ctx)
            found = [self._sampler(value, where) for value, where in values]
            return self._agreeing(found, Evidence(
                "sampler", span, f"{cls.scope} yields the batches of the sampler its {ITERATE} "
                "iterates"))
        function = self.index.function(expr.name or "", ctx)
        if function is None or function.scope.endswith(".__init__"):
            return None
        evaluator = Evaluator(self.index, self.assumed)
        found = []
        for value, where, stmt in self.index.returned_parts(function):
            if False not in evaluator.arms(where, stmt):
                found.append(self._sampler(value, where))
        return self._agreeing(found, Evidence("sampler", span, f"the sampler {expr.method}() "
                                              "returns"))

    @staticmethod
    def _agreeing(found: list[Sampling | None], via: Evidence) -> Sampling | None:
        """The one sampler kind all of ``found`` have, with ``via`` added; None if any is not
        decided or they differ."""
        if not found or any(f is None for f in found):
            return None
        decided = [f for f in found if f is not None]
        if len({f.sampler for f in decided}) != 1:
            return None
        first, *_ = decided
        return replace(first, evidence=[*(e for f in decided for e in f.evidence), via])

    def _whole_batch(self, whole: WholeBatch, span: Span) -> Sampling:
        """A loader whose one batch is its whole dataset (``dpcheck.pipelines.single_batch``):
        the draws of the project function the dataset's index set comes from decide, read in
        the arms the default configuration runs; anything else stays unknown."""
        served = Evidence("sampler", span, "the loader's batch size is the size of its data: "
                          "each pass serves the whole dataset as one batch, sampling nothing")
        function = draws(self.index, *whole.indices) if whole.indices is not None else None
        if function is None:
            return Sampling(note="a loader serves its whole dataset as one batch, made where "
                            "dpcheck does not follow", evidence=[served])
        evaluator = Evaluator(self.index, self.assumed)
        drawn: list[Sampling] = []
        for where, stmt in self.index.statements([function]):
            runs = evaluator.arms(where, stmt)
            if False in runs:
                continue
            drawn.extend(self.draws.in_statement(stmt, where))
            if stmt.kind == "return" and stmt.loop_depth == 0 and None not in runs:
                break  # this return always runs: the later statements never do
        if len({d.kind for d in drawn}) != 1:
            return Sampling(note=f"{function.scope}() draws its index sets in "
                            f"{'different ways' if drawn else 'no way dpcheck knows'}",
                            evidence=[served])
        first, *_ = drawn
        return replace(first, evidence=[served, *first.evidence])

    def _opacus(self, call: Call, ctx: Ctx) -> Sampling:
        """``make_private``: a Poisson ``DPDataLoader`` in place of the loader passed in with
        ``poisson_sampling`` (Opacus's default), else that loader's own batches."""
        flag = call.kwargs.get("poisson_sampling")
        span = Span(ctx.path, *call.position)
        poisson = self.poisson_default if flag is None else self.calls.flag(flag, ctx)
        inner = call.kwargs.get("data_loader")
        if poisson:
            base = self.loader(inner, ctx) if inner is not None else Sampling()
            return Sampling("poisson", [Evidence(
                "sampler", span, "make_private replaces the data loader by a Poisson DPDataLoader"
            )], base.loader or (ctx, call))
        if poisson is None:
            return Sampling(note="make_private's poisson_sampling is not known")
        if inner is None:
            return Sampling(note="make_private without a data_loader argument")
        base = self.loader(inner, ctx)
        note = "make_private(poisson_sampling=False) keeps the loader's fixed-size batches"
        return replace(base, evidence=[Evidence("sampler", span, note), *base.evidence])
