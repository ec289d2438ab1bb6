"""Link sites into pipelines: one per training entry point, classified and parametrised.

Entry points are scripts (a ``__main__`` block, module-level loops or calls) and, for DP code that no
script reaches, the outermost project function that runs it (never a method of a local engine
class: a copy, fork or subclass of the Opacus engine is library code). The scopes an entry reaches
through project calls are analysed together, leaving out the arms of a dispatch on a configured
value (``if args.algorithm == "DPSGD"``) that its defaults skip (their calls are not followed and
no analyzer reads their statements), so an entry that can run several training methods is the
pipeline of its default one. An Opacus usage or a hand-written DP-SGD
update makes a pipeline; its normalization and sampling give the mechanism (``mechanism``),
accountant calls give what is assumed, and the parameters are resolved statically with
provenance.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field, replace

from dpcheck.model import (
    NO_ACCOUNTANT,
    Accountant,
    Evidence,
    Pipeline,
    Span,
    Undecided,
    UnlinkedCode,
)
from dpcheck.pipelines.accountants import AccountantCall, AccountantFinder
from dpcheck.pipelines.callbacks import called_back
from dpcheck.pipelines.engine_patch import patched_callees
from dpcheck.pipelines.entry_points import decorated_entries
from dpcheck.pipelines.full_batch import full_batch
from dpcheck.pipelines.guards import guards
from dpcheck.pipelines.handwritten import HandwrittenAnalyzer, HandwrittenUpdate
from dpcheck.pipelines.index import ProjectIndex
from dpcheck.pipelines.markers import MarkerFinder, Tried
from dpcheck.pipelines.opacus_usage import (
    OpacusUsage,
    api_major,
    clips_only,
    engine_method,
    find_usages,
    loader_decides,
    never_stepped,
    normalization,
    private_steps,
)
from dpcheck.pipelines.params import ParamCollector
from dpcheck.pipelines.per_sample import computes_gradient
from dpcheck.pipelines.private_loops import Place, private_lines
from dpcheck.pipelines.questions import PIPELINE_BUDGET
from dpcheck.pipelines.sampling.analyzer import SamplingAnalyzer
from dpcheck.pipelines.scope import Ctx, PipelineScope
from dpcheck.pipelines.tf_privacy import find_optimizer
from dpcheck.pipelines.tf_privacy import normalization as tf_normalization
from dpcheck.pipelines.values import Evaluator
from dpcheck.pipelines.versions import resolve_opacus
from dpcheck.project import Project
from dpcheck.sites.nodes import Call, Compare, Name, Node, Num, Opaque, Str
from dpcheck.sites.views import Statement

MAX_SCOPES = 400


@dataclass(frozen=True)
class Linking:
    """What the pipeline stage produced for a project: its pipelines, and the DP code it saw
    but could not link into one (``dpcheck.pipelines.markers``)."""

    pipelines: list[Pipeline]
    unlinked: list[UnlinkedCode]


def mechanism(norm: str, sampling: str, by_loader: bool = False) -> str:
    """The update rule from the divisor kind and the sampling (docs/theory.md#update-rules).
    ``by_loader``: the divisor is data-dependent only if the batches are sampled (Opacus
    dividing by floor(N/len(loader)) of a loader it may have kept), so unknown sampling leaves
    the update rule unknown. A size of the batch, or of data that may be the batch
    (``data-size``), normalizes by a data-dependent size only under Poisson sampling: there it
    is ASGM, or ASGM|EASGM when the data may also be the dataset
    (docs/theory.md#undecided-normalization); fixed-size batches make it fixed-mean."""
    if norm == "unknown":
        return "unknown"
    if norm == "none":
        return "SGM"
    if by_loader and sampling == "unknown":
        return "unknown"
    if sampling == "shuffle":
        return "fixed-mean"
    if norm == "constant":
        return "SGM"
    by_kind = {"realized": "ASGM", "data-size": "ASGM|EASGM", "expected": "EASGM",
               "floor-expected": "FEASGM"}
    if sampling == "poisson" or norm not in ("realized", "data-size"):
        return by_kind.get(norm, "unknown")
    return "unknown"


@dataclass
class _Analysis:
    norm: str
    reason: str
    evidence: list[Evidence] = field(default_factory=list)
    library: str | None = None
    poisson_default: bool | None = None
    default_accountant: str | None = None
    anchor: Span | None = None
    by_loader: bool = False
    release: str | None = None
    release_reason: str | None = None


class PipelineBuilder:
    """Builds the pipelines of one project."""

    def __init__(self, project: Project, budget: int = PIPELINE_BUDGET) -> None:
        self.project = project
        self.budget = budget
        self.index = ProjectIndex(project)
        self.handwritten = HandwrittenAnalyzer(self.index)
        self.evaluator = Evaluator(self.index)
        self._pruned: set[Span] = set()
        #: The hand-written analysis of the last entry classified (its markers, when it forms
        #: no pipeline, are read from it instead of analysing its scopes again).
        self._attempt: HandwrittenUpdate | None = None
        self._truths: dict[tuple[str, str, int], bool | None] = {}
        #: The ``if`` tests the run being classified decides beyond the default configuration
        #: (``_run_truths``): they override ``_truths`` while that run is reached.
        self._assumed: dict[tuple[str, str, int], bool] = {}

    def build(self) -> list[Pipeline]:
        return self.link().pipelines

    def link(self) -> Linking:
        """The pipelines of every entry, and the DP code of the entries that formed none."""
        pipelines: list[Pipeline] = []
        covered: set[Ctx] = set()
        formed: set[Ctx] = set()
        tried: list[Tried] = []
        for ctx in self._scripts():
            scopes, formed_here = self._entry(f"{ctx.path}", ctx)
            if formed_here:
                pipelines.extend(formed_here)
                covered.update(scopes)
                formed.update(scopes)
            else:
                tried.append((ctx.path, ctx, scopes, self._attempt))
        finder = MarkerFinder(self.index, self.handwritten)
        for ctx in finder.dp_functions(self._paths()):
            if ctx in covered:
                continue
            for top in self._top_callers(ctx):
                if top in covered:
                    continue
                entry = f"{top.path}::{top.scope}"
                scopes, formed_here = self._entry(entry, top)
                covered.update(scopes)
                if formed_here:
                    pipelines.extend(formed_here)
                    formed.update(scopes)
                else:
                    tried.append((entry, top, scopes, self._attempt))
        return Linking(sorted(pipelines, key=lambda p: (p.path, p.line, p.entry)),
                       finder.unlinked(tried, formed, self.budget))

    def _entry(self, entry: str, ctx: Ctx) -> tuple[list[Ctx], list[Pipeline]]:
        """The scopes an entry reaches and its pipelines, analysed within one work budget. A
        pipeline whose budget ran out is marked ``incomplete``; an entry in a file with DP
        markers that formed no pipeline before its budget ran out still gets one, undecided in
        every part, so that it is reported rather than passed in silence. An unexpected
        exception costs this pipeline only: it is recorded as an internal error of the entry's
        file."""
        questions = self.index.questions
        questions.begin(self.budget)
        try:
            scopes = self._reach(ctx)
            pipelines = self._pipelines(entry, ctx, scopes)
        except Exception as exc:  # noqa: BLE001 - one pipeline's linking bug must not stop the rest
            self.project.failed(ctx.path, f"linking pipeline {entry}", exc)
            return [], []
        if not questions.exhausted:
            return scopes, pipelines
        why = (f"analysis budget exhausted ({self.budget} questions about values, origins and "
               "classes answered without finishing)")
        if pipelines:
            return scopes, [replace(pipeline, incomplete=why) for pipeline in pipelines]
        if ctx.path not in self.project.candidates:
            return scopes, []
        scope = self.index.scope(ctx)
        span = Span(ctx.path, scope.line if scope and ctx.scope != "<module>" else 1)
        return scopes, [Pipeline(entry=entry, path=ctx.path, line=span.line, mechanism="unknown",
                                 sampling="unknown", evidence=(Evidence("update", span, why),),
                                 undecided=Undecided(span, why), incomplete=why)]

    # -- entries and reachability -----------------------------------------------------------
    def _paths(self) -> Iterator[str]:
        for path in self.project.candidate_paths():
            if not self.index.skipped(path):
                yield path

    def _scripts(self) -> Iterator[Ctx]:
        for path in self._paths():
            summary = self.index.summary(path)
            if not summary:
                continue
            stmts = summary.scopes["<module>"].statements
            if summary.has_main or any(
                    s.kind in ("for", "while") or (s.kind == "expr" and isinstance(s.expr, Call))
                    for s in stmts):
                yield Ctx(path, "<module>")

    def _callees(self, ctx: Ctx) -> Iterator[tuple[Ctx, tuple[Span, ...]]]:
        """The project functions ``ctx`` calls, passes as an argument (positional or keyword:
        ``Estimator(model_fn=fn)``, ``app.run(main)``, ``fire.Fire(main)``) or returns (an
        estimator ``input_fn`` factory returns its nested ``input_fn``), and for a module the
        functions a command-line framework runs (``entry_points``), the methods of a project
        subclass a library calls back (``callbacks``), each with the dispatch tests that skip
        the call under the default configuration (none: the call runs). A call in an ``if``
        test is a call of the scope."""
        for where, stmt, node in self.index.calls([ctx]):
            skipped = tuple(Span(where.path, line) for line, runs in self._dispatch(where, stmt)
                            if not runs)
            passed = [a.dotted for a in (*node.args, *node.kwargs.values())
                      if isinstance(a, Name)]
            for name in [node.name, *passed]:
                if name:
                    yield from ((f, skipped) for f in self._functions(name, where))
            yield from ((f, skipped) for f in called_back(self.index, node, where))
        for where, stmt in self.index.statements([ctx]):
            if stmt.kind == "return" and isinstance(stmt.expr, Name):
                yield from ((f, ()) for f in self._functions(stmt.expr.dotted, where))
        # a call in an ``if`` test runs too (``if spent(noise) > target:`` in a search for sigma)
        scope = self.index.scope(ctx)
        for line in scope.if_lines if scope is not None else ():
            test = scope.if_test(line)  # type: ignore[union-attr]
            for part in test.walk() if test is not None else ():
                if isinstance(part, Call) and part.name:
                    yield from ((f, ()) for f in
                                self._functions(part.name, Ctx(ctx.path, ctx.scope, line)))
        yield from ((f, ()) for f in patched_callees(self.index, ctx))
        if ctx.scope == "<module>":
            yield from ((f, ()) for f in decorated_entries(self.index, ctx.path))

    def _functions(self, name: str, where: Ctx) -> list[Ctx]:
        """The project functions ``name`` may be at ``where``, including a function defined
        inside the reading scope or one enclosing it (a closure)."""
        found = self.index.functions(name, where)
        summary = self.index.summary(where.path) if not found and "." not in name else None
        scope = where.scope
        while summary is not None and scope != "<module>":
            if scope not in summary.classes and f"{scope}.{name}" in summary.scopes:
                return [Ctx(where.path, f"{scope}.{name}")]
            enclosing, _, _ = scope.rpartition(".")
            scope = enclosing or "<module>"
        return found

    def _dispatch(self, ctx: Ctx, stmt: Statement) -> Iterator[tuple[int, bool]]:
        """The dispatch ``if`` arms ``stmt`` sits in (tests comparing a value with a literal,
        ``args.algorithm == "DPSGD"``) whose test is decided under the default configuration:
        (if line, whether the statement's arm runs)."""
        for line, arm in stmt.arms:
            holds = self._decided(ctx, line)
            if holds is not None:
                yield line, holds == (arm == 0)

    def _decided(self, ctx: Ctx, line: int) -> bool | None:
        """Whether the test of the ``if`` at ``line`` holds under the default configuration,
        for a dispatch test (``_dispatch_test``) that is decided; else None. Evaluated outside
        any pipeline's reach (the same answer for every entry), once per ``if``."""
        key = (ctx.path, ctx.scope, line)
        if key in self._assumed:
            return self._assumed[key]
        if key not in self._truths:
            test = self.index.if_test(ctx, line)
            self._truths[key] = self.evaluator.truth(test, Ctx(*key)) \
                if test is not None and _dispatch_test(test) else None
        return self._truths[key]

    def _skipped_arms(self, scopes: list[Ctx]) -> frozenset[tuple[str, str, int, int]]:
        """The dispatch arms of ``scopes`` the default configuration skips: their statements
        are not read when the pipeline is classified (``ProjectIndex.statements``)."""
        skipped = set()
        for ctx in scopes:
            scope = self.index.scope(ctx)
            for line in scope.if_lines if scope else ():
                holds = self._decided(ctx, line)
                if holds is not None:
                    skipped.add((ctx.path, ctx.scope, line, 1 if holds else 0))
        return frozenset(skipped)

    def _dispatch_evidence(self) -> list[Evidence]:
        """The dispatch tests of the last reach that left a project function out of it."""
        return [Evidence("dispatch", span, "an arm of this dispatch does not run under the "
                         "default configuration (or where this pipeline's engine call runs): "
                         "the project functions it calls are not analysed")
                for span in sorted(self._pruned, key=lambda s: (s.path, s.line))]

    def _reach(self, entry: Ctx) -> list[Ctx]:
        """The scopes ``entry`` reaches through project calls, leaving out the calls in a
        dispatch arm the default configuration skips (an entry that dispatches to several
        training methods runs the one its option defaults select)."""
        seen = {entry}
        order = [entry]
        queue = deque([entry])
        skipped: dict[Ctx, set[Span]] = {}
        while queue and len(order) < MAX_SCOPES:
            for callee, tests in self._callees(queue.popleft()):
                if tests:
                    skipped.setdefault(callee, set()).update(tests)
                elif callee not in seen:
                    seen.add(callee)
                    order.append(callee)
                    queue.append(callee)
        self._pruned = {test for callee, tests in skipped.items() if callee not in seen
                        for test in tests}
        return order

    def _top_callers(self, ctx: Ctx) -> list[Ctx]:
        tops: list[Ctx] = []
        seen = {ctx}
        frontier = [ctx]
        while frontier:
            current = frontier.pop()
            callers = [Ctx(w.path, w.scope) for w, _ in self.index.call_sites(current)
                       if not self.index.skipped(w.path)]
            callers = [c for c in callers if c.scope != "<module>" and c != current]
            if not callers:
                tops.append(current)
            for caller in callers:
                if caller not in seen:
                    seen.add(caller)
                    frontier.append(caller)
        return tops

    # -- classification -----------------------------------------------------------------------
    def _pipelines(self, entry: str, ctx: Ctx, scopes: list[Ctx]) -> list[Pipeline]:
        """The pipelines of an entry, classified on the index seen from its scope."""
        scope = PipelineScope(frozenset((c.path, c.scope) for c in scopes),
                              self._skipped_arms(scopes))
        return self._classified(entry, ctx, scopes, self.index.within(scope))

    def _classified(self, entry: str, ctx: Ctx, scopes: list[Ctx],
                    index: ProjectIndex) -> list[Pipeline]:
        """One pipeline per private training run the entry reaches: each Opacus engine site
        whose private optimizer steps, and the project's own noisy update when there is one
        (a sweep, a baseline or a second method is a run of its own). Where Opacus only clips
        (``clips_only``) the noise is the project's and its update is the one pipeline. Beside
        an engine run, noise is a run of its own only where every scope that draws it or takes
        it from a helper computes gradients itself (``_differentiates``): noise on clipped data
        statistics released for normalisation is not a training run. A run is read without the scopes that hold only
        another run (its home: the engine call's or the noise draws' scope), so each keeps its
        own sampler and accountant."""
        handwritten = HandwrittenAnalyzer(index)
        usages = [u for u in find_usages(index, scopes) if not never_stepped(index, u, scopes)]
        clipping = next((clips_only(u, Evaluator(index)) for u in usages[:1]), None)
        if clipping is not None:
            usages = []  # the noise is the project's: its own update is the mechanism
        # beside an Opacus run, a local engine class is that library's code, not a run
        update = handwritten.analyze([c for c in scopes
                                      if not (usages and engine_method(index, c))])
        self._attempt = update
        runs: list[tuple[str, _Analysis, OpacusUsage | None, frozenset[Ctx]]] = []
        first = {u.ctx.path: Span(u.ctx.path, *u.call.position) for u in reversed(usages)}
        for usage in usages:
            site = entry if not runs else f"{entry}@{usage.ctx.path}:{usage.ctx.line}"
            home = frozenset({Ctx(usage.ctx.path, usage.ctx.scope)})
            runs.append((site, self._opacus(usage, ctx.path, first[usage.ctx.path]), usage, home))
        noise_scopes = frozenset(Ctx(c.path, c.scope) for c, _, _ in update.noise_calls)
        if runs:
            own = update.is_dp_sgd and _differentiates(index, noise_scopes)
        else:
            # noise on gradients with an accountant anchors a pipeline however sensitivity is
            # bounded: the sampling the accountant assumes is checked all the same
            own = update.is_dp_sgd or update.noisy_update and bool(
                AccountantFinder(index, None).find(scopes))
        if own:
            analysis = self._handwritten(update)
            analysis.evidence[:0] = handwritten.hand_over(update)
            if clipping is not None:
                analysis.evidence.insert(0, clipping)
            site = entry if not runs or analysis.anchor is None else \
                f"{entry}@{analysis.anchor.path}:{analysis.anchor.line}"
            runs.append((site, analysis, None, noise_scopes))
        optimizer = find_optimizer(index, scopes) if not runs else None
        if optimizer is not None:
            return [self._formed(entry, ctx, scopes, index, self._tf_privacy(index, *optimizer),
                                 None, None, optimizer)]
        homes = [home for *_, home in runs]
        formed: list[Pipeline] = []
        pruned = self._pruned
        for site, analysis, usage, home in runs:
            self._pruned = pruned  # the entry's dispatch evidence, unless the run prunes more
            reach, view = self._run_reach(ctx, scopes, index, usage)
            formed.append(self._formed(site, ctx, [c for c in reach if c in home or not any(
                c in other for other in homes)], view, analysis, usage,
                update if usage is None else None, None))
        return formed

    def _run_reach(self, ctx: Ctx, scopes: list[Ctx], index: ProjectIndex,
                   usage: OpacusUsage | None) -> tuple[list[Ctx], ProjectIndex]:
        """The scopes and the index of the run of an engine site: the ``if`` tests its own
        arms decide (``_run_truths``) prune the reach and skip arms as the default
        configuration does (when the engine runs under ``if mode == 2:``, its ``else:`` arm
        and an ``if mode == 3:`` elsewhere do not run, nor what only they call)."""
        truths = self._run_truths(usage, scopes) if usage is not None else {}
        if not truths:
            return scopes, index
        self._assumed = truths
        try:
            reach = self._reach(ctx)
            skipped = self._skipped_arms(reach)
        finally:
            self._assumed = {}
        return reach, self.index.within(PipelineScope(frozenset((c.path, c.scope) for c in reach),
                                                      skipped))

    def _run_truths(self, usage: OpacusUsage,
                    scopes: list[Ctx]) -> dict[tuple[str, str, int], bool]:
        """The ``if`` tests decided whenever the engine call runs: those of the arms it sits
        in, and every test of the reach comparing the same value with a constant as a test of
        those arms does (``x == 2`` holding decides ``x == 3`` and ``x != 2``)."""
        scope = self.index.scope(usage.ctx)
        stmt = next((s for s in scope.statements if s.line == usage.ctx.line), None) \
            if scope is not None else None
        if stmt is None:
            return {}
        truths = {(usage.ctx.path, usage.ctx.scope, line): arm == 0 for line, arm in stmt.arms}
        known = [fact for (path, name, line), holds in truths.items()
                 for fact in _equalities(self.index.if_test(Ctx(path, name), line), holds)]
        for where in scopes if known else ():
            body = self.index.scope(where)
            for line in body.if_lines if body is not None else ():
                holds = _implied(body.if_test(line), known)
                if holds is not None:
                    truths.setdefault((where.path, where.scope, line), holds)
        return truths

    def _formed(self, entry: str, ctx: Ctx, scopes: list[Ctx], index: ProjectIndex,
                analysis: _Analysis, usage: OpacusUsage | None, update: HandwrittenUpdate | None,
                optimizer: tuple[Ctx, Call] | None) -> Pipeline:
        """The pipeline of one private run of an entry: its update ``analysis`` with the
        sampling, accountant and parameters of the statements that run it."""
        assumed = guards(index, usage.ctx) if usage is not None else None
        private = self._private(index, usage, update, scopes)
        sampling = SamplingAnalyzer(index, analysis.poisson_default, assumed,
                                    private).analyze(scopes)
        accountants = AccountantFinder(index, analysis.default_accountant).find(scopes)
        params = ParamCollector(index, self.project.overrides)
        values = params.collect(usage, update, sampling, accountants, scopes, optimizer, private)
        accountant = self._accountant(accountants, params)
        sampling = full_batch(sampling, accountant) or sampling
        evidence = [*self._dispatch_evidence(), *sampling.evidence, *analysis.evidence]
        if params.accumulation is not None:
            evidence.append(params.accumulation.evidence())
        if accountant.span is not None:
            evidence.append(Evidence("accountant", accountant.span,
                                     f"{accountant.name} assumes {accountant.assumes}"))
            chosen = next(c for c in accountants if c.span == accountant.span)
            evidence.extend(Evidence(f"accountant:{k}", span, f"{k} given to {accountant.name}")
                            for k, span in sorted(chosen.sources.items()) if k in ("q", "steps"))
        evidence.extend(Evidence(f"param:{k}", v.span, f"{k} = {v.value} ({v.source})")
                        for k, v in sorted(values.items()) if v.span is not None)
        mech = mechanism(analysis.norm, sampling.kind, analysis.by_loader)
        undecided = None
        if mech == "unknown":
            kept = " (the divisor is data-dependent only if the loader Opacus keeps samples)" \
                if analysis.by_loader else ""
            why = analysis.reason if analysis.norm == "unknown" else (
                f"normalization {analysis.norm} with {sampling.kind} sampling{kept}"
                f"{': ' + sampling.note if sampling.note else ''}")
            undecided = Undecided(analysis.anchor or Span(ctx.path, 1), why)
            evidence.append(Evidence("update", undecided.span, f"mechanism unknown: {why}"))
        scope = index.scope(ctx)
        line = scope.line if scope else 1
        if analysis.anchor is not None and analysis.anchor.path == ctx.path:
            line = analysis.anchor.line
        return Pipeline(entry=entry, path=ctx.path, line=line, mechanism=mech,
                        sampling=sampling.kind, sampler=sampling.sampler, accountant=accountant, params=values,
                        evidence=tuple(evidence), library=analysis.library,
                        release=analysis.release, undecided=undecided,
                        release_reason=analysis.release_reason)

    @staticmethod
    def _private(index: ProjectIndex, usage: OpacusUsage | None, update: HandwrittenUpdate | None,
                 scopes: list[Ctx]) -> frozenset[Place]:
        """The statements of the reach that run the private update (``private_loops``): those
        that draw a hand-written update's noise or call, through project functions, the code
        that draws it; for Opacus, those where the optimizer ``make_private`` returns steps
        (Opacus clips, noises and divides in that step) and the calls that lead to the
        ``make_private`` call. A function that steps the private optimizer it is handed runs
        the private update for that caller only, not for a caller handing it another
        optimizer (a shadow or attack model trained by the same helper)."""
        reached = frozenset((c.path, c.scope) for c in scopes)
        if usage is not None:
            steps = private_steps(index, usage, scopes)
            if not steps:
                return frozenset()
            return private_lines(index, [usage.ctx], reached) | {
                (c.path, c.scope, c.line) for c in steps}
        noise = [c for c, _, _ in update.noise_calls] if update is not None else []
        return private_lines(index, noise, reached)

    def _opacus(self, usage: OpacusUsage, path: str, first: Span) -> _Analysis:
        """The update of an Opacus run. Where no dependency file pins the release, the
        library evidence is the entry's ``first`` engine call in that file: how the library is
        installed is one fact of the file, whichever of the entry's runs reports it."""
        resolution = resolve_opacus(self.project, path, usage)
        span = Span(usage.ctx.path, *usage.call.position)
        how = resolution.reason or f"{resolution.library} (version table)"
        library_evidence = Evidence("library", resolution.span or first, how)
        noise = self._noise_argument(usage)
        if resolution.row is None:
            era = api_major(usage) == 1
            poisson = resolution.common("poisson_default", era)
            return _Analysis("unknown", resolution.reason, [
                library_evidence, *noise, Evidence("update", span,
                                                   "Opacus update; release undecided")],
                resolution.library, poisson, resolution.common("default_accountant", era), span,
                release_reason=how)
        row = resolution.row
        norm, why = normalization(usage, row)
        if row["mechanism"] == "not supported" and norm != "none":
            why = f"opacus {row['version']} has no Poisson path with normalization {norm}"
        evidence = [library_evidence, *noise, Evidence("update", span, why)]
        evidence.extend(Evidence("divisor", span, f"{e['role']}: {e['path']}:{e['line']} "
                                 f"{e['text']}") for e in row.get("evidence", [])
                        if str(e.get("role", "")).startswith("normalization"))
        return _Analysis(norm, why, evidence, resolution.library, bool(row["poisson_default"]),
                         row.get("default_accountant"), span, loader_decides(usage, row),
                         str(row["version"]), how)

    @staticmethod
    def _noise_argument(usage: OpacusUsage) -> list[Evidence]:
        """Where the noise multiplier is handed to Opacus (the ``noise_multiplier=`` line)."""
        for ctx, call in ((usage.ctx, usage.call), usage.engine or (usage.ctx, usage.call)):
            line = call.keyword_lines.get("noise_multiplier")
            if line is not None:
                return [Evidence("noise", Span(ctx.path, line), "noise_multiplier given to Opacus")]
        return []

    def _tf_privacy(self, index: ProjectIndex, ctx: Ctx, call: Call) -> _Analysis:
        norm, why = tf_normalization(index, ctx, call)
        span = Span(ctx.path, *call.position)
        line = call.keyword_lines.get("noise_multiplier")
        evidence = [Evidence("update", span, f"TF-Privacy DP optimizer: {why}")]
        if line is not None:
            evidence.insert(0, Evidence("noise", Span(ctx.path, line), "noise_multiplier"))
        return _Analysis(norm, why, evidence, "tensorflow-privacy", anchor=span)

    def _handwritten(self, update: HandwrittenUpdate) -> _Analysis:
        first_update, *_ = update.updates
        anchor = first_update.span
        unclipped = [] if update.clip and update.per_sample else [Evidence("clip", anchor, (
            "no per-example clip seen: each example's contribution is bounded otherwise (a "
            "Lipschitz or one-hot bound, a projection) or not at all; the pipeline is anchored "
            "on the noisy update and its accountant, and no sigma is read from the noise std"))]
        evidence = [*update.per_sample[:1], *update.clip[:1], *unclipped, *update.inverted[:1],
                    *update.noise[:1]]
        kinds = {d.dep.kind for d in update.divisors}
        evidence.extend(Evidence("divisor", d.span, f"{d.dep.kind}: {d.text}"
                                 + (f" ({d.dep.unknown})" if d.dep.unknown else ""))
                        for d in update.divisors)
        if update.divisors:
            first_divisor, *_ = update.divisors
            anchor = first_divisor.span
        if update.opaque and not update.divisors:
            evidence.extend(update.opaque)
            first_opaque, *_ = update.opaque
            return _Analysis("unknown", first_opaque.note, evidence, anchor=anchor)
        if not update.divisors:
            evidence.append(Evidence("update", anchor, "the noisy sum is applied undivided"))
            return _Analysis("none", "noisy sum, no division", evidence, anchor=anchor)
        if len(kinds) == 1:
            kind = kinds.pop()
            reason = next((d.dep.unknown for d in update.divisors if d.dep.unknown), "") or kind
            evidence.append(Evidence("update", anchor, f"noisy sum divided by a {kind} quantity"))
            return _Analysis(kind, reason, evidence, anchor=anchor)
        evidence.append(Evidence("update", anchor, f"divisors of different kinds {sorted(kinds)}"))
        return _Analysis("unknown", f"divisors of different kinds {sorted(kinds)}", evidence,
                         anchor=anchor)

    def _accountant(self, calls: list[AccountantCall], params: ParamCollector) -> Accountant:
        if not calls:
            return NO_ACCOUNTANT
        explicit = [c for c in calls if not c.name.startswith("opacus")]
        chosen, *_ = explicit or calls
        resolved = params.accountant_args(chosen)
        return Accountant(chosen.name, chosen.assumes, chosen.span, resolved.get("q"),
                          resolved.get("steps"), resolved.get("sigma"))


def _dispatch_test(test: Node) -> bool:
    """An ``if`` test comparing a value with a string or number literal, alone or inside
    ``and``/``or``: the form of a dispatch on a configuration option."""
    if isinstance(test, Compare) and test.op in ("==", "!="):
        return any(isinstance(side, (Str, Num)) for side in (test.left, test.right))
    if isinstance(test, Opaque) and test.kind in ("and", "or"):
        return any(_dispatch_test(part) for part in test.parts)
    return False


def _differentiates(index: ProjectIndex, scopes: frozenset[Ctx]) -> bool:
    """Whether each of ``scopes`` computes gradients itself: a gradient or per-example gradient
    call, or a framework's gradient attribute written (``per_sample.computes_gradient``)."""
    return bool(scopes) and all(computes_gradient(
        [call for _, _, call in index.calls([scope]) if isinstance(call, Call)],
        {name for _, stmt in index.statements([scope])
         for name in (stmt.target if isinstance(stmt.target, list) else [stmt.target])
         if isinstance(name, str)}) for scope in scopes)


def _equalities(test: Node | None, holds: bool) -> Iterator[tuple[Node, object]]:
    """The (value, constant) equalities a decided ``if`` test establishes: ``x == c`` that
    holds, ``x != c`` that fails, and those of the parts of an ``and`` that holds."""
    if isinstance(test, Opaque) and test.kind == "and" and holds:
        for part in test.parts:
            yield from _equalities(part, True)
    compared = _compared(test)
    if compared is not None:
        subject, constant, op = compared
        if holds == (op == "=="):
            yield subject, constant


def _implied(test: Node | None, known: list[tuple[Node, object]]) -> bool | None:
    """Whether ``test`` holds given the ``known`` equalities (None: not decided by them); an
    ``and`` fails as soon as one part does."""
    if isinstance(test, Opaque) and test.kind == "and":
        parts = [_implied(part, known) for part in test.parts]
        return False if False in parts else (True if parts and None not in parts else None)
    compared = _compared(test)
    if compared is None:
        return None
    subject, constant, op = compared
    equal = next((constant == value for held, value in known if held == subject), None)
    return None if equal is None else equal == (op == "==")


def _compared(test: Node | None) -> tuple[Node, object, str] | None:
    """``x == c`` or ``x != c`` (either side the constant) as (x, c, operator)."""
    if not isinstance(test, Compare) or test.op not in ("==", "!="):
        return None
    for subject, other in ((test.left, test.right), (test.right, test.left)):
        if isinstance(other, (Str, Num)) and not isinstance(subject, (Str, Num)):
            return subject, other.value, test.op
    return None


def build_pipelines(project: Project, budget: int = PIPELINE_BUDGET) -> list[Pipeline]:
    """Every DP training pipeline of the project (see the module docstring), each analysed
    within ``budget`` questions (``dpcheck.pipelines.questions``)."""
    return PipelineBuilder(project, budget).build()


def link_project(project: Project, budget: int = PIPELINE_BUDGET) -> Linking:
    """The pipelines of the project and the DP code it holds that no pipeline took."""
    return PipelineBuilder(project, budget).link()

