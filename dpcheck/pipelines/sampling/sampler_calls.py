"""Which sampler-table API a call invokes (``dpcheck/data/samplers.json``) and which kind its
switch selects: the lookups every reader of batch formation (loaders, index draws, tf.data
chains) shares."""

from __future__ import annotations

from dpcheck.pipelines.index import ProjectIndex
from dpcheck.pipelines.scope import Ctx
from dpcheck.pipelines.values import Evaluator
from dpcheck.samplers import SamplerApi, sampler_table
from dpcheck.sites.nodes import Call, Node


class SamplerCalls:
    """Sampler-table lookups for the calls of one project (``index``)."""

    def __init__(self, index: ProjectIndex) -> None:
        self.index = index

    def api_of(self, call: Node, ctx: Ctx) -> SamplerApi | None:
        """The sampler-table API ``call`` invokes: by the callee's import-qualified name, or for
        a method on a name bound to a random generator (``rng = np.random.default_rng()``) or
        to a batch-selection object, by the type it was built from."""
        name = call.name if isinstance(call, Call) else None
        if not name:
            return None
        table = sampler_table()
        found = table.api(self.index.qualified(name, ctx.path))
        receiver, _, method = name.rpartition(".")
        if found is not None or not receiver:
            return found
        binding = self.index.attribute(receiver, ctx)
        if binding is None or binding.ir is None or binding.index \
                or not isinstance(binding.ir, Call) or binding.kind != "assign":
            return None
        built = self.index.qualified(binding.ir.name or "", binding.ctx.path)
        made = table.generator_type(built)
        if made is not None:
            return table.api(f"{made}.{method}")
        strategy = table.api(built)
        return strategy if strategy is not None and strategy.method == method else None

    def selected(self, api: SamplerApi, call: Call, ctx: Ctx) -> str:
        """The kind ``call`` selects: its switch argument's literal value (keyword, or the
        positional argument at the switch's position), the default when absent."""
        switch = api.switch
        if switch is None:
            return api.kind_for("default")
        value = call.kwargs.get(switch.keyword)
        if value is None and len(call.args) > switch.position:
            value = call.args[switch.position]
        return api.kind_for("default" if value is None else self.flag(value, ctx))

    def sampler_kind(self, call: Call, ctx: Ctx) -> str | None:
        """The kind of batches the library sampler ``call`` (read at ``ctx``) makes, by its
        import-qualified name and switch; None for anything that is not a table sampler."""
        api = self.api_of(call, ctx)
        return self.selected(api, call, ctx) if api is not None and api.role == "sampler" \
            else None

    def flag(self, expr: Node, ctx: Ctx) -> bool | None:
        """The boolean constant ``expr`` holds under the default configuration (a literal, a
        name bound to one, an option default: ``type=`` only parses command-line strings, the
        default is used as written), as the value evaluator reads it; None when not decided."""
        found = Evaluator(self.index).literal(expr, ctx)
        return found.value if found is not None and isinstance(found.value, bool) else None
