"""``dim`` of well-known models built by name or from literal shapes: the shipped torchvision
counts agree with counts worked out here from each architecture, ``num_classes`` resizes the
head, and Keras ``Sequential`` models are counted from a literal input shape."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpcheck.pipelines.dim import torchvision_models
from tests.pipelines.builder import pipelines_of


def _conv(cin: int, cout: int, k: int, bias: bool = False) -> int:
    return cin * cout * k * k + (cout if bias else 0)


def _bn(c: int) -> int:
    return 2 * c


def resnet18_count(classes: int = 1000) -> int:
    """ResNet-18 (He et al. 2016, torchvision layout): a 7x7 stem, four stages of two
    BasicBlocks (two 3x3 convs + BN each; a 1x1 conv + BN shortcut where the width changes),
    then a Linear head on 512 features."""
    total = _conv(3, 64, 7) + _bn(64)
    width = 64
    for out in (64, 128, 256, 512):
        for block in range(2):
            cin = width if block == 0 else out
            total += _conv(cin, out, 3) + _bn(out) + _conv(out, out, 3) + _bn(out)
            if block == 0 and cin != out:
                total += _conv(cin, out, 1) + _bn(out)
        width = out
    return total + 512 * classes + classes


def vgg16_count() -> int:
    """VGG-16 (configuration D): 13 biased 3x3 convs, then 25088-4096-4096-1000 Linear layers."""
    widths = [64, 64, 128, 128, 256, 256, 256, 512, 512, 512, 512, 512, 512]
    convs = sum(_conv(cin, cout, 3, bias=True) for cin, cout in zip([3, *widths], widths))
    return convs + (25088 * 4096 + 4096) + (4096 * 4096 + 4096) + (4096 * 1000 + 1000)


def test_the_shipped_counts_match_the_architectures() -> None:
    table = torchvision_models()
    assert table["resnet18"]["params"] == resnet18_count() == 11_689_512
    assert table["vgg16"]["params"] == vgg16_count()


TRAIN = '''
import torch
{imports}
from opacus import PrivacyEngine
from torchvision import datasets

train = datasets.CIFAR10("data", train=True)
model = {build}
engine = PrivacyEngine()
model, optimizer, loader = engine.make_private(
    module=model, optimizer=torch.optim.SGD(model.parameters(), lr=0.1),
    data_loader=torch.utils.data.DataLoader(train, batch_size=256),
    noise_multiplier=1.0, max_grad_norm=1.0)
for x, y in loader:
    optimizer.zero_grad()
    torch.nn.functional.cross_entropy(model(x), y).backward()
    optimizer.step()
'''


@pytest.mark.parametrize(("imports", "build", "expected"), [
    ("import torchvision", "torchvision.models.resnet18(num_classes=10)", resnet18_count(10)),
    ("from torchvision import models", "models.resnet18()", resnet18_count()),
    ("from torchvision.models import vgg16", "vgg16(weights=None)", vgg16_count()),
    ("from torchvision.models import resnet18", "resnet18(zero_init_residual=True)", None),
    ("from mymodels import resnet18", "resnet18(num_classes=10)", None),
])
def test_dim_of_a_torchvision_model_built_by_name(
        tmp_path: Path, imports: str, build: str, expected: int | None) -> None:
    code = TRAIN.format(imports=imports, build=build)
    pipelines = pipelines_of(tmp_path, {"train.py": code, "requirements.txt": "opacus==1.4.0\n"})
    assert len(pipelines) == 1
    dim = pipelines[0].params.get("dim")
    assert (dim.value if dim is not None else None) == expected


KERAS = '''
import tensorflow as tf
from tensorflow_privacy import DPKerasSGDOptimizer

(x, y), _ = tf.keras.datasets.mnist.load_data()
model = tf.keras.Sequential([{layers}])
opt = DPKerasSGDOptimizer(l2_norm_clip=1.0, noise_multiplier=1.1, num_microbatches=250,
                          learning_rate=0.15)
model.compile(optimizer=opt, loss=tf.keras.losses.SparseCategoricalCrossentropy(
    from_logits=True, reduction=tf.losses.Reduction.NONE))
model.fit(x, y, epochs=5, batch_size=250)
'''

L = "tf.keras.layers."


def _keras_cnn_count() -> int:
    """Conv(16, 8x8, stride 2, same) on 28x28x1 -> 14x14x16; MaxPool(2, 1) -> 13x13x16;
    Conv(32, 4x4, stride 2, valid) -> 5x5x32; MaxPool(2, 1) -> 4x4x32; Flatten -> 512;
    Dense(32); Dense(10)."""
    return (8 * 8 * 1 * 16 + 16) + (4 * 4 * 16 * 32 + 32) + (512 * 32 + 32) + (32 * 10 + 10)


@pytest.mark.parametrize(("layers", "expected"), [
    (f"{L}Flatten(input_shape=(28, 28)), {L}Dense(128, activation='relu'), {L}Dense(10)",
     28 * 28 * 128 + 128 + 128 * 10 + 10),
    (f"{L}Conv2D(16, 8, strides=2, padding='same', activation='relu', input_shape=(28, 28, 1)), "
     f"{L}MaxPool2D(2, 1), {L}Conv2D(32, 4, strides=2, padding='valid', activation='relu'), "
     f"{L}MaxPool2D(2, 1), {L}Flatten(), {L}Dense(32, activation='relu'), {L}Dense(10)",
     _keras_cnn_count()),
    (f"{L}Dense(10, use_bias=False, input_shape=(784,))", 7840),
    (f"{L}Flatten(), {L}Dense(10)", None),
    (f"{L}Flatten(input_shape=(28, 28)), {L}BatchNormalization(), {L}Dense(10)", None),
])
def test_dim_of_a_keras_sequential_with_a_literal_input_shape(
        tmp_path: Path, layers: str, expected: int | None) -> None:
    code = KERAS.format(layers=layers)
    pipelines = pipelines_of(tmp_path, {"train.py": code,
                                        "requirements.txt": "tensorflow-privacy==0.8.12\n"})
    assert len(pipelines) == 1
    dim = pipelines[0].params.get("dim")
    assert (dim.value if dim is not None else None) == expected


def _nested_modules(levels: int) -> str:
    """Project modules wrapping each other ``levels`` deep around one Linear(10, 10) (110
    parameters), the outermost built as ``Block0()``."""
    blocks = [f'''
class Block{i}(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = {f"Block{i + 1}()" if i + 1 < levels else "nn.Linear(10, 10)"}
''' for i in range(levels)]
    return "import torch.nn as nn\n" + "".join(blocks)


@pytest.mark.parametrize(("modules", "expected"), [
    (_nested_modules(9), 110),
    ("import torch.nn as nn\n\nclass Block0(nn.Module):\n    def __init__(self):\n"
     "        super().__init__()\n        self.inner = Block0()\n"
     "        self.head = nn.Linear(10, 10)\n", None),
])
def test_dim_of_project_modules_nested_at_any_depth(
        tmp_path: Path, modules: str, expected: int | None) -> None:
    """Modules built from project modules are counted however deep they nest (each one a
    question of the index's memo and cycle guard); a module built from itself is not counted."""
    code = TRAIN.format(imports="from blocks import Block0", build="Block0()")
    pipelines = pipelines_of(tmp_path, {"train.py": code, "blocks.py": modules,
                                        "requirements.txt": "opacus==1.4.0\n"})
    assert len(pipelines) == 1
    dim = pipelines[0].params.get("dim")
    assert (dim.value if dim is not None else None) == expected
