"""The user's calls into Opacus (1.x ``make_private*``, 0.x ``PrivacyEngine(...).attach``) and the
normalization they get from the release the project runs.

The calls are matched by qualified name against the engine entries of the API catalog
(``dpcheck/data/dp_engines.toml``, ``dpcheck.pipelines.apis``): ``engine.make_private`` is
Opacus' when ``engine`` is an Opacus ``PrivacyEngine`` (imported, re-exported, passed in, or a
project subclass that inherits the method). A project's own ``make_private`` function and another
library's (``jax_privacy.keras_api.make_private``) are not Opacus, whatever Opacus pin the
project has. A project class that overrides the engine's entry points is still an Opacus engine
when it derives from one, or when it is a local fork of it (``is_opacus_engine``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from dpcheck.catalog.apis import Api
from dpcheck.model import Evidence, Span
from dpcheck.pipelines.apis import api_of, built_by
from dpcheck.pipelines.calls import argument as argument_for
from dpcheck.pipelines.index import ProjectIndex
from dpcheck.pipelines.scope import Ctx
from dpcheck.pipelines.values import Evaluator
from dpcheck.sites.ir import IR
from dpcheck.sites.nodes import Call, Const, Name, Node, Opaque, Str, node, walk
from dpcheck.sites.views import Statement

#: Normalization codes of the version table -> divisor kinds of ``dpcheck.pipelines.divisor``.
NORMALIZATION = {"A": "realized", "EA": "expected", "FEA": "floor-expected", "none": "none"}
#: Opening of the update note when a 1.x ``poisson_sampling=False`` keeps the user's loader
#: (see ``loader_decides``).
KEPT_LOADER = "poisson_sampling=False keeps the data loader passed in"
_USAGE_ROLES = frozenset({"entry", "attach"})
#: Engine keywords whose string value decides the update (read through names: ``_resolved``).
STRING_KEYWORDS = ("loss_reduction",)
_ENGINE_ROLES = frozenset({"engine", "entry", "attach"})


@dataclass
class OpacusUsage:
    """Where the user hands training to Opacus: the entry call (its catalog entry ``api``:
    role ``entry`` for 1.x ``make_private*``, ``attach`` for 0.x) and the engine construction."""

    call: Call
    ctx: Ctx
    engine: tuple[Ctx, Call] | None
    api: Api
    #: Keywords passed a name that holds a string constant under the default configuration,
    #: as that constant (``loss_reduction=reduction`` where every caller passes an option
    #: whose default is "sum"): the value decides, not how it is spelled.
    literals: dict[str, IR] = field(default_factory=dict)

    def keyword(self, name: str) -> IR | None:
        """A keyword of the entry call, else of the engine constructor (0.x style); a name
        resolved to a string constant is that constant (``literals``)."""
        if name in self.literals:
            return self.literals[name]
        if name in self.call.kwargs:
            return self.call.kwargs[name]
        if self.engine is not None:
            _, engine = self.engine
            return engine.kwargs.get(name)
        return None


def api_major(usage: OpacusUsage) -> int:
    """The Opacus major release line the user's calls belong to: ``make_private*`` exist only
    from 1.0 on, a ``PrivacyEngine(module, ...)`` attached with ``.attach(optimizer)`` only
    before it. Code written against one API does not run on the other, so this dates it."""
    return 1 if usage.api.role == "entry" else 0


def entry_methods(index: ProjectIndex) -> frozenset[str]:
    """The method names of the engine entry points (``make_private``, ``attach``, ...)."""
    return frozenset(pattern.last for api in index.api_catalog.apis if api.role in _USAGE_ROLES
                     for pattern in api.patterns)


def engine_method(index: ProjectIndex, ctx: Ctx) -> bool:
    """Whether ``ctx`` is a method of a class that implements an Opacus engine entry point
    (``make_private``/``attach``): a local copy, fork or subclass of the engine is library code,
    reached from the user's calls, never a training entry or a private run of its own."""
    summary = index.summary(ctx.path)
    scope = summary.scopes.get(ctx.scope) if summary else None
    owner = scope.owner if scope is not None else None
    return bool(owner) and any(f"{owner}.{name}" in summary.scopes  # type: ignore[union-attr]
                               for name in entry_methods(index))


