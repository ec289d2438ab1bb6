"""The user's calls into Opacus (1.x ``make_private*``, 0.x ``PrivacyEngine(...).attach``) and the
normalization they get from the release the project runs."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from dpcheck.model import Evidence, Span
from dpcheck.pipelines.index import ProjectIndex
from dpcheck.pipelines.scope import Ctx
from dpcheck.pipelines.values import Evaluator
from dpcheck.sites.ir import IR, callee_name, tail_name
from dpcheck.sites.nodes import Call

ENTRY_CALLS = frozenset({"make_private", "make_private_with_epsilon"})
#: Normalization codes of the version table -> divisor kinds of ``dpcheck.pipelines.divisor``.
NORMALIZATION = {"A": "realized", "EA": "expected", "FEA": "floor-expected", "none": "none"}
#: Opening of the update note when a 1.x ``poisson_sampling=False`` keeps the user's loader
#: (see ``loader_decides``).
KEPT_LOADER = "poisson_sampling=False keeps the data loader passed in"


@dataclass
class OpacusUsage:
    """Where the user hands training to Opacus: the entry call and the engine construction."""

    call: IR
    ctx: Ctx
    engine: tuple[Ctx, IR] | None

    def keyword(self, name: str) -> IR | None:
        """A keyword of the entry call, else of the engine constructor (0.x style)."""
        if name in self.call[3]:
            return self.call[3][name]
        if self.engine is not None:
            return self.engine[1][3].get(name)
        return None


def api_major(usage: OpacusUsage) -> int:
    """The Opacus major release line the user's calls belong to: ``make_private*`` exist only
    from 1.0 on, a ``PrivacyEngine(module, ...)`` attached with ``.attach(optimizer)`` only
    before it. Code written against one API does not run on the other, so this dates it."""
    return 1 if tail_name(callee_name(usage.call)) in ENTRY_CALLS else 0


def find_usage(index: ProjectIndex, scopes: Iterable[Ctx]) -> OpacusUsage | None:
    """The first ``make_private*`` call, else a 0.x ``attach`` of a ``PrivacyEngine``."""
    engines: list[tuple[Ctx, IR]] = []
    attaches: list[tuple[Ctx, IR]] = []
    for where, _, node in index.calls(scopes):
        tail = tail_name(callee_name(node))
        if tail in ENTRY_CALLS and not _foreign_module_function(index, node, where):
            engine = _engine_of(index, node, where)
            if engine is None or is_opacus_engine(index, engine[1], engine[0]):
                return OpacusUsage(node, where, engine)
        if tail == "PrivacyEngine" and is_opacus_engine(index, node, where):
            engines.append((where, node))
        elif tail == "attach":
            attaches.append((where, node))
    if engines and attaches:
        ctx, call = attaches[0]
        return OpacusUsage(call, ctx, engines[0])
    return None


def is_opacus_engine(index: ProjectIndex, call: IR, ctx: Ctx, depth: int = 0) -> bool:
    """Whether a constructor call builds an Opacus ``PrivacyEngine``: imported from outside
    the project, a project class deriving from one, or a fork of it (a project class with
    ``make_private*`` in a module built on Opacus imports). A project's own class that happens to
    be called ``PrivacyEngine`` is not Opacus (its code is analysed like any other)."""
    name = callee_name(call) or ""
    binding = index.bind(name, ctx)
    if binding is None or binding.kind == "module":
        return tail_name(name) == "PrivacyEngine"
    if binding.kind != "class" or depth > 4:
        return False
    summary = index.summary(binding.ctx.path)
    if summary is None:
        return False
    fork = any(f"{binding.name}.{m}" in summary["scopes"] for m in ENTRY_CALLS) and any(
        str(target).startswith("opacus") for target in summary["imports"].values())
    if fork:
        return True
    bases = summary["classes"][binding.name]["bases"]
    where = Ctx(binding.ctx.path, "<module>")
    return any(base and is_opacus_engine(index, ["call", ["r", base], [], {}], where, depth + 1)
               for base in bases)


def _foreign_module_function(index: ProjectIndex, call: IR, ctx: Ctx) -> bool:
    """Whether the call is a function of an imported module that is not Opacus
    (``jax_privacy.keras_api.make_private``): the same name, another library's API."""
    name = callee_name(call) or ""
    if "." not in name:
        return False
    binding = index.bind(name.rsplit(".", 1)[0], ctx)
    return binding is not None and binding.kind == "module" and \
        binding.name.split(".")[0] != "opacus"


def _engine_of(index: ProjectIndex, call: IR, ctx: Ctx) -> tuple[Ctx, IR] | None:
    name = callee_name(call) or ""
    binding = index.attribute(name.rsplit(".", 1)[0], ctx) if "." in name else None
    if binding is not None and binding.ir is not None and binding.ir[0] == "call":
        return binding.ctx, binding.ir
    return None


def loader_decides(usage: OpacusUsage, row: dict[str, Any]) -> bool:
    """Whether, under the release ``row``, the usage may keep the user's own loader (a 1.x
    ``poisson_sampling=`` that is not the literal ``True``): the divisor floor(N / len(loader))
    then samples nothing itself, so its data dependence rests on how the batches are drawn (the
    fixed batch size of a shuffled loader, floor(N*q) of a Poisson one) and the mechanism
    follows the sampling found; with that sampling unknown, so is the mechanism."""
    flag = usage.keyword("poisson_sampling")
    return flag not in (None, ["c", True]) and any(
        variant.get("sampling") == "shuffle" and "normalization_mean" not in variant
        and str(variant.get("when", "")).startswith("poisson_sampling")
        for variant in row.get("variants") or [])


def normalization(usage: OpacusUsage, row: dict[str, Any]) -> tuple[str, str]:
    """(divisor kind, why) for a usage under a version-table row."""
    reduction = usage.keyword("loss_reduction")
    if reduction == ["s", "sum"]:
        return NORMALIZATION.get(row["normalization_sum"], "unknown"), (
            'loss_reduction="sum": the noisy sum is not normalized')
    if reduction not in (None, ["s", "mean"]):
        return "unknown", "loss_reduction is not a literal dpcheck can read"
    code = row["normalization_mean"]
    for variant in row.get("variants") or []:
        when = variant.get("when", "")
        flag = "poisson_sampling" if when.startswith("poisson_sampling") else "poisson"
        given = usage.keyword(flag)
        default_case = "default" in when
        if (given == ["c", False]) or (given is None and default_case):
            if "normalization_mean" in variant:
                code = variant["normalization_mean"]
                return NORMALIZATION.get(code, "unknown"), f"opacus {row['version']}: {when}"
            if variant.get("sampling") == "shuffle" and given == ["c", False]:
                return NORMALIZATION.get(code, "unknown"), (
                    f"{KEPT_LOADER}; opacus {row['version']} divides by floor(N/len(loader)), "
                    "the fixed batch size when that loader draws fixed-size batches")
    return NORMALIZATION.get(code, "unknown"), (
        f"opacus {row['version']} normalizes the noisy sum by "
        f"{ {'A': '|B|', 'EA': 'N*q', 'FEA': 'floor(N*q)'}.get(code, code) }")


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
        line = call.keyword_lines.get("noise_multiplier", call.position[0])
        value = evaluator.value(call.kwargs["noise_multiplier"], ctx)  # read at its statement
        if value is not None and value.value == 0 and value.source in FIXED_SOURCES:
            return Evidence("noise", Span(ctx.path, line),
                            "Opacus is given noise_multiplier=0: it only clips, the noise is "
                            "the project's own")
        return None
    return None
