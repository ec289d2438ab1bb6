"""Static parameter resolution with provenance: constants across modules, argparse defaults
(also through a ``get_args()`` helper), dict configs, function defaults and call sites, dataset
sizes, model sizes (checked against torch), and overrides."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpcheck.model import ParamValue
from tests.pipelines.builder import pipelines_of

OPACUS_SCRIPT = '''
import argparse
import torch
from opacus import PrivacyEngine
from torch.utils.data import DataLoader
from torchvision import datasets
{imports}

def get_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--epochs", type=int, default=7)
    return parser.parse_args()


def train(args, clip=0.75):
    data = datasets.{dataset}("data", train={train})
    loader = DataLoader(data, batch_size=args.batch_size)
    model = {model}
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    engine = PrivacyEngine()
    model, optimizer, loader = engine.make_private(
        module=model, optimizer=optimizer, data_loader=loader,
        noise_multiplier={sigma}, max_grad_norm=clip,
    )
    for epoch in range(args.epochs):
        for x, y in loader:
            optimizer.step()
    return engine.get_epsilon(delta=CONFIG["delta"])


CONFIG = {{"delta": 1e-6}}
if __name__ == "__main__":
    train(get_args())
'''

REQUIREMENTS = "opacus==1.4.0\n"


def _params(tmp_path: Path, **fields: str) -> dict[str, ParamValue]:
    values = {"imports": "", "dataset": "CIFAR10", "train": "True", "sigma": "1.3",
              "model": "torch.nn.Linear(10, 2)"} | fields
    files = {"train.py": OPACUS_SCRIPT.format(**values), "requirements.txt": REQUIREMENTS}
    if "hparams" in values["imports"]:
        files["conf/hparams.py"] = "BASE = 0.5\nSIGMA = BASE * 2 + 0.1\n"
        files["conf/__init__.py"] = ""
    [pipeline] = pipelines_of(tmp_path, files)
    return pipeline.params


def test_argparse_defaults_through_a_helper_function(tmp_path: Path) -> None:
    params = _params(tmp_path)
    assert (params["batch_size"].value, params["batch_size"].source) == (128, "argparse-default")
    assert params["batch_size"].span is not None and params["batch_size"].span.line == 10
    assert params["epochs"].value == 7


def test_function_default_literal_config_and_dataset_size(tmp_path: Path) -> None:
    params = _params(tmp_path)
    assert (params["clip"].value, params["clip"].source) == (0.75, "function-default")
    assert (params["sigma"].value, params["sigma"].source) == (1.3, "literal")
    assert (params["delta"].value, params["delta"].source) == (1e-6, "config")
    assert (params["N"].value, params["N"].source) == (50000, "dataset-size")


def test_derived_sample_rate_and_steps_follow_opacus(tmp_path: Path) -> None:
    params = _params(tmp_path)
    rounds = -(-50000 // 128)  # Opacus: q = 1 / len(loader), len(loader) = ceil(N / B)
    assert params["q"].value == pytest.approx(1 / rounds, rel=1e-12)
    assert params["steps"].value == 7 * rounds


def test_test_split_size_and_constant_across_modules(tmp_path: Path) -> None:
    params = _params(tmp_path, dataset="MNIST", train="False",
                     imports="from conf.hparams import SIGMA", sigma="SIGMA")
    assert params["N"].value == 10000
    assert params["sigma"].value == pytest.approx(1.1)
    assert params["sigma"].span is not None and params["sigma"].span.path == "conf/hparams.py"


def test_override_wins_and_says_so(tmp_path: Path) -> None:
    override = ParamValue("sigma", 2.5, "override")
    files = {"train.py": OPACUS_SCRIPT.format(imports="", dataset="MNIST", train="True",
                                              sigma="1.3", model="torch.nn.Linear(4, 2)"),
             "requirements.txt": REQUIREMENTS}
    [pipeline] = pipelines_of(tmp_path, files, overrides={"sigma": override})
    assert pipeline.params["sigma"] == override


MODELS = [
    "torch.nn.Sequential(torch.nn.Linear(784, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))",
    "torch.nn.Sequential(torch.nn.Conv2d(3, 16, 5), torch.nn.BatchNorm2d(16), torch.nn.Flatten(),"
    " torch.nn.Linear(16 * 28 * 28, 10, bias=False))",
    "torch.nn.Sequential(torch.nn.Embedding(1000, 32), torch.nn.LayerNorm(32),"
    " torch.nn.Conv1d(32, 8, kernel_size=3, groups=4), torch.nn.GroupNorm(2, 8))",
]


@pytest.mark.parametrize("model", MODELS)
def test_model_size_matches_torch(tmp_path: Path, model: str) -> None:
    torch = pytest.importorskip("torch")
    expected = sum(p.numel() for p in eval(model, {"torch": torch}).parameters())  # noqa: S307
    params = _params(tmp_path, model=model)
    assert (params["dim"].value, params["dim"].source) == (expected, "model-size")


def test_model_size_of_a_project_module_class(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    net = '''
import torch.nn as nn

class Net(nn.Module):
    def __init__(self, hidden=64):
        super().__init__()
        self.fc1 = nn.Linear(20, hidden)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(hidden, 3)
'''
    namespace: dict = {}
    exec(net, namespace)  # noqa: S102 - builds the same model in torch as the reference
    expected = sum(p.numel() for p in namespace["Net"]().parameters())
    script = OPACUS_SCRIPT.format(imports="from net import Net", dataset="MNIST", train="True",
                                  sigma="1.0", model="Net()")
    [pipeline] = pipelines_of(tmp_path, {"train.py": script, "net.py": net,
                                         "requirements.txt": REQUIREMENTS})
    assert pipeline.params["dim"].value == expected
    assert torch is not None


def test_unknown_layer_makes_the_size_unknown(tmp_path: Path) -> None:
    params = _params(tmp_path, model="torch.nn.Sequential(torch.nn.Linear(4, 4), CustomLayer())")
    assert "dim" not in params


@pytest.mark.parametrize(("drop_last", "rounds"), [("True", 50000 // 128),
                                                   ("False", -(-50000 // 128))])
def test_fixed_batches_with_drop_last_count_floor_n_over_b(
    tmp_path: Path, drop_last: str, rounds: int
) -> None:
    """Opacus with ``poisson_sampling=False`` keeps the loader: len(loader) = floor(N/B) when it
    drops the last partial batch, ceil(N/B) otherwise; q = 1/len(loader)."""
    code = OPACUS_SCRIPT.format(imports="", dataset="CIFAR10", train="True", sigma="1.3",
                                model="torch.nn.Linear(10, 2)")
    code = code.replace("batch_size=args.batch_size)",
                        "batch_size=args.batch_size, drop_last=DROP_LAST)")
    code = code.replace("data_loader=loader,", "data_loader=loader, poisson_sampling=False,")
    code = f"DROP_LAST = {drop_last}\n" + code
    [pipeline] = pipelines_of(tmp_path, {"train.py": code, "requirements.txt": REQUIREMENTS})
    params = pipeline.params
    assert pipeline.sampling == "shuffle"
    assert (params["drop_last"].value, params["drop_last"].span.line) == (drop_last == "True", 1)
    assert params["q"].value == pytest.approx(1 / rounds, rel=1e-12)
    assert params["steps"].value == 7 * rounds


HANDWRITTEN_NOISE = '''
import torch
from opacus.accountants import RDPAccountant

CLIP = {clip}
SIGMA = {sigma}


def clip_rows(grads, bound):
    return grads / torch.clamp(grads.norm(dim=1, keepdim=True) / bound, min=1.0)


def train(data):
    accountant = RDPAccountant()
    for _ in range(100):
        mask = torch.rand(len(data)) < 0.01
        grads = data[mask]
        clipped = clip_rows(grads, CLIP)
        noisy = clipped.sum(0) + torch.normal(0.0, {std}, size=(3,))
        accountant.step(noise_multiplier=SIGMA, sample_rate=0.01)


if __name__ == "__main__":
    train(torch.zeros(1000, 3))
'''


@pytest.mark.parametrize("std", ["SIGMA * CLIP", "CLIP * SIGMA"])
@pytest.mark.parametrize(("sigma", "clip"), [(1.0, 1.0), (2.0, 1.0), (1.0, 2.0)])
def test_sigma_of_a_product_noise_std_is_the_factor_that_is_not_the_clip(
        tmp_path: Path, std: str, sigma: float, clip: float) -> None:
    """std = SIGMA * CLIP with the clip applied by a helper (so its threshold is the helper's
    parameter, not the name CLIP): sigma is SIGMA, at SIGMA's line, even when both are equal
    numbers."""
    source = HANDWRITTEN_NOISE.format(std=std, sigma=sigma, clip=clip)
    [pipeline] = pipelines_of(tmp_path, {"train.py": source})
    found = pipeline.params["sigma"]
    sigma_line = (tmp_path / "train.py").read_text().splitlines().index(f"SIGMA = {sigma}") + 1
    assert (found.value, found.span.line) == (sigma, sigma_line)


SHADOW_FIRST = '''
import torch
from opacus.accountants import RDPAccountant

N = 20000
Q = 0.02
EPOCHS = 6


def noisy_mean(grads, mask):
    clipped = grads / torch.clamp(grads.norm(dim=1, keepdim=True), min=1.0)
    noisy = clipped.sum(0) + torch.normal(0.0, 1.1, size=(3,))
    return noisy / mask.sum()


def train(data):
    shadow = torch.nn.Linear(3, 1)
    opt = torch.optim.SGD(shadow.parameters(), lr=0.1)
    for epoch in range(40):
        opt.zero_grad()
        shadow(data).sum().backward()
        opt.step()
    accountant = RDPAccountant()
    for epoch in range(EPOCHS):
        for _ in range(int(1 / Q)):
            mask = torch.rand(N) < Q
            update = noisy_mean(data[mask], mask)
            accountant.step(noise_multiplier=1.1, sample_rate=Q)


if __name__ == "__main__":
    train(torch.zeros(N, 3))
'''


def test_the_epochs_are_those_of_the_loop_that_runs_the_private_update(tmp_path: Path) -> None:
    """A non-private shadow model trained first, for 40 epochs, in the same function does not
    give the pipeline its epochs: the epoch loop around the (helper-drawn) noise does."""
    [pipeline] = pipelines_of(tmp_path, {"train.py": SHADOW_FIRST})
    source = (tmp_path / "train.py").read_text().splitlines()
    assert (pipeline.params["epochs"].value, pipeline.params["epochs"].span.line) == (
        6, source.index("EPOCHS = 6") + 1)
