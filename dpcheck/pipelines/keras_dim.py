"""Trainable parameter count of a Keras ``Sequential([...])`` whose input shape is literal.

Shapes are followed layer by layer from ``input_shape=`` on the first layer (or a leading
``Input``/``InputLayer``): ``Dense`` acts on the last axis, ``Conv2D`` on channels-last images
with ``valid``/``same`` padding, pooling and ``Flatten`` reshape, activations and dropout keep
the shape. Any other layer or argument, or a size that does not resolve, gives None: a partial
count would be a wrong number.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from dpcheck.sites.nodes import Call, Const, Node, Num, Seq, Str

Number = Callable[[Node], "int | None"]
SHAPE_KEEPING = frozenset({"Dropout", "Activation", "ReLU", "Softmax", "LeakyReLU"})
POOLS = frozenset({"MaxPool2D", "MaxPooling2D", "AveragePooling2D", "AvgPool2D"})
INPUTS = frozenset({"Input", "InputLayer"})
_CONV_KEYS = {"filters", "kernel_size", "strides", "padding", "activation", "use_bias",
              "input_shape", "name"}


class _Unknown(Exception):
    """A layer, argument or size the shape walk cannot follow."""


def keras_sequential_size(call: Call, number: Number) -> int | None:
    """The trainable parameter count of ``keras.Sequential([...])`` (``call``), with ``number``
    resolving an IR to an int (or None); None when anything is not known."""
    layers = call.argument(0)
    if len(call.args) != 1 or not isinstance(layers, Seq):
        return None
    try:
        return _Walk(number).run(layers.items)
    except _Unknown:
        return None


class _Walk:
    def __init__(self, number: Number) -> None:
        self.number = number

    def int(self, ir: Node | None) -> int:
        found = self.number(ir) if ir is not None else None
        if found is None:
            raise _Unknown
        return found

    def pair(self, ir: Node) -> tuple[int, int]:
        if isinstance(ir, Seq) and len(ir.items) == 2:
            first, second = ir.items
            return self.int(first), self.int(second)
        size = self.int(ir)
        return size, size

    def arg(self, layer: Call, position: int, key: str) -> Node | None:
        return layer.argument(position, key)

    def run(self, layers: list[Node]) -> int:
        shape: list[int] | None = None
        total = 0
        for layer in layers:
            if not isinstance(layer, Call):
                raise _Unknown
            tail = layer.method
            given = layer.kwargs.get("input_shape", layer.kwargs.get("shape"))
            if given is not None:
                if not isinstance(given, Seq):
                    raise _Unknown
                shape = [self.int(d) for d in given.items]
            if tail in INPUTS:
                continue
            if shape is None:
                raise _Unknown
            shape, count = self.layer(tail, layer, shape)
            total += count
        return total

    def layer(self, tail: str, layer: Call, shape: list[int]) -> tuple[list[int], int]:
        if tail in SHAPE_KEEPING:
            return shape, 0
        if tail == "Flatten":
            return [math.prod(shape)], 0
        if tail == "Dense":
            units = self.int(self.arg(layer, 0, "units"))
            bias = self.flag(layer, "use_bias")
            return [*shape[:-1], units], shape[-1] * units + (units if bias else 0)
        if tail == "Conv2D" and len(shape) == 3 and set(layer.kwargs) <= _CONV_KEYS:
            filters = self.int(self.arg(layer, 0, "filters"))
            kernel_ir = self.arg(layer, 1, "kernel_size")
            if kernel_ir is None:
                raise _Unknown
            kernel = self.pair(kernel_ir)
            spatial = self.spatial(shape, kernel, layer, kernel=True)
            *_, channels = shape
            weights = math.prod(kernel) * channels * filters
            return [*spatial, filters], weights + (filters if self.flag(layer, "use_bias") else 0)
        if tail in POOLS and len(shape) == 3:
            pool = self.pair(self.arg(layer, 0, "pool_size") or Num(["n", 2]))
            *_, channels = shape
            return [*self.spatial(shape, pool, layer, kernel=False), channels], 0
        raise _Unknown

    def flag(self, layer: Call, key: str) -> bool:
        value = layer.kwargs.get(key)
        if value is None:
            return True
        if not isinstance(value, Const) or not isinstance(value.value, bool):
            raise _Unknown
        return value.value

    def spatial(self, shape: list[int], window: tuple[int, int], layer: Call,
                kernel: bool) -> list[int]:
        """Output height and width; convolution strides default to 1, pooling strides to the
        pool size."""
        strides_ir = self.arg(layer, 2 if kernel else 1, "strides")
        if strides_ir is None or isinstance(strides_ir, Const) and strides_ir.value is None:
            strides = (1, 1) if kernel else window
        else:
            strides = self.pair(strides_ir)
        padding = self.arg(layer, 3 if kernel else 2, "padding") or Str(["s", "valid"])
        if isinstance(padding, Str) and padding.value == "same":
            return [math.ceil(n / s) for n, s in zip(shape[:2], strides)]
        if isinstance(padding, Str) and padding.value == "valid":
            return [(n - k) // s + 1 for n, k, s in zip(shape[:2], window, strides)]
        raise _Unknown
