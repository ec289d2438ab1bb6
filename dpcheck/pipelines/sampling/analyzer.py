"""How a pipeline forms its batches, decided from its training loops (``SamplingAnalyzer``).

The loader the training loop iterates decides (``loaders``), also when the loop is the library's:
the loader a project subclass builds for the library base that trains with it. The loops that
run the pipeline's private update (whose body draws its noise or steps the optimizer Opacus
returned, or calls through project functions the code that does, ``private_loops``) win over any
other loop that steps an optimizer (a non-private model trained in the same run, such as a
membership-inference attack model or an evaluation probe): the sampling of a DP pipeline is the
sampling of the batches its noisy update sees. Without such a loop, the loop that takes
optimizer steps wins over statistics or pre-computation passes over other loaders
(``loops``). A loop over ``range`` that draws ``next(it)`` from ``it = iter(loader)`` reads
that loader; other loops over ``range`` use the index sampling found in the same scopes
(``index_draws``).
Training fed by TF without a Python loop is read from where its batches are made
(``tf_inputs``). Decisions of different coarse kinds leave the sampling unknown.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import replace

from dpcheck.model import Evidence, Span
from dpcheck.pipelines.callbacks import library_receiver, own_methods
from dpcheck.pipelines.divisor import DivisorClassifier
from dpcheck.pipelines.guards import Guards
from dpcheck.pipelines.index import ProjectIndex
from dpcheck.pipelines.private_loops import Place, runs_private
from dpcheck.pipelines.provenance import Origin
from dpcheck.pipelines.sampling.decision import EVAL_NAME, NO_SAMPLING, Sampling, agreed
from dpcheck.pipelines.sampling.index_draws import IndexDraws
from dpcheck.pipelines.sampling.loaders import LoaderReader
from dpcheck.pipelines.sampling.loops import LOOP_WRAPPERS, drawn, loader_passes, takes_steps
from dpcheck.pipelines.sampling.sampler_calls import SamplerCalls
from dpcheck.pipelines.scope import Ctx
from dpcheck.sites.ir import tail_name
from dpcheck.sites.nodes import Call, Name
from dpcheck.sites.views import Statement

#: Calls whose first argument is the loader the loop iterates (with an index, a progress bar,
#: other sequences alongside).
_LOOP_WRAPPERS = ("enumerate", "tqdm", "zip")


class SamplingAnalyzer:
    """Classifies the sampling of the training loops found in a set of scopes."""

    def __init__(self, index: ProjectIndex, poisson_default: bool | None,
                 assumed: Guards | None = None, private: frozenset[Place] = frozenset()) -> None:
        self.index = index
        self.origins = DivisorClassifier(index)
        self.poisson_default = poisson_default
        #: The conditions the pipeline's DP code runs under (``dpcheck.pipelines.guards``):
        #: a helper's arm chosen by the same flag is read with them holding.
        self.assumed = assumed or {}
        self.draws = IndexDraws(SamplerCalls(index))
        #: The statements that run the pipeline's private update (``private_loops``).
        self.private = private

    def analyze(self, scopes: Iterable[Ctx]) -> Sampling:
        scopes = list(scopes)
        reached = frozenset((c.path, c.scope) for c in scopes)
        loaders = LoaderReader(self.draws, self.poisson_default, self.assumed, reached,
                               self.private)
        private: list[Sampling] = []
        training: list[Sampling] = []
        decisions: list[Sampling] = []
        index_sampling: list[Sampling] = []
        entry = next(iter(scopes), None)
        for ctx in scopes:
            scope = self.index.scope(ctx)
            stmts = scope.statements if scope else []
            for position, stmt in enumerate(stmts):
                if not self.index.runs(ctx, stmt):
                    continue
                where = Ctx(ctx.path, ctx.scope, stmt.line)
                if stmt.kind == "for":
                    steps = takes_steps(stmts, position)
                    next_of = drawn(stmts, position, ctx)
                    found = self._loop(loaders, stmt, where, steps) if next_of is None \
                        else loaders.loader(*next_of)
                    if found is not None and found.per_pass is not None:
                        found = replace(found, steps=loader_passes(ctx, stmts, position,
                                                                   found.per_pass)
                                        if next_of is None
                                        and entry is not None
                                        and self._runs_once(ctx, entry, reached)
                                        else None)
                    if found is not None and runs_private(ctx, stmts, position, self.private):
                        private.append(found)
                    elif found is not None:
                        (training if steps else decisions).append(found)
                index_sampling.extend(self.draws.in_statement(stmt, where))
        training.extend(self._library_loops(loaders, scopes))
        for group in (private or training or decisions, index_sampling):
            kinds = {d.kind for d in group}
            if len(kinds) == 1:
                return agreed(group)
            if len(kinds) > 1:
                return Sampling("unknown", [e for d in group for e in d.evidence],
                                note="the training loops sample in different ways")
        return Sampling(note=NO_SAMPLING)

    def _library_loops(self, loaders: LoaderReader, scopes: list[Ctx]) -> Iterator[Sampling]:
        """The loaders a library's own training loop iterates: a library method called on an
        instance of a project subclass (``trainer.train()``, ``dpcheck.pipelines.callbacks``)
        runs the base's loop over the loader that a method of the subclass builds and returns
        (the library calls it back). Each method of the subclass returning a loader counts
        (``own_methods`` leaves out those named for evaluation)."""
        seen: set[Ctx] = set()
        for where, _, call in self.index.calls(scopes):
            cls = library_receiver(self.index, call, where)
            if cls is None or cls in seen:
                continue
            seen.add(cls)
            for method in own_methods(self.index, cls):
                name = tail_name(method.scope)
                found = loaders.returned_loader(method, name)
                if found.kind != "unknown":
                    yield replace(found, evidence=[*found.evidence, Evidence(
                        "sampler", Span(where.path, *call.position),
                        f"{call.name} runs the training loop of the library base over the loader "
                        f"{cls.scope}.{name} returns")])

    def _runs_once(self, ctx: Ctx, entry: Ctx, reached: frozenset[tuple[str, str]]) -> bool:
        """Whether the scope ``ctx`` runs once per run of ``entry``: it is the entry, or its one
        caller in the pipeline calls it outside any loop and runs once itself (each caller a
        question of the index's memo and cycle guard, ``dpcheck.pipelines.questions``)."""
        if (ctx.path, ctx.scope) == (entry.path, entry.scope):
            return True
        sites = [w for w, _ in self.index.call_sites(Ctx(ctx.path, ctx.scope))
                 if (w.path, w.scope) in reached]
        if len(sites) != 1:
            return False
        [site] = sites
        scope = self.index.scope(site)
        return scope is not None and any(
            stmt.line == site.line and stmt.loop_depth == 0 for stmt in scope.statements) \
            and self.index.questions.ask(("runs-once", site, entry, reached),
                                         lambda: self._runs_once(site, entry, reached), False)

    def _loop(self, loaders: LoaderReader, stmt: Statement, ctx: Ctx,
              trains: bool = False) -> Sampling | None:
        """The sampling of a loop's iterable when it is a loader (None when it is not one). A
        training loop over a name saying it is a loader that dpcheck cannot follow, or over a
        batch source found but not decided (an ``unknown`` with sampler evidence: a project
        generator), is kept as ``unknown``: another loop's loader must not stand in for it.
        A loader named for evaluation is left out by name: where a library engine steps the
        update out of sight, no principle yet tells an evaluation pass from the training's."""
        iterable = stmt.expr
        while isinstance(iterable, Call) and iterable.name in LOOP_WRAPPERS and iterable.args:
            iterable = iterable.argument(0)
        if isinstance(iterable, Name) and EVAL_NAME.search(iterable.dotted):
            return None
        if self.origins.origin(iterable, ctx) == Origin.LOADER:
            return loaders.loader(iterable, ctx)
        if not isinstance(iterable, (Name, Call)):
            return None
        found = loaders.loader(iterable, ctx)  # a loader a project helper builds and returns
        named = isinstance(iterable, Name) and "loader" in iterable.dotted.lower()
        return found if found.kind != "unknown" or (trains and (named or found.evidence)) \
            else None
