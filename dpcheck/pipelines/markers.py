"""DP markers: what makes code DP code, where it sits, and what of it no pipeline took.

A scan must not pass DP code it did not understand in silence. The markers are read from the
scopes an entry reaches (a script, or the outermost project function that runs DP code):

* **per-example clipping**: a clip that reaches per-example gradients (``handwritten``);
* **Gaussian noise on gradients**: a draw that flows into a gradient value (``handwritten``:
  by where the noise flows, so noise drawn for data or inputs is not a marker);
* **per-example gradients**: computed by ``vmap``, BackPACK, a Jacobian or a loop over examples;
* **a DP library used**: a call into a library of ``dp_libraries`` (by import-qualified name:
  an import that is never called is not a use), or a project class derived from one of its
  classes;
* **an accountant call** (``accountants``), except in the file that defines the accountant (a
  vendored copy's own demonstration is the accountant's code, not a use of it).

Noise on gradients alone is also how gradient-noise regularisation is written (Neelakantan et
al., 2015, usually after a global ``clip_grad_norm_``), and per-example gradients alone are
computed for influence and variance studies: each makes code DP code only together with the
other. Any of the other markers does on its own. ``Markers.missing`` says which parts of a
DP-SGD pipeline (per-example clipping, noise on the clipped gradients, an accountant) were not
found, so a reader knows what dpcheck could not link.

``MarkerFinder.dp_functions`` finds the functions holding DP code (the builder links each from
its outermost callers), and ``MarkerFinder.unlinked`` the DP code of the entries that formed no
pipeline.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from dpcheck.model import Evidence, Role, Span, UnlinkedCode
from dpcheck.pipelines.accountants import AccountantCall, AccountantFinder
from dpcheck.pipelines.handwritten import HandwrittenAnalyzer, HandwrittenUpdate
from dpcheck.pipelines.index import ProjectIndex
from dpcheck.pipelines.opacus_usage import engine_method, entry_methods, find_usage
from dpcheck.pipelines.scope import Ctx
from dpcheck.pipelines.vocabulary import vocabulary
from dpcheck.sites.nodes import Call

#: Evidence kept per kind of marker (the first ones, in reading order).
MAX_PER_KIND = 3
#: An entry that formed no pipeline: its name, its context, the scopes it reaches and their
#: hand-written analysis when the attempt to form a pipeline made one.
Tried = tuple[str, Ctx, list[Ctx], HandwrittenUpdate | None]


@dataclass(frozen=True)
class Markers:
    """The DP markers of a set of scopes, each kind as evidence."""

    clip: tuple[Evidence, ...] = ()
    noise: tuple[Evidence, ...] = ()
    per_sample: tuple[Evidence, ...] = ()
    library: tuple[Evidence, ...] = ()
    accountant: tuple[Evidence, ...] = ()
    libraries: tuple[str, ...] = ()

    @property
    def dp_code(self) -> bool:
        """Whether the markers make the code DP code (see the module docstring)."""
        return bool(self.clip or self.library or self.accountant
                    or (self.noise and self.per_sample))

    @property
    def dp_code_without_library(self) -> bool:
        """``dp_code`` on the markers other than a DP library's use."""
        return bool(self.clip or self.accountant or (self.noise and self.per_sample))

    @property
    def evidence(self) -> tuple[Evidence, ...]:
        return (*self.clip, *self.per_sample, *self.noise, *self.library, *self.accountant)

    @property
    def missing(self) -> tuple[str, ...]:
        """The parts of a DP-SGD pipeline not found among the markers."""
        parts = []
        if not self.clip:
            parts.append("per-example clipping")
        if not self.noise:
            parts.append("Gaussian noise added to the clipped gradients")
        if not self.accountant:
            parts.append("an accountant")
        if self.library and self.clip and self.noise:
            parts.append("how the DP library's update divides and samples")
        return tuple(parts)


