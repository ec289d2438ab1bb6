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

from dpcheck.sites.ir import IR, callee_name, tail_name

Number = Callable[[IR], "int | None"]
SHAPE_KEEPING = frozenset({"Dropout", "Activation", "ReLU", "Softmax", "LeakyReLU"})
POOLS = frozenset({"MaxPool2D", "MaxPooling2D", "AveragePooling2D", "AvgPool2D"})
INPUTS = frozenset({"Input", "InputLayer"})
_CONV_KEYS = {"filters", "kernel_size", "strides", "padding", "activation", "use_bias",
              "input_shape", "name"}


class _Unknown(Exception):
    """A layer, argument or size the shape walk cannot follow."""


def keras_sequential_size(call: IR, number: Number) -> int | None:
    """The trainable parameter count of ``keras.Sequential([...])`` (``call``), with ``number``
    resolving an IR to an int (or None); None when anything is not known."""
    if len(call[2]) != 1 or call[2][0][0] != "t":
        return None
    try:
        return _Walk(number).run(call[2][0][1])
    except _Unknown:
        return None


class _Walk:
    def __init__(self, number: Number) -> None:
        self.number = number

    def int(self, ir: IR | None) -> int:
        found = self.number(ir) if ir is not None else None
        if found is None:
            raise _Unknown
        return found

    def pair(self, ir: IR) -> tuple[int, int]:
        if ir[0] == "t" and len(ir[1]) == 2:
            return self.int(ir[1][0]), self.int(ir[1][1])
        size = self.int(ir)
        return size, size

    def arg(self, layer: IR, position: int, key: str) -> IR | None:
        return layer[3].get(key, layer[2][position] if position < len(layer[2]) else None)

    def run(self, layers: list[IR]) -> int:
        shape: list[int] | None = None
        total = 0
        for layer in layers:
            if layer[0] != "call":
                raise _Unknown
            tail = tail_name(callee_name(layer))
            given = layer[3].get("input_shape", layer[3].get("shape"))
            if given is not None:
                if given[0] != "t":
                    raise _Unknown
                shape = [self.int(d) for d in given[1]]
            if tail in INPUTS:
                continue
            if shape is None:
                raise _Unknown
            shape, count = self.layer(tail, layer, shape)
            total += count
        return total

    def layer(self, tail: str, layer: IR, shape: list[int]) -> tuple[list[int], int]:
        if tail in SHAPE_KEEPING:
            return shape, 0
        if tail == "Flatten":
            return [math.prod(shape)], 0
        if tail == "Dense":
            units = self.int(self.arg(layer, 0, "units"))
            bias = self.flag(layer, "use_bias")
            return [*shape[:-1], units], shape[-1] * units + (units if bias else 0)
        if tail == "Conv2D" and len(shape) == 3 and set(layer[3]) <= _CONV_KEYS:
            filters = self.int(self.arg(layer, 0, "filters"))
            kernel_ir = self.arg(layer, 1, "kernel_size")
            if kernel_ir is None:
                raise _Unknown
            kernel = self.pair(kernel_ir)
            spatial = self.spatial(shape, kernel, layer, kernel=True)
            weights = kernel[0] * kernel[1] * shape[2] * filters
            return [*spatial, filters], weights + (filters if self.flag(layer, "use_bias") else 0)
        if tail in POOLS and len(shape) == 3:
            pool = self.pair(self.arg(layer, 0, "pool_size") or ["n", 2])
            return [*self.spatial(shape, pool, layer, kernel=False), shape[2]], 0
        raise _Unknown

    def flag(self, layer: IR, key: str) -> bool:
        value = layer[3].get(key, ["c", True])
        if value not in (["c", True], ["c", False]):
            raise _Unknown
        return bool(value[1])

    def spatial(self, shape: list[int], window: tuple[int, int], layer: IR,
                kernel: bool) -> list[int]:
        """Output height and width; convolution strides default to 1, pooling strides to the
        pool size."""
        strides_ir = self.arg(layer, 2 if kernel else 1, "strides")
        strides = self.pair(strides_ir) if strides_ir not in (None, ["c", None]) else (
            (1, 1) if kernel else window)
        padding = self.arg(layer, 3 if kernel else 2, "padding") or ["s", "valid"]
        if padding == ["s", "same"]:
            return [math.ceil(n / s) for n, s in zip(shape[:2], strides)]
        if padding == ["s", "valid"]:
            return [(n - k) // s + 1 for n, k, s in zip(shape[:2], window, strides)]
        raise _Unknown