def find_usage(index: ProjectIndex, scopes: Iterable[Ctx]) -> OpacusUsage | None:
    """The first Opacus usage of ``scopes`` (``find_usages``), or None."""
    return next(iter(find_usages(index, scopes)), None)


def find_usages(index: ProjectIndex, scopes: Iterable[Ctx]) -> list[OpacusUsage]:
    """Every ``make_private*`` call of an Opacus engine in reading order, else every 0.x
    ``attach`` of one: each engine site is a private training run of its own (a sweep, or a
    second run after a first), so each anchors its own pipeline. Calls inside a local engine
    class (``engine_method``: a subclass's ``super().make_private``) are the library's."""
    entries: list[OpacusUsage] = []
    attaches: list[tuple[Ctx, Call, Api]] = []
    for where, _, found in index.calls(scopes):
        api = engine_api(index, found, where) if isinstance(found, Call) else None
        if api is None or api.role not in _USAGE_ROLES or engine_method(index, where):
            continue
        if api.role == "entry":
            entries.append(_resolved(index, OpacusUsage(found, where,
                                                        engine_of(index, found, where), api)))
        else:
            attaches.append((where, found, api))
    if entries:
        return entries
    return [_resolved(index, OpacusUsage(call, where, engine, api)) for where, call, api in attaches
            if (engine := engine_of(index, call, where)) is not None]


def _resolved(index: ProjectIndex, usage: OpacusUsage) -> OpacusUsage:
    """``usage`` with the string keywords it passes as names read as their constants."""
    evaluator = Evaluator(index)
    for ctx, call in ((usage.ctx, usage.call), *([usage.engine] if usage.engine else [])):
        for name in STRING_KEYWORDS:
            value = call.kwargs.get(name)
            if name in usage.literals or value is None or isinstance(value, Str):
                continue
            found = evaluator.literal(value, ctx)
            if found is not None and isinstance(found.value, str):
                usage.literals[name] = Str(["s", found.value])
    return usage


def engine_api(index: ProjectIndex, call: Call, ctx: Ctx) -> Api | None:
    """The engine catalog entry ``call`` is (``engine``, ``entry`` or ``attach``): by its
    qualified name, or for a project class that is an Opacus engine (``is_opacus_engine``), the
    engine's entry of the same name."""
    api = api_of(index, call, ctx, _ENGINE_ROLES)
    if api is not None:
        return api
    if call.method not in entry_methods(index):
        return None
    engine = engine_of(index, call, ctx)
    if engine is None:
        return None
    where, constructor = engine
    if not is_opacus_engine(index, constructor, where):
        return None
    return index.api_catalog.match(f"opacus.PrivacyEngine.{call.method}", _USAGE_ROLES)


def is_opacus_engine(index: ProjectIndex, call: Call, ctx: Ctx, depth: int = 0) -> bool:
    """Whether a constructor call builds an Opacus ``PrivacyEngine``: the library's (by
    qualified name), a project class deriving from one, or a fork of it (a project class with
    the engine's entry methods in a module built on Opacus imports). A project's own class that
    happens to be called ``PrivacyEngine`` is not Opacus (its code is analysed like any other)."""
    name = call.name or ""
    qualified = index.library_name(name, ctx)
    if qualified is not None:
        return index.api_catalog.match(qualified, frozenset({"engine"})) is not None
    binding = index.bind(name, ctx)
    if binding is None or binding.kind != "class" or depth > 4:
        return False
    summary = index.summary(binding.ctx.path)
    if summary is None:
        return False
    methods = entry_methods(index)
    fork = any(f"{binding.name}.{m}" in summary.scopes for m in methods) and any(
        str(target).startswith("opacus") for target in summary.imports.values())
    if fork:
        return True
    where = Ctx(binding.ctx.path, "<module>")
    return any(base and is_opacus_engine(index, Call(["call", Name(["r", base]), [], {},
                                                      [0, 0, 0, 0]]), where, depth + 1)
               for base in summary.bases(binding.name))


