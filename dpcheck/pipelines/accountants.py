"""Privacy accountants a pipeline reports epsilon with, what they assume, and their arguments.

Each recognised call maps to an ``Accountant`` name and assumption; the sample rate, step count
and noise multiplier it was given are kept as IR (with the place to read them) so the pipeline
builder can resolve them like any other parameter (DP103 compares them with the code).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from dpcheck.model import Span
from dpcheck.pipelines.index import ProjectIndex
from dpcheck.pipelines.opacus_usage import is_opacus_engine
from dpcheck.pipelines.scope import Ctx
from dpcheck.sites.ir import IR, callee_name, tail_name, walk

POISSON = "SGM+poisson"
WITHOUT_REPLACEMENT = "SGM+without-replacement"
OPACUS_NAMES = {"rdp": "opacus-rdp", "prv": "opacus-prv", "gdp": "opacus-gdp"}
#: An Opacus engine's accountant when which one is not decided (the default changed from RDP to
#: PRV in 1.3, or the choice is not a literal): every one of them assumes SGM + Poisson.
OPACUS_UNDECIDED = "opacus"
DP_ACCOUNTING = {"RdpAccountant": "dp-accounting-rdp", "PLDAccountant": "dp-accounting-pld"}
#: TF-Privacy's CLT mu-GDP accountant (``gdp_accountant``, Bu et al. 2019): the ``poisson``
#: functions assume Poisson subsampling, the ``uniform`` ones sampling without replacement; all
#: take ``(epoch, noise_multi, n, batch_size[, delta])``.
GDP_CLT = {"compute_eps_poisson": POISSON, "compute_mu_poisson": POISSON,
           "compute_eps_uniform": WITHOUT_REPLACEMENT, "compute_mu_uniform": WITHOUT_REPLACEMENT}
OPACUS_CLASSES = {"RDPAccountant": "opacus-rdp", "PRVAccountant": "opacus-prv",
                  "GaussianAccountant": "opacus-gdp"}
#: A step count of one given to an RDP computation: the RDP of a single step, to be scaled.
PER_STEP = (["n", 1], ["n", 1.0])
#: The steps of a per-step computation whose count could not be found.
UNKNOWN_STEPS: IR = ["?", "per-step"]


@dataclass
class AccountantCall:
    """A recognised accountant call; ``args`` maps q/steps/sigma/delta/N/batch_size/epochs to
    the IR the call was given and the place to read it."""

    name: str
    assumes: str
    ctx: Ctx
    call: IR
    args: dict[str, tuple[Ctx, IR]] = field(default_factory=dict)
    sources: dict[str, Span] = field(default_factory=dict)

    @classmethod
    def of(cls, name: str, assumes: str, ctx: Ctx, call: IR, args: dict[str, IR]
           ) -> AccountantCall:
        """A call whose arguments are all read at ``ctx`` and given by this call."""
        span = Span(ctx.path, *call[4])
        return cls(name, assumes, ctx, call, {k: (ctx, v) for k, v in args.items()},
                   {k: span for k in args})

    @property
    def span(self) -> Span:
        return Span(self.ctx.path, *self.call[4])


def _arg(call: IR, position: int, *keywords: str) -> IR | None:
    for key in keywords:
        if key in call[3]:
            return call[3][key]
    args = call[2]
    return args[position] if 0 <= position < len(args) else None


def _pick(call: IR, spec: dict[str, tuple[int, tuple[str, ...]]]) -> dict[str, IR]:
    found = {name: _arg(call, pos, *keys) for name, (pos, keys) in spec.items()}
    return {k: v for k, v in found.items() if v is not None}


class AccountantFinder:
    """Finds accountant calls in a set of scopes."""

    def __init__(self, index: ProjectIndex, engine_default: str | None) -> None:
        self.index = index
        self.engine_default = engine_default
        self._attached: dict[str, tuple[Ctx, str]] = {}

    def find(self, scopes: Iterable[Ctx]) -> list[AccountantCall]:
        """Accountant calls, merged per accountant (the event, the ``compose``/``step`` and the
        ``get_epsilon`` of one accountant are one ``AccountantCall``), in source order."""
        found: list[AccountantCall] = []
        calls = list(self.index.calls(scopes))
        # Opacus 0.x ``engine.attach(optimizer)`` sets ``optimizer.privacy_engine = engine``
        self._attached = {
            f"{node[2][0][1]}.privacy_engine": (where, name.rpartition(".")[0])
            for where, _, node in calls
            if (name := callee_name(node) or "").endswith(".attach") and len(node[2]) == 1
            and node[2][0][0] == "r"}
        for where, stmt, node in calls:
            call = self._classify(node, where) or self._stepping(node, where, stmt)
            if call is not None:
                if not _scaled_steps(call, stmt["e"]) and call.args.get("steps", (None, None))[1] \
                        in PER_STEP:
                    self._caller_scaled_steps(call)
                found.append(call)
        return _merge(found)

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
            statement = next((stmt["e"] for stmt in scope["stmts"] if stmt["line"] == where.line),
                             None) if scope else None
            multiplier = _multiplier(statement, node) if statement is not None else None
            found[repr(multiplier)] = (where, multiplier or UNKNOWN_STEPS)
        call.args["steps"] = found.popitem()[1] if len(found) == 1 else (call.ctx, UNKNOWN_STEPS)

    def _stepping(self, node: IR, ctx: Ctx, stmt: dict[str, Any]) -> AccountantCall | None:
        """``accountant.compose(event, count)`` (dp_accounting) and ``accountant.step(...)``
        (Opacus accountants, once per training step: the steps are the enclosing loop's)."""
        name = callee_name(node) or ""
        base, _, method = name.rpartition(".")
        if method not in ("compose", "step", "compute_epsilon") or not base:
            return None
        binding = self.index.attribute(base, ctx)
        owner = binding.ir if binding is not None and binding.ir is not None else None
        if owner is None or owner[0] != "call":
            return None
        owner_tail = tail_name(callee_name(owner))
        if method == "compose" and owner_tail in DP_ACCOUNTING:
            count = _arg(node, 1, "count")
            args = {"steps": count} if count is not None else {}
            return AccountantCall.of(DP_ACCOUNTING[owner_tail], POISSON, ctx, node, args)
        if method == "compute_epsilon" and owner_tail == "DPSGDAccountant":
            return AccountantCall.of("prv-accountant", POISSON, ctx, node, _pick(node, {
                "steps": (0, ("num_steps",)), "delta": (1, ("delta",))}))
        if method == "step" and owner_tail in OPACUS_CLASSES:
            args = _pick(node, {"sigma": (0, ("noise_multiplier",)),
                                "q": (1, ("sample_rate",))})
            loop = self.index.loop_count(ctx, stmt)
            call = AccountantCall.of(OPACUS_CLASSES[owner_tail], POISSON, ctx, node, args)
            if loop is not None:
                call.args["steps"] = loop
                call.sources["steps"] = call.span
            return call
        return None

    def _classify(self, node: IR, ctx: Ctx) -> AccountantCall | None:
        name = callee_name(node) or ""
        tail = tail_name(name)
        qualified = self.index.qualified(name, ctx.path)
        if tail in ("compute_dp_sgd_privacy", "compute_dp_sgd_privacy_lib",
                    "compute_dp_sgd_privacy_statement"):
            return AccountantCall.of("tf-privacy-rdp", POISSON, ctx, node, _pick(node, {
                "N": (0, ("n", "number_of_examples")), "batch_size": (1, ("batch_size",)),
                "sigma": (2, ("noise_multiplier",)), "epochs": (3, ("epochs", "num_epochs")),
                "delta": (4, ("delta",))}))
        if tail in GDP_CLT:
            return AccountantCall.of("tf-privacy-gdp", GDP_CLT[tail], ctx, node, _pick(node, {
                "epochs": (0, ("epoch",)), "sigma": (1, ("noise_multi",)), "N": (2, ("n",)),
                "batch_size": (3, ("batch_size",)), "delta": (4, ("delta",))}))
        if tail == "compute_rdp":
            owner = "opacus-rdp" if qualified.startswith("opacus") else "tf-privacy-rdp"
            return AccountantCall.of(owner, POISSON, ctx, node, _pick(node, {
                "q": (0, ("q", "sample_rate")), "sigma": (1, ("noise_multiplier",)),
                "steps": (2, ("steps", "num_steps"))}))
        if tail == "SelfComposedDpEvent":
            return AccountantCall.of("dp-accounting-rdp", POISSON, ctx, node, _pick(node, {
                "steps": (1, ("count",))}))
        if tail == "PoissonSampledDpEvent":
            return AccountantCall.of("dp-accounting-rdp", POISSON, ctx, node, _pick(node, {
                "q": (0, ("sampling_probability",))}))
        if tail == "SampledWithoutReplacementDpEvent":
            return AccountantCall.of("dp-accounting-rdp", WITHOUT_REPLACEMENT, ctx, node, {})
        if tail == "DPSGDAccountant" and qualified.startswith("prv_accountant"):
            return AccountantCall.of("prv-accountant", POISSON, ctx, node, _pick(node, {
                "sigma": (0, ("noise_multiplier",)), "q": (1, ("sampling_probability",))}))
        if tail == "PoissonSubsampledGaussianMechanism":
            return AccountantCall.of("prv-accountant", POISSON, ctx, node, _pick(node, {
                "q": (1, ("sampling_probability",)), "sigma": (0, ("noise_multiplier",))}))
        if qualified.startswith("autodp"):
            return AccountantCall.of("autodp", WITHOUT_REPLACEMENT, ctx, node, {})
        if tail in OPACUS_CLASSES and qualified.startswith("opacus"):
            return AccountantCall.of(OPACUS_CLASSES[tail], POISSON, ctx, node, {})
        if tail == "get_noise_multiplier" and qualified.startswith("opacus"):
            choice = node[3].get("accountant")
            accountant = OPACUS_NAMES.get(choice[1], "unknown") if choice and choice[0] == "s" \
                else "opacus-rdp"
            return AccountantCall.of(accountant, POISSON, ctx, node, _pick(node, {
                "q": (-1, ("sample_rate",)), "epochs": (-1, ("epochs",)),
                "steps": (-1, ("steps",)), "delta": (-1, ("target_delta",)),
                "target_epsilon": (-1, ("target_epsilon",))}))
        if tail in ("get_epsilon", "get_privacy_spent") and "." in name:
            return self._engine_query(name, node, ctx)
        if tail == "make_private_with_epsilon":
            return self._engine_query(name, node, ctx)
        return None

    def _engine_query(self, name: str, node: IR, ctx: Ctx) -> AccountantCall | None:
        """``privacy_engine.get_epsilon(delta)`` and friends: the engine's accountant."""
        base = name.rsplit(".", 1)[0]
        if base.endswith(".accountant"):
            base = base[: -len(".accountant")]
        built = self._constructed(base, ctx)
        if built is None:
            return None
        engine, engine_ctx = built
        engine_name = callee_name(engine) or ""
        engine_tail = tail_name(engine_name)
        delta = _pick(node, {"delta": (0, ("delta", "target_delta"))})
        if engine_tail in OPACUS_CLASSES:
            return AccountantCall.of(OPACUS_CLASSES[engine_tail], POISSON, ctx, node, delta)
        if engine_tail in DP_ACCOUNTING:
            return AccountantCall.of(DP_ACCOUNTING[engine_tail], POISSON, ctx, node, delta)
        if not is_opacus_engine(self.index, engine, engine_ctx):
            return None
        choice = engine[3].get("accountant")
        if choice is not None and choice[0] == "s" and choice[1] in OPACUS_NAMES:
            accountant = OPACUS_NAMES[choice[1]]
        elif choice is None and self.engine_default:
            accountant = self.engine_default
        else:
            accountant = OPACUS_UNDECIDED
        if node[3].get("target_delta") is not None:
            delta = {"delta": node[3]["target_delta"]}
        return AccountantCall.of(accountant, POISSON, ctx, node, delta)

    def _constructed(self, name: str, ctx: Ctx, depth: int = 0) -> tuple[IR, Ctx] | None:
        """The constructor call that built the object ``name`` reads at ``ctx``, and where to
        read it. A parameter (``train(..., privacy_engine)``) is followed to what its callers
        pass, when they all pass the same object; ``optimizer.privacy_engine`` to the engine
        attached to that optimizer."""
        if name in self._attached and depth == 0:
            return self._constructed(self._attached[name][1], self._attached[name][0], 1)
        binding = self.index.attribute(name, ctx)
        if binding is None or depth > 4:
            return None
        if binding.kind == "param" and binding.ir is None:
            built: dict[str | None, tuple[IR, Ctx] | None] = {}
            for where, arg in self.index.arguments(binding):
                found = self._constructed(arg[1], where, depth + 1) if arg[0] == "r" else None
                built[repr(found[0]) if found else None] = found
            return next(iter(built.values())) if len(built) == 1 else None
        if binding.ir is None or binding.ir[0] != "call" or binding.index:
            return None
        return binding.ir, replace(binding.ctx, line=binding.line)


def _scaled_steps(call: AccountantCall, statement: IR) -> bool:
    """``compute_rdp(q, sigma, 1, orders) * steps``: the RDP of one step times a count, so the
    steps are the multiplier, not the literal given to the call. Whether it was so."""
    multiplier = _multiplier(statement, call.call)
    if multiplier is not None:
        call.args["steps"] = (call.ctx, multiplier)
    return multiplier is not None


def _multiplier(statement: IR, call: IR) -> IR | None:
    """``k`` of a product ``call * k`` or ``k * call`` in ``statement``, else None."""
    for node in walk(statement):
        if node[0] == "b" and node[1] == "*" and call in (node[2], node[3]):
            return node[3] if node[2] == call else node[2]
    return None


def _family(name: str) -> str:
    return name.rsplit("-", 1)[0] if name.startswith(("dp-accounting", "opacus")) else name


def _merge(calls: list[AccountantCall]) -> list[AccountantCall]:
    """One call per accountant family; the most specific name and assumption win, arguments
    are united (first seen wins), the anchor is the first call."""
    merged: dict[str, AccountantCall] = {}
    for call in calls:
        family = _family(call.name)
        first = merged.get(family)
        if first is None:
            merged[family] = AccountantCall(call.name, call.assumes, call.ctx, call.call,
                                            dict(call.args), dict(call.sources))
            continue
        for key, value in call.args.items():
            if key not in first.args:
                first.args[key] = value
                first.sources[key] = call.sources.get(key, call.span)
        if call.assumes != POISSON and call.assumes != "unknown":
            first.assumes = call.assumes
        if call.name in DP_ACCOUNTING.values() and call.name != "dp-accounting-rdp":
            first.name = call.name
    return list(merged.values())