class MarkerFinder:
    """Finds the markers of a set of scopes (one finder per linking run)."""

    def __init__(self, index: ProjectIndex, handwritten: HandwrittenAnalyzer) -> None:
        self.index = index
        self.handwritten = handwritten
        self.steps = handwritten.steps

    def find(self, scopes: list[Ctx], update: HandwrittenUpdate | None = None) -> Markers:
        """The markers of ``scopes``; ``update`` is their hand-written analysis when the caller
        already has it."""
        if update is None:
            update = self.handwritten.analyze(scopes)
        accountants = AccountantFinder(self.index, None).find(scopes)
        library = [(title, evidence) for title, evidence in self._library(scopes)]
        return Markers(
            clip=_first(_as(Role.CLIP, update.per_sample)),
            noise=_first(_as(Role.NOISE, update.gradient_noise)),
            per_sample=_first(_as(Role.PER_SAMPLE_GRAD, update.per_sample_seen)),
            library=_first(evidence for _, evidence in library),
            accountant=_first(Evidence(Role.ACCOUNTANT, call.span,
                                       f"{call.name} accountant (assumes {call.assumes})")
                              for call in accountants if not self._own_call(call)),
            libraries=tuple(dict.fromkeys(title for title, _ in library)),
        )

    def _own_call(self, call: AccountantCall) -> bool:
        """An accountant called in the file that defines it (a vendored accountant's own
        demonstration under ``__main__``): the accountant's code, not a use of it."""
        name = call.call.name if isinstance(call.call, Call) else None
        target = self.index.function(name, call.ctx) if name and not name.startswith("?.") \
            else None
        return target is not None and target.path == call.ctx.path

    def unlinked(self, tried: list[Tried], formed: set[Ctx], budget: int) -> list[UnlinkedCode]:
        """The DP code of the entries that formed no pipeline, each read within ``budget``
        questions. Scopes a formed pipeline reaches are left out (what they hold was linked),
        and so is a function entry that a script which formed no pipeline reaches (its code is
        reported with the script's). A script calling a DP library is DP code; a function
        nothing runs needs a marker besides the library's use (``dp_code_without_library``): a
        library helper such as a sampler is not enough."""
        by_scripts = {scope for _, ctx, scopes, _ in tried if ctx.scope == "<module>"
                      for scope in scopes}
        found: list[UnlinkedCode] = []
        for entry, ctx, scopes, update in tried:
            script = ctx.scope == "<module>"
            rest = [scope for scope in scopes if scope not in formed]
            if not rest or (not script and ctx in by_scripts):
                continue
            self.index.questions.begin(budget)
            markers = self.find(rest, update if len(rest) == len(scopes) else None)
            if markers.dp_code if script else markers.dp_code_without_library:
                scope = self.index.scope(ctx)
                line = scope.line if scope is not None and not script else 1
                found.append(UnlinkedCode(entry, ctx.path, line, markers.evidence,
                                          markers.missing, markers.libraries))
        return found

    def dp_functions(self, paths: Iterable[str]) -> Iterator[Ctx]:
        """Functions that may hold an entry's DP code: those with a noise draw (a Gaussian
        draw, a call of a project helper that returns one, a library privatizer) or an Opacus
        entry call, found through the call index so only those scopes are analysed; then the
        functions of ``paths`` that call into a DP library (``library_scopes``)."""
        seen: set[Ctx] = set()
        helpers: set[str] = set()
        draws = vocabulary()["gaussian_draws"].tails
        for tail in sorted(draws | entry_methods(self.index)):
            for where, _ in self.index.calls_named(tail):
                ctx = self._function_scope(where)
                if ctx is None or ctx in seen:
                    continue
                seen.add(ctx)
                if tail in draws and self.steps.returns_noise(ctx):
                    _, _, helper = ctx.scope.rpartition(".")
                    helpers.add(helper)
                if find_usage(self.index, [ctx]) or self.handwritten.analyze([ctx]).noise:
                    yield ctx
        for helper in sorted(helpers):
            for where, _ in self.index.calls_named(helper):
                ctx = self._function_scope(where)
                if ctx is not None and ctx not in seen:
                    seen.add(ctx)
                    if self.handwritten.analyze([ctx]).noise:
                        yield ctx
        for ctx in self.library_scopes(paths):
            if ctx not in seen and self._function_scope(ctx) is not None:
                seen.add(ctx)
                yield ctx

    def _function_scope(self, where: Ctx) -> Ctx | None:
        """The function scope of ``where`` when it may hold an entry's DP code: not module
        level, not a class body, not a test or vendored file, not a method of a local engine
        class."""
        summary = self.index.summary(where.path)
        ctx = Ctx(where.path, where.scope)
        if self.index.skipped(where.path) or not summary or ctx.scope == "<module>" \
                or ctx.scope in summary.classes \
                or engine_method(self.index, ctx):
            return None
        return ctx

    def library_scopes(self, paths: Iterable[str]) -> Iterator[Ctx]:
        """The function scopes of ``paths`` that call into a DP library (imported as a
        library, not as a project module): where DP code may sit that no entry reaches."""
        for path in paths:
            summary = self.index.summary(path)
            if summary is None or not self.steps.dp_imports(path):
                continue
            for qual, scope in summary.scopes.items():
                if qual == "<module>" or qual in summary.classes:
                    continue
                if next(self._library([Ctx(path, qual)]), None) is not None:
                    yield Ctx(path, qual)

    def _library(self, scopes: Iterable[Ctx]) -> Iterator[tuple[str, Evidence]]:
        """Calls into a DP library, and project classes derived from a DP-library class whose
        methods the scopes are, each with the library's title."""
        for ctx in scopes:
            if not self.steps.dp_imports(ctx.path):
                continue
            scope = self.index.scope(ctx)
            if scope is None:
                continue
            summary = self.index.summary(ctx.path)
            if scope.owner and summary is not None and scope.owner in summary.classes:
                for base in summary.bases(scope.owner):
                    named = self.index.library_name(base, Ctx(ctx.path, "<module>")) \
                        if base else None
                    title = self.steps.table.library_of(named)
                    if title is not None:
                        yield title, Evidence(Role.LIBRARY, Span(ctx.path, scope.line),
                                              f"{scope.owner} derives from {named}")
            for stmt in scope.statements:
                where = Ctx(ctx.path, ctx.scope, stmt.line)
                for node in stmt.expr.walk():
                    if isinstance(node, Call):
                        named = self.steps.library(node, where)
                        if named is not None:
                            title = self.steps.table.library_of(named) or named
                            yield title, Evidence(Role.LIBRARY, Span(ctx.path, *node.position),
                                                  f"calls {named}")


def _as(role: Role, evidence: Iterable[Evidence]) -> Iterator[Evidence]:
    """The evidence with the marker's role (a clip of per-example gradients is recorded by the
    update analysis as per-sample evidence)."""
    return (Evidence(role, item.span, item.note) for item in evidence)


def _first(evidence: Iterable[Evidence]) -> tuple[Evidence, ...]:
    """The first ``MAX_PER_KIND`` items, one per place."""
    kept: list[Evidence] = []
    seen: set[tuple[str, int]] = set()
    for item in evidence:
        if (item.span.path, item.span.line) not in seen:
            seen.add((item.span.path, item.span.line))
            kept.append(item)
        if len(kept) == MAX_PER_KIND:
            break
    return tuple(kept)
