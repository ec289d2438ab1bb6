"""Privacy accountants a pipeline reports epsilon with, what they assume, and their arguments.

Accountant APIs are the entries of the accountant catalog (``dpcheck/data/accountants.toml``,
schema and matching rule in ``dpcheck.catalog.apis``), matched on the callee's import-qualified
name (``dpcheck.pipelines.apis``), vendored copies of a library included. Each recognised call
gives an accountant name and assumption and keeps the IR of the sample rate, step count, noise
multiplier, dataset size, batch size, epochs and delta it was given, with the place to read
them, so the pipeline builder resolves them like any other parameter (DP103 compares them with
the code). A per-step call (``RDPAccountant.step``) counts the steps of the loop around it; an
object's query (``engine.get_epsilon``) reports the accountant of the object's constructor.

**Which accountant calls belong to a pipeline.**

1. *Reached through calls.* Every accountant call in the scopes the pipeline's entry reaches
   through project calls: a vendored ``compute_rdp`` behind a project ``get_sigma`` /
   ``loop_for_sigma`` search, a privacy tracker class whose methods the loop calls, a one-line
   wrapper. The arguments of a call inside a helper are read through the helper's callers.
2. *Hooks of objects a library runs.* A project class deriving from a library class (a Hugging
   Face ``TrainerCallback``, a Keras ``Callback``) has its methods called by the library's
   training loop, never by project code. When the pipeline's reach builds an instance of such a
   class, the accountant calls in its methods (``RDPAccountant.step`` in ``on_step_end``) are
   the pipeline's.
3. *Library internals are not calls of the user.* Calls made inside a vendored copy's library
   functions (the copy's ``compute_rdp`` calling its ``_compute_rdp``) are not classified again:
   the user's call of the copied API is.

Calls of one accountant (its constructor, events, ``compose``/``step`` and queries) are merged
into one ``AccountantCall`` per accountant family.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace

from dpcheck.catalog.apis import ACCOUNTANT_ROLES, ENGINE_DEFAULT, Api, Choice
from dpcheck.model import Assumption, Span
from dpcheck.pipelines.apis import api_of
from dpcheck.pipelines.index import ProjectIndex
from dpcheck.pipelines.opacus_usage import engine_api, engine_of, is_opacus_engine
from dpcheck.pipelines.scope import Ctx
from dpcheck.sites.ir import IR, tail_name, walk
from dpcheck.sites.nodes import BinOp, Call, Const, Name, Node, Str
from dpcheck.sites.views import Statement

POISSON = Assumption.SGM_POISSON.value
#: An Opacus engine's accountant when which one is not decided (the default changed from RDP to
#: PRV in 1.3, or the choice is not a literal): every one of them assumes SGM + Poisson.
OPACUS_UNDECIDED = "opacus"
#: A step count of one given to an RDP computation: the RDP of a single step, to be scaled.
PER_STEP = (["n", 1], ["n", 1.0])
#: The steps of a per-step computation whose count could not be found.
UNKNOWN_STEPS: IR = ["?", "per-step"]
#: Which calls name the accountant when calls of one family are merged (lowest first): the
#: object's constructor, then a call that states its accountant, then composition and events
#: (whose accountant is the family's default until a constructor says otherwise).
_NAMING_RANK = {"constructor": 0, "engine": 0, "calibration": 1, "compute": 1, "step": 1,
                "query": 1, "compose": 2, "event": 3}
_CONSTRUCTORS = frozenset({"constructor", "engine"})


@dataclass
class AccountantCall:
    """A recognised accountant call; ``args`` maps q/steps/sigma/delta/N/batch_size/epochs/
    target_epsilon to the IR the call was given and the place to read it. ``assumes`` is the
    assumption the call states (None: it states none; after merging, the accountant's)."""

    name: str
    assumes: str | None
    ctx: Ctx
    call: Call
    args: dict[str, tuple[Ctx, IR]] = field(default_factory=dict)
    sources: dict[str, Span] = field(default_factory=dict)
    role: str = "compute"

    @classmethod
    def of(cls, name: str, assumes: str | None, ctx: Ctx, call: Call, args: dict[str, IR],
           role: str = "compute") -> AccountantCall:
        """A call whose arguments are all read at ``ctx`` and given by this call."""
        span = Span(ctx.path, *call.position)
        return cls(name, assumes, ctx, call, {k: (ctx, v) for k, v in args.items()},
                   {k: span for k in args}, role)

    @property
    def span(self) -> Span:
        return Span(self.ctx.path, *self.call.position)


class AccountantFinder:
    """Finds accountant calls in a set of scopes."""

    def __init__(self, index: ProjectIndex, engine_default: str | None) -> None:
        self.index = index
        self.engine_default = engine_default
        self.catalog = index.api_catalog
        self._attached: dict[str, tuple[Ctx, Call]] = {}

    def find(self, scopes: Iterable[Ctx]) -> list[AccountantCall]:
        """Accountant calls, merged per accountant family (the event, the ``compose``/``step``
        and the ``get_epsilon`` of one accountant are one ``AccountantCall``), in source
        order."""
        scopes = list(scopes)
        calls = list(self.index.calls(scopes))
        calls.extend(self.index.calls(list(self._hooks(calls, scopes))))
        internal: dict[tuple[str, str], bool] = {}
        calls = [(where, stmt, node) for where, stmt, node in calls
                 if not internal.setdefault((where.path, where.scope), self.index.copied_name(
                     where.path, where.scope) is not None)]
        # Opacus 0.x ``engine.attach(optimizer)`` sets ``optimizer.privacy_engine = engine``
        attach = frozenset(pattern.last for api in self.catalog.apis if api.role == "attach"
                           for pattern in api.patterns)
        self._attached = {}
        for where, _, node in calls:
            attached = node.argument(0) if isinstance(node, Call) and len(node.args) == 1 \
                else None
            if isinstance(node, Call) and node.method in attach and isinstance(attached, Name):
                api = engine_api(self.index, node, where)
                engine = engine_of(self.index, node, where) \
                    if api is not None and api.role == "attach" else None
                if engine is not None:
                    self._attached[f"{attached.dotted}.privacy_engine"] = engine
        found: list[AccountantCall] = []
        for where, stmt, node in calls:
            call = self._classify(node, where, stmt)
            if call is None:
                continue
            _, steps = call.args.get("steps", (None, None))
            if steps in PER_STEP and not _scaled_steps(call, stmt.expr):
                self._caller_scaled_steps(call)
            found.append(call)
        return _merge(found, self.catalog.family, self.catalog.default_assumption)

    def _hooks(self, calls: list[tuple[Ctx, Statement, IR]], scopes: list[Ctx]
               ) -> Iterator[Ctx]:
        """The methods of the project classes deriving from a library class that ``calls`` (of
        ``scopes``) build an instance of (principle 2 of the module docstring)."""
        seen = {(c.path, c.scope) for c in scopes}
        candidates = self._hook_classes()
        for where, _, node in calls:
            if not isinstance(node, Call) or node.method not in candidates or not node.name:
                continue
            built = self.index.function(node.name, where)
            if built is None or not built.scope.endswith(".__init__"):
                continue
            cls, _, _ = built.scope.rpartition(".")
            summary = self.index.summary(built.path)
            if summary is None or cls not in summary.classes or not self._library_derived(
                    built.path, cls):
                continue
            for qual, scope in summary.scopes.items():
                if scope.owner == cls and qual != cls and (built.path, qual) not in seen:
                    seen.add((built.path, qual))
                    yield Ctx(built.path, qual)

    def _hook_classes(self) -> frozenset[str]:
        """The names of the project classes (in the indexed files) deriving from a library
        class: only a call by one of these names may build an object whose methods a library
        runs (each is still resolved to its class). Computed once per linking run."""
        shared = self.index.shared
        if shared.hook_classes is None:
            shared.hook_classes = frozenset(
                tail_name(cls) for path in self.index.indexed_paths()
                if (summary := self.index.summary(path)) is not None
                for cls in summary.classes if self._library_derived(path, cls))
        return shared.hook_classes

    def _library_derived(self, path: str, cls: str) -> bool:
        summary = self.index.summary(path)
        where = Ctx(path, "<module>")
        return summary is not None and any(
            base and self.index.library_name(base, where) is not None
            for base in summary.bases(cls))

    def _classify(self, node: IR, ctx: Ctx, stmt: Statement) -> AccountantCall | None:
        """The accountant call ``node`` is, if it is one."""
        if not isinstance(node, Call):
            return None
        api = self._api(node, ctx)
        if api is None:
            return None
        name, assumes = self._accountant(api, node, ctx)
        if name is None:
            return None
        call = AccountantCall.of(name, assumes, ctx, node, api.read(node), api.role)
        if api.role == "step":
            loop = self._steps_per_accountant(ctx, stmt, node) if stmt.loop >= 0 \
                else self._caller_loop(Ctx(ctx.path, ctx.scope))
            if loop is not None:
                call.args["steps"] = loop
                call.sources["steps"] = call.span
        return call

    def _steps_per_accountant(self, ctx: Ctx, stmt: Statement, node: Call) -> tuple[Ctx, IR] | None:
        """How often a per-step call runs for one accountant: the count of the loops around it
        (epochs x steps per epoch), leaving out the loops that also hold the accountant's
        latest construction before it (a sweep that builds one accountant per trial)."""
        scope = self.index.scope(ctx)
        if scope is None:
            return None
        owner, _, _ = (node.name or "").rpartition(".")
        made = next((s for s in reversed(scope.statements)
                     if s.kind == "assign" and s.target == owner and s.line < stmt.line), None)
        return self.index.iterations(ctx, stmt, made)

    def _caller_loop(self, helper: Ctx) -> tuple[Ctx, IR] | None:
        """The steps of a per-step call made once by a helper outside any loop of its own
        (``train_step`` accumulating one step's RDP): the count of the loop its callers call
        it in, when they all agree; None otherwise."""
        if helper.scope == "<module>":
            return None
        counts: dict[str, tuple[Ctx, IR] | None] = {}
        for where, _ in self.index.in_reach(list(self.index.call_sites(helper))):
            scope = self.index.scope(where)
            stmt = next((s for s in scope.statements if s.line == where.line), None) \
                if scope else None
            count = self.index.loop_count(where, stmt) if stmt is not None else None
            _, counted = count if count is not None else (None, None)
            counts[repr(counted) if count else "None"] = count
        return next(iter(counts.values())) if len(counts) == 1 else None

    def _api(self, node: Call, ctx: Ctx) -> Api | None:
        """The accountant entry of the catalog ``node`` is: by its qualified name, or for a
        method of ``optimizer.privacy_engine`` (0.x), the attached engine's."""
        name = node.name or ""
        base, _, method = name.rpartition(".")
        if base in self._attached:
            where, engine = self._attached[base]
            qualified = self.index.library_name(engine.name or "", where)
            return self.catalog.match(f"{qualified}.{method}" if qualified else None,
                                      ACCOUNTANT_ROLES)
        return api_of(self.index, node, ctx, ACCOUNTANT_ROLES) \
            or self._project_engine_method(name, ctx)

    def _project_engine_method(self, name: str, ctx: Ctx) -> Api | None:
        """A method of an Opacus engine that is a project class (a subclass overriding it, a
        fork, Opacus' own source scanned as a project): the engine's entry of the same name
        (``engine.accountant.get_epsilon``)."""
        base, _, method = name.rpartition(".")
        if method not in self.catalog.tails:
            return None
        for owner in (base, base.removesuffix(".accountant")):
            built = self._constructed(owner, ctx) if owner else None
            if built is not None and is_opacus_engine(self.index, *built):
                return self.catalog.match(f"opacus.PrivacyEngine.{name[len(owner) + 1:]}",
                                          ACCOUNTANT_ROLES)
        return None

    def _accountant(self, api: Api, call: Call, ctx: Ctx) -> tuple[str | None, str | None]:
        """(accountant name, stated assumption) of a matched call: chosen by an argument, given
        as an accountant class, stated by the entry, or that of the object it is called on."""
        name, assumes = api.accountant, api.assumes
        if api.choice is not None:
            chosen, chosen_assumes = self._choose(api.choice, call, ctx)
            name, assumes = chosen or name, chosen_assumes or assumes
        elif api.accountant_arg is not None:
            given = api.accountant_arg.read(call)
            name = (self._given(given, ctx) if given is not None else None) or name
        elif name is None:
            return self._receiver(call, ctx)
        if name == ENGINE_DEFAULT:
            name = self.engine_default or OPACUS_UNDECIDED
        return name, assumes

    def _choose(self, choice: Choice, call: Call, ctx: Ctx) -> tuple[str | None, str | None]:
        """What the choosing argument of ``call`` picks (``Choice``): a literal, a name bound to
        a literal (an option's default), or a library object named by its last component."""
        given = choice.argument.read(call)
        key: str | None = None
        if isinstance(given, Str):
            key = given.value
        elif isinstance(given, Const):
            key = str(given.value)
        elif isinstance(given, (Name, Call)):
            bound = self.index.attribute(given.dotted, ctx) if isinstance(given, Name) else None
            if bound is not None and not bound.index and isinstance(bound.ir, (Str, Const)):
                key = str(bound.ir.value)
            else:
                dotted = given.dotted if isinstance(given, Name) else given.name
                qualified = self.index.library_name(dotted, ctx) if dotted else None
                key = tail_name(qualified).removesuffix("()") if qualified else None
        return choice.pick(key, given is not None)

    def _given(self, given: Node, ctx: Ctx) -> str | None:
        """The accountant of an accountant class passed as an argument (``PLDAccountant``, or
        inside ``functools.partial(...)``)."""
        for part in walk(given):
            if isinstance(part, Name):
                constructor = self.catalog.match(self.index.library_name(part.dotted, ctx),
                                                 frozenset({"constructor"}))
                if constructor is not None and constructor.accountant is not None:
                    return constructor.accountant
        return None

    def _receiver(self, call: Call, ctx: Ctx) -> tuple[str | None, str | None]:
        """The accountant of the object a method is called on: the catalog entry of the call
        that constructed it (``PrivacyEngine(accountant="gdp")``, ``RDPAccountant()``)."""
        base, _, _ = (call.name or "").rpartition(".")
        for owner in (base, base.removesuffix(".accountant")):
            built = self._constructed(owner, ctx) if owner else None
            if built is None:
                continue
            constructor, where = built
            api = self._constructor_api(constructor, where)
            if api is not None:
                return self._accountant(api, constructor, where)
        return None, None

    def _constructor_api(self, constructor: Call, where: Ctx) -> Api | None:
        api = api_of(self.index, constructor, where, _CONSTRUCTORS)
        if api is not None:
            return api
        if is_opacus_engine(self.index, constructor, where):
            return self.catalog.match("opacus.PrivacyEngine", frozenset({"engine"}))
        return None

    def _constructed(self, name: str, ctx: Ctx, depth: int = 0) -> tuple[Call, Ctx] | None:
        """The constructor call that built the object ``name`` reads at ``ctx``, and where to
        read it. A parameter (``train(..., privacy_engine)``) is followed to what its callers
        pass, when they all pass the same object; ``optimizer.privacy_engine`` to the engine
        attached to that optimizer."""
        if name in self._attached and depth == 0:
            where, engine = self._attached[name]
            return engine, where
        binding = self.index.attribute(name, ctx)
        if binding is None or depth > 4:
            return None
        if binding.kind == "param" and binding.ir is None:
            built: dict[str | None, tuple[Call, Ctx] | None] = {}
            for where, arg in self.index.arguments(binding):
                found = self._constructed(arg.dotted, where, depth + 1) \
                    if isinstance(arg, Name) else None
                constructor, _ = found if found is not None else (None, None)
                built[repr(constructor) if found else None] = found
            return next(iter(built.values())) if len(built) == 1 else None
        if not isinstance(binding.ir, Call) or binding.index:
            return None
        return binding.ir, replace(binding.ctx, line=binding.line)

    def _caller_scaled_steps(self, call: AccountantCall) -> None:
        """The steps of a per-step accountant call (``compute_rdp(q, sigma, 1, orders)``) inside
        a helper: the multiplier its callers scale the helper's result by
        (``get_rdp(q, sigma) * engine.steps``) when they all agree, else unresolved (the
        literal 1 is one step's RDP, never the count)."""
        helper = Ctx(call.ctx.path, call.ctx.scope)
        found: dict[str, tuple[Ctx, IR]] = {}
        sites = self.index.in_reach(list(self.index.call_sites(helper))) \
            if helper.scope != "<module>" else []
        for where, node in sites:
            scope = self.index.scope(where)
            statement = next((stmt.expr for stmt in scope.statements if stmt.line == where.line),
                             None) if scope else None
            multiplier = _multiplier(statement, node) if statement is not None else None
            found[repr(multiplier)] = (where, multiplier or UNKNOWN_STEPS)
        _, agreed = found.popitem() if len(found) == 1 else (None, (call.ctx, UNKNOWN_STEPS))
        call.args["steps"] = agreed


def _scaled_steps(call: AccountantCall, statement: IR) -> bool:
    """``compute_rdp(q, sigma, 1, orders) * steps``: the RDP of one step times a count, so the
    steps are the multiplier, not the literal 1 given to the call. Whether it was so. (A call
    given its real step count and multiplied, ``compute_rdp(q, s, T, orders) * 2``, scales the
    sensitivity, not the steps: only a per-step call is read so.)"""
    multiplier = _multiplier(statement, call.call)
    if multiplier is not None:
        call.args["steps"] = (call.ctx, multiplier)
    return multiplier is not None


def _multiplier(statement: IR, call: IR) -> IR | None:
    """``k`` of a product ``call * k`` or ``k * call`` in ``statement``, else None."""
    for node in walk(statement):
        if isinstance(node, BinOp) and node.op == "*" and call in (node.left, node.right):
            return node.right if node.left == call else node.left
    return None


def _merge(calls: list[AccountantCall], family: Callable[[str], str],
           default: Callable[[str], str]) -> list[AccountantCall]:
    """One call per accountant family: the name comes from the call that decides it best
    (``_NAMING_RANK``), the assumption from the first call stating one other than Poisson
    sampling, else Poisson if a call states it, else the accountant's default; arguments are
    united (first seen wins); the anchor is the first call."""
    groups: dict[str, list[AccountantCall]] = {}
    for call in calls:
        groups.setdefault(family(call.name), []).append(call)
    merged = []
    for group in groups.values():
        first, *_ = group
        named = min(group, key=lambda c: _NAMING_RANK.get(c.role, 1))
        stated = [c.assumes for c in group if c.assumes is not None]
        assumes = next((a for a in stated if a != POISSON), POISSON if stated else None)
        result = AccountantCall(named.name, assumes or default(named.name), first.ctx,
                                first.call, {}, {}, first.role)
        for call in group:
            for key, value in call.args.items():
                if key not in result.args:
                    result.args[key] = value
                    result.sources[key] = call.sources.get(key, call.span)
        merged.append(result)
    return merged