def engine_of(index: ProjectIndex, call: Call, ctx: Ctx) -> tuple[Ctx, Call] | None:
    """The constructor call of the engine ``call`` is a method of, and where to read it. An
    engine bound to ``A(...) if c else B(...)`` is read from its first arm (the engine built when
    the condition holds)."""
    constructed = built_by(call)
    if constructed is not None:
        return ctx, constructed
    name = call.name or ""
    receiver, _, _ = name.rpartition(".")
    binding = index.attribute(receiver, ctx) if "." in name else None
    value = binding.ir if binding is not None else None
    if isinstance(value, Opaque) and value.kind == "ifexp" and value.parts:
        value, *_ = value.parts
    if binding is not None and isinstance(value, Call):
        return binding.ctx, value
    return None


def loader_decides(usage: OpacusUsage, row: dict[str, Any]) -> bool:
    """Whether, under the release ``row``, the usage may keep the user's own loader (a 1.x
    ``poisson_sampling=`` that is not the literal ``True``): the divisor floor(N / len(loader))
    then samples nothing itself, so its data dependence rests on how the batches are drawn (the
    fixed batch size of a shuffled loader, floor(N*q) of a Poisson one) and the mechanism
    follows the sampling found; with that sampling unknown, so is the mechanism."""
    flag = usage.keyword("poisson_sampling")
    return flag is not None and not _is_constant(flag, True) and any(
        variant.get("sampling") == "shuffle" and "normalization_mean" not in variant
        and str(variant.get("when", "")).startswith("poisson_sampling")
        for variant in row.get("variants") or [])


def normalization(usage: OpacusUsage, row: dict[str, Any]) -> tuple[str, str]:
    """(divisor kind, why) for a usage under a version-table row."""
    reduction = usage.keyword("loss_reduction")
    if _is_constant(reduction, "sum"):
        return NORMALIZATION.get(row["normalization_sum"], "unknown"), (
            'loss_reduction="sum": the noisy sum is not normalized')
    if reduction is not None and not _is_constant(reduction, "mean"):
        return "unknown", "loss_reduction is not a literal dpcheck can read"
    code = row["normalization_mean"]
    for variant in row.get("variants") or []:
        when = variant.get("when", "")
        flag = "poisson_sampling" if when.startswith("poisson_sampling") else "poisson"
        given = usage.keyword(flag)
        default_case = "default" in when
        if _is_constant(given, False) or (given is None and default_case):
            if "normalization_mean" in variant:
                code = variant["normalization_mean"]
                return NORMALIZATION.get(code, "unknown"), f"opacus {row['version']}: {when}"
            if variant.get("sampling") == "shuffle" and _is_constant(given, False):
                return NORMALIZATION.get(code, "unknown"), (
                    f"{KEPT_LOADER}; opacus {row['version']} divides by floor(N/len(loader)), "
                    "the fixed batch size when that loader draws fixed-size batches")
    return NORMALIZATION.get(code, "unknown"), (
        f"opacus {row['version']} normalizes the noisy sum by "
        f"{ {'A': '|B|', 'EA': 'N*q', 'FEA': 'floor(N*q)'}.get(code, code) }")


def _is_constant(expr: IR | None, value: str | bool) -> bool:
    """Whether ``expr`` is the literal ``value`` (a string, or ``True``/``False``)."""
    if isinstance(value, bool):
        return isinstance(expr, Const) and expr.value is value
    return isinstance(expr, Str) and expr.value == value


#: Where a zero noise multiplier must come from for an engine to clip only: written in the code
#: (a literal or a module constant), not a configurable default (a ``--sigma 0`` default
#: switches DP off in the default run, and a run that sets it is still Opacus' mechanism).
FIXED_SOURCES = ("literal", "constant")


