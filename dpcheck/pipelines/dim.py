"""``dim``: the trainable parameter count of the model, from literal layer sizes.

Counts ``nn.Linear``, ``nn.Conv1d/2d``, ``nn.Embedding``, normalisation layers, parameter-free
layers, ``nn.Sequential``, project ``nn.Module`` subclasses whose ``__init__`` assigns layers
to ``self``, torchvision models built by name (published counts shipped as data) and Keras
``Sequential([...])`` models with a literal input shape (``keras_dim``). Any layer it does not
know, or a size it cannot resolve, makes the count unknown (None): a partial count would be a
wrong number.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from functools import lru_cache
from importlib import resources

from dpcheck.model import ParamValue, Span
from dpcheck.pipelines.index import ProjectIndex
from dpcheck.pipelines.keras_dim import keras_sequential_size
from dpcheck.pipelines.scope import Ctx
from dpcheck.pipelines.values import Evaluator
from dpcheck.sites.ir import IR
from dpcheck.sites.nodes import Attr, Call, Const, Name, Node, Seq

PARAMETER_FREE = frozenset({
    "ReLU", "ReLU6", "LeakyReLU", "GELU", "Tanh", "Sigmoid", "ELU", "SiLU", "Softmax",
    "LogSoftmax", "Dropout", "Dropout2d", "MaxPool1d", "MaxPool2d", "AvgPool1d", "AvgPool2d",
    "AdaptiveAvgPool2d", "AdaptiveMaxPool2d", "Flatten", "Identity", "Unflatten",
})
MODULE_BASES = ("Module", "nn.Module", "torch.nn.Module")


@lru_cache(maxsize=1)
def torchvision_models() -> dict[str, dict[str, int]]:
    """The shipped table of torchvision model parameter counts
    (``dpcheck/data/torchvision_models.json``)."""
    text = resources.files("dpcheck.data").joinpath("torchvision_models.json").read_text("utf-8")
    models: dict[str, dict[str, int]] = json.loads(text)["models"]
    return models


class _Unknown(Exception):
    """A layer or size that cannot be counted."""


class _Counter:
    def __init__(self, index: ProjectIndex) -> None:
        self.index = index
        self.values = Evaluator(index)

    def _int(self, ir: IR | None, ctx: Ctx) -> int:
        value = self.values.value(ir, ctx) if ir is not None else None
        if value is None or float(value.value) != int(value.value):
            raise _Unknown
        return int(value.value)

    def _maybe_int(self, ir: IR, ctx: Ctx) -> int | None:
        try:
            return self._int(ir, ctx)
        except _Unknown:
            return None

    def _arg(self, call: Call, position: int, keyword: str, ctx: Ctx, default: int | None = None
             ) -> int:
        given = call.argument(position, keyword)
        if given is not None:
            return self._int(given, ctx)
        if default is None:
            raise _Unknown
        return default

    def _flag(self, call: Call, position: int, keyword: str, ctx: Ctx) -> bool:
        given = call.argument(position, keyword)
        if given is None or isinstance(given, Const) and given.value is True:
            return True
        if isinstance(given, Const) and given.value is False:
            return False
        raise _Unknown

    def _kernel(self, call: Call, ctx: Ctx, dims: int) -> int:
        given = call.argument(2, "kernel_size")
        if given is None:
            raise _Unknown
        if isinstance(given, Seq):
            return math.prod(self._int(e, ctx) for e in given.items)
        return self._int(given, ctx) ** dims

    def layer(self, call: Call, ctx: Ctx) -> int:
        name = call.name or ""
        tail = call.method
        if tail in PARAMETER_FREE:
            return 0
        if tail in ("to", "cuda", "float", "double") and isinstance(call.callee, Attr):
            return self.layer(self._call(call.callee.base, ctx), ctx)
        if tail == "Linear":
            fan_in, fan_out = self._arg(call, 0, "in_features", ctx), self._arg(
                call, 1, "out_features", ctx)
            return fan_in * fan_out + (fan_out if self._flag(call, 2, "bias", ctx) else 0)
        if tail in ("Conv1d", "Conv2d", "Conv3d"):
            dims = int(tail.removeprefix("Conv").removesuffix("d"))
            cin, cout = self._arg(call, 0, "in_channels", ctx), self._arg(
                call, 1, "out_channels", ctx)
            groups = self._arg(call, 99, "groups", ctx, 1)
            weights = cin // groups * cout * self._kernel(call, ctx, dims)
            return weights + (cout if self._flag(call, 99, "bias", ctx) else 0)
        if tail == "Embedding":
            return self._arg(call, 0, "num_embeddings", ctx) * self._arg(
                call, 1, "embedding_dim", ctx)
        if tail in ("BatchNorm1d", "BatchNorm2d", "LayerNorm", "InstanceNorm2d"):
            affine = "elementwise_affine" if tail == "LayerNorm" else "affine"
            default = tail != "InstanceNorm2d"
            if affine in call.kwargs:
                default = self._flag(call, 99, affine, ctx)
            return 2 * self._arg(call, 0, "normalized_shape" if tail == "LayerNorm"
                                 else "num_features", ctx) if default else 0
        if tail == "GroupNorm":
            return 2 * self._arg(call, 1, "num_channels", ctx)
        if tail == "Sequential" and len(call.args) == 1 and isinstance(call.argument(0), Seq):
            count = keras_sequential_size(call, lambda ir: self._maybe_int(ir, ctx))
            if count is None:
                raise _Unknown
            return count
        if tail == "Sequential":
            return sum(self.layer(self._call(a, ctx), ctx) for a in call.args)
        if tail in torchvision_models() and self._from_torchvision(name, ctx):
            return self._torchvision(tail, call, ctx)
        key = ("module-size", name, ctx, self.index.reach)
        count = self.index.questions.ask(key, lambda: self._counted(name, ctx), None)
        if count is None:
            raise _Unknown
        return count

    def _from_torchvision(self, name: str, ctx: Ctx) -> bool:
        """Whether ``name`` is a torchvision model builder (``models.resnet18``,
        ``torchvision.models.resnet18``, or ``resnet18`` imported from there)."""
        head, _, _ = name.partition(".")
        binding = self.index.bind(head, ctx)
        return binding is not None and binding.kind == "module" and \
            binding.name.startswith("torchvision")

    def _torchvision(self, model: str, call: Call, ctx: Ctx) -> int:
        """The published count of a torchvision model, with its head resized to
        ``num_classes``; any other argument than weights/pretrained/progress is unknown."""
        if call.args or set(call.kwargs) - {"num_classes", "weights", "pretrained", "progress"}:
            raise _Unknown
        entry = torchvision_models()[model]
        classes = self._arg(call, 99, "num_classes", ctx, 1000)
        return int(entry["params"] + (entry["head_in"] + 1) * (classes - 1000))

    def _call(self, expr: Node, ctx: Ctx) -> Call:
        if isinstance(expr, Call):
            return expr
        if isinstance(expr, Name):
            binding = self.index.attribute(expr.dotted, ctx)
            if binding is not None and isinstance(binding.ir, Call) and binding.index is None:
                return binding.ir
        raise _Unknown

    def _counted(self, name: str, ctx: Ctx) -> int | None:
        """The parameter count of the project module or model factory ``name`` builds (read
        at ``ctx``), None when it cannot be counted. Asked through the index's memo and cycle
        guard (``dpcheck.pipelines.questions``): a module built from itself is not counted."""
        try:
            return self._project_module(name, ctx)
        except _Unknown:
            return None

    def _project_module(self, name: str, ctx: Ctx) -> int:
        binding = self.index.bind(name, ctx)
        if binding is not None and binding.kind == "function":
            return self._factory(binding.ctx)
        if binding is None or binding.kind != "class":
            raise _Unknown
        summary = self.index.summary(binding.ctx.path)
        if summary is None:
            raise _Unknown
        bases = summary.bases(binding.name)
        if not any(b in MODULE_BASES for b in bases):
            raise _Unknown
        init = summary.scopes.get(f"{binding.name}.__init__")
        if init is None:
            raise _Unknown
        total = 0
        init_ctx = Ctx(binding.ctx.path, f"{binding.name}.__init__")
        for stmt in init.statements:
            target = stmt.target
            if stmt.kind == "assign" and isinstance(target, str) and target.startswith("self."):
                value = stmt.expr
                if isinstance(value, Call):
                    where = Ctx(init_ctx.path, init_ctx.scope, stmt.line)
                    total += self.layer(value, where)
        return total


    def _factory(self, function: Ctx) -> int:
        """A project function that returns a model built from layers (``return nn.Sequential``)."""
        scope = self.index.scope(function)
        returns = [s for s in scope.statements if s.kind == "return"] if scope else []
        returned = returns.pop() if len(returns) == 1 else None
        if returned is None or not isinstance(returned.expr, Call):
            raise _Unknown
        where = Ctx(function.path, function.scope, returned.line)
        return self.layer(returned.expr, where)


def model_size(index: ProjectIndex, scopes: Iterable[Ctx]) -> ParamValue | None:
    """The parameter count of the first model built in ``scopes`` (assigned to a name that
    contains ``model`` or ``net``), or None if none can be counted."""
    counter = _Counter(index)
    for ctx in scopes:
        scope = index.scope(ctx)
        for stmt in scope.statements if scope else []:
            target = stmt.target
            if stmt.kind != "assign" or not isinstance(target, str) \
                    or not isinstance(stmt.expr, Call):
                continue
            if not any(word in target.lower() for word in ("model", "net")):
                continue
            where = Ctx(ctx.path, ctx.scope, stmt.line)
            try:
                count = counter.layer(stmt.expr, where)
            except _Unknown:
                continue
            if count > 0:
                return ParamValue("dim", count, "model-size", Span(ctx.path, stmt.line),
                                  stmt.source)
    return None