def clips_only(usage: OpacusUsage, evaluator: Evaluator) -> Evidence | None:
    """Where the engine is given a noise multiplier fixed at zero in the code, else None.

    An engine whose noise multiplier is zero adds no noise: it clips (and, in 1.x, normalizes)
    per-example gradients, but Opacus is not the mechanism the project's epsilon is about. The
    noise, and its accounting, come from the project's own code (a DP-FTRL tree aggregator,
    noise added to the clipped gradients in a project optimizer), which is analysed as a
    hand-written update; Opacus' default accountant is never assumed for it."""
    sites = [(usage.ctx, usage.call)] + ([usage.engine] if usage.engine is not None else [])
    for ctx, call in sites:
        if not isinstance(call, Call) or "noise_multiplier" not in call.kwargs:
            continue
        call_line, _, _, _ = call.position
        line = call.keyword_lines.get("noise_multiplier", call_line)
        value = evaluator.value(call.kwargs["noise_multiplier"], ctx)  # read at its statement
        if value is not None and value.value == 0 and value.source in FIXED_SOURCES:
            return Evidence("noise", Span(ctx.path, line),
                            "Opacus is given noise_multiplier=0: it only clips, the noise is "
                            "the project's own")
        return None
    return None


def never_stepped(index: ProjectIndex, usage: OpacusUsage, scopes: Iterable[Ctx]) -> bool:
    """Whether the private optimizer a ``make_private*`` call returns is bound to a plain name
    that is never stepped afterwards. Opacus clips, noises and divides only in that optimizer's
    ``step``, so such a usage makes no update (an engine built to compute an epsilon, or to
    load a checkpoint trained elsewhere): there is no update rule to judge.

    The optimizer may step wherever a method whose name says it steps (``step``,
    ``pre_step``, ``virtual_step``) is called on it, and wherever it leaves dpcheck's sight:
    returned, stored, aliased, read as an attribute, or handed to a function that is not the
    project's; handed to a project function, it may step where that function's parameter
    may. Other method calls (``zero_grad``, ``load_state_dict``) release nothing. The name is
    read in the same scope after the call (anywhere in it when the call sits in a loop), in
    the functions nested in it, and in the module's functions for a module-level call."""
    name = _returned_optimizer(index, usage)
    return name is not None and next(_private_steps(index, usage, name, scopes), None) is None


def private_steps(index: ProjectIndex, usage: OpacusUsage, scopes: Iterable[Ctx]) -> list[Ctx]:
    """The statements where the private optimizer a 1.x ``make_private*`` call returns may step
    (read as ``never_stepped`` reads them): its ``step`` calls, the calls that hand it to a
    project function together with the statements of that function where it may step, and the
    places where it leaves dpcheck's sight. Opacus clips, noises and divides in that step, so
    these statements run the private update (``dpcheck.pipelines.private_loops``); empty when
    the optimizer is not bound to a plain name."""
    name = _returned_optimizer(index, usage)
    return [] if name is None else list(_private_steps(index, usage, name, scopes))


def _private_steps(index: ProjectIndex, usage: OpacusUsage, name: str,
                   scopes: Iterable[Ctx]) -> Iterator[Ctx]:
    """Where the optimizer bound to ``name`` by the usage's call may step, in the scopes that
    see that binding."""
    here = usage.ctx
    for ctx in scopes:
        same = (ctx.path, ctx.scope) == (here.path, here.scope)
        visible = same or ctx.scope.startswith(f"{here.scope}.") or (
            here.scope == "<module>" and ctx.path == here.path)
        if visible:
            yield from _step_sites(index, name, ctx, here.line if same else None)


def _step_sites(index: ProjectIndex, name: str, ctx: Ctx, after: int | None) -> Iterator[Ctx]:
    """The statements where the optimizer held by ``name`` may step in the scope of ``ctx``;
    with ``after`` (the line of the call that binds it) only the statements after that line
    and before the name is bound anew (``_rebound``) are read, and those before it that sit
    in a loop holding that call too (they run again after it)."""
    scope = index.scope(ctx)
    if scope is None:
        return
    rebound = _rebound(scope.statements, name, after) if after is not None else None
    for stmt in scope.statements:
        if after is not None and (stmt.line == after or stmt.line >= (rebound or stmt.line + 1)
                                  or (stmt.line < after
                                      and not index.reruns_after(ctx, stmt, after))):
            continue
        where = Ctx(ctx.path, ctx.scope, stmt.line)
        if _stores_into(name, stmt.target):
            yield where
        else:
            yield from _stepped_in(index, name, stmt.expr, where)
    for line in scope.if_lines:
        yield from _stepped_in(index, name, scope.if_test(line), Ctx(ctx.path, ctx.scope, line))


def _stepped_in(index: ProjectIndex, name: str, expr: object, ctx: Ctx) -> Iterator[Ctx]:
    """Where an expression (the statement at ``ctx``) may step the optimizer ``name``: the
    statement itself, and for a hand-off to a project function the statements of that function
    where it may (``_step_sites``)."""
    if expr is None:
        return
    tree = node(expr)
    settled: set[int] = set()
    for item in walk(tree):
        if not isinstance(item, Call):
            continue
        callee = item.callee
        if isinstance(callee, Name) and callee.base == name:
            if "step" in callee.last:
                yield ctx
                return
            settled.add(id(callee))
        for argument in (*item.args, *item.kwargs.values()):
            if isinstance(argument, Name) and argument.dotted == name:
                inside = _handed_on(index, item, argument, ctx)
                if inside is None:
                    yield ctx
                    return
                if inside:
                    yield ctx
                    yield from inside
                    return
                settled.add(id(argument))
    prefix = f"{name}."
    if any(isinstance(n, Name) and id(n) not in settled
           and (n.dotted == name or n.dotted.startswith(prefix)) for n in walk(tree)):
        yield ctx


def _handed_on(index: ProjectIndex, call: Call, argument: Node, ctx: Ctx) -> list[Ctx] | None:
    """Where the optimizer may step in the project function ``call`` hands it to (as
    ``argument``); None when it may step anywhere: a function that is not the project's, or a
    parameter not found. The function is read as a question of the index's memo and cycle
    guard (``dpcheck.pipelines.questions``): a hand-off met again, or too deep, may step
    anywhere in the function (its first line stands for it)."""
    function = index.function(call.name or "", ctx)
    scope = index.scope(function) if function is not None else None
    if function is None or scope is None:
        return None
    params = [p.name for p in scope.params]
    received = next((p for p in params if argument_for(call, params, p) is argument), None)
    if received is None:
        return None
    key = ("step-sites", received, function, index.reach)
    return index.questions.ask(key, lambda: list(_step_sites(index, received, function, None)),
                               [Ctx(function.path, function.scope, scope.line)])


def _returned_optimizer(index: ProjectIndex, usage: OpacusUsage) -> str | None:
    """The plain name a 1.x ``make_private*`` call's optimizer (second item) is unpacked into."""
    if usage.api.role != "entry":
        return None
    scope = index.scope(usage.ctx)
    statement = next((s for s in scope.statements if s.line == usage.ctx.line), None) if scope else None
    target = statement.target if statement is not None and statement.kind == "assign" else None
    if not isinstance(target, list) or len(target) < 2:
        return None
    _, name, *_ = target
    return name if isinstance(name, str) and name.isidentifier() else None


def _rebound(statements: list[Statement], name: str, after: int) -> int | None:
    """The line of the first statement after line ``after`` that binds ``name`` anew whenever
    the statement at ``after`` ran (it sits in no ``if`` arm that one is not in): from there on
    the name holds another object (a second run's optimizer), whatever loop holds either."""
    binding = next((s for s in statements if s.line == after), None)
    arms = set(binding.arms) if binding is not None else set()
    return next((s.line for s in statements if s.line > after and s.kind in ("assign", "for")
                 and name in (s.target if isinstance(s.target, list) else [s.target])
                 and set(s.arms) <= arms), None)


def _stores_into(name: str, target: object) -> bool:
    """Whether a statement target stores into an attribute or item of ``name``."""
    stored = target if isinstance(target, list) else [target]
    return any(isinstance(t, str) and (t.startswith(f"{name}.") or t == f"{name}[]") for t in stored)
