"""Which loader a pipeline's training loop iterates (Handcrafted-DP, bench/REAL_REPOS.md): the loop
that takes optimizer steps, not a statistics or pre-computation pass over another loader; a
loader returned by a project helper, with the arm its flag defaults select; a
``DataLoader(shuffle=<expression>)`` is fixed-size batches either way."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.pipelines.builder import pipelines_of

REQUIREMENTS = "opacus==0.13.0\n"

HELPERS = '''
import numpy as np
import torch
from torch.utils.data import DataLoader, RandomSampler, TensorDataset


class Bernoulli(torch.utils.data.Sampler):
    def __init__(self, n, batch):
        self.n, self.rate = n, batch / n

    def __iter__(self):
        for _ in range(100):
            yield np.where(np.random.binomial(1, self.rate, self.n))[0]


def precompute(loader):
    xs, ys = [], []
    for x, y in loader:
        xs.append(torch.tanh(x))
        ys.append(y)
    return TensorDataset(torch.cat(xs), torch.cat(ys))


def rewrap(loader, sample_batches={flag_default}):
    data = precompute(loader)
    if sample_batches:
        return DataLoader(data, batch_sampler=Bernoulli(len(data), loader.batch_size))
    return DataLoader(data, batch_size=loader.batch_size,
                      shuffle=isinstance(loader.sampler, RandomSampler))


def train(model, train_loader, optimizer):
    for x, y in train_loader:
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
'''

ENTRY = '''
import torch
from opacus import PrivacyEngine
from torch.utils.data import DataLoader, TensorDataset

from helpers import precompute, rewrap, train


def main():
    data = TensorDataset(torch.randn(50000, 8), torch.randint(0, 2, (50000,)))
    raw = DataLoader(data, batch_size=100, shuffle=False)
    stats = precompute(raw)
    loader = {loader}
    model = torch.nn.Linear(8, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    engine = PrivacyEngine(model, sample_rate=256 / len(data), noise_multiplier=1.0,
                           max_grad_norm=1.0)
    engine.attach(optimizer)
    for _ in range(10):
        train(model, loader, optimizer)


if __name__ == "__main__":
    main()
'''


@pytest.mark.parametrize(
    ("loader", "flag_default", "sampling", "anchor"),
    [
        # the training loop's own loader, not the pre-computation pass over `raw` (line 10)
        ("DataLoader(stats, batch_size=256, shuffle=True)", "False", "shuffle", ("train.py", 12)),
        # a helper's return: the Bernoulli arm does not run with the default flag
        ("rewrap(DataLoader(data, batch_size=256, shuffle=True))", "False", "shuffle",
         ("helpers.py", 27)),
        ("rewrap(DataLoader(data, batch_size=256, shuffle=True))", "True", "poisson",
         ("helpers.py", 26)),
        ("rewrap(DataLoader(data, batch_size=256, shuffle=True), sample_batches=True)", "False",
         "poisson", ("helpers.py", 26)),
    ],
)
def test_the_training_loop_loader_decides(tmp_path: Path, loader: str, flag_default: str,
                                          sampling: str, anchor: tuple[str, int]) -> None:
    files = {"requirements.txt": REQUIREMENTS,
             "helpers.py": HELPERS.replace("{flag_default}", flag_default),
             "train.py": ENTRY.format(loader=loader)}
    [pipeline] = pipelines_of(tmp_path, files)
    assert pipeline.sampling == sampling, pipeline.evidence
    sampler = next(e for e in pipeline.evidence if e.role == "sampler")
    assert (sampler.span.path, sampler.span.line) == anchor


def test_a_helper_whose_returns_disagree_under_an_unknown_flag_is_unknown(tmp_path: Path) -> None:
    files = {"requirements.txt": REQUIREMENTS,
             "helpers.py": HELPERS.replace("{flag_default}", "False"),
             "train.py": ENTRY.format(
                 loader="rewrap(DataLoader(data, batch_size=256), sample_batches=len(data) > 9)")}
    [pipeline] = pipelines_of(tmp_path, files)
    assert pipeline.sampling == "unknown"
    assert any("rewrap() returns loaders that sample in different ways" in e.note
               for e in pipeline.evidence)


VARS_ENTRY = '''
import argparse

import torch
from opacus import PrivacyEngine
from torch.utils.data import DataLoader, TensorDataset

from helpers import train


def main(batch_size=256, noise_multiplier=1.0, max_grad_norm=0.5):
    data = TensorDataset(torch.randn(50000, 8), torch.randint(0, 2, (50000,)))
    loader = DataLoader(data, batch_size=batch_size, shuffle=True)
    model = torch.nn.Linear(8, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    PrivacyEngine(model, sample_rate=batch_size / len(data), noise_multiplier=noise_multiplier,
                  max_grad_norm=max_grad_norm).attach(optimizer)
    train(model, loader, optimizer)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch_size", type=int, default=512)
    {declare}
    main(**vars(parser.parse_args()))
'''

OTHER_ENTRY = '''
import argparse

parser = argparse.ArgumentParser()
parser.add_argument("--max_grad_norm", type=float, default=3.0)
parser.add_argument("--noise_multiplier", type=float, default=2.0)
'''


@pytest.mark.parametrize(
    ("declare", "clip", "source"),
    [
        # the parser of this script does not declare it: main() keeps its own default
        ("", 0.5, "function-default"),
        ('parser.add_argument("--max_grad_norm", type=float, default=0.2)', 0.2,
         "argparse-default"),
    ],
)
def test_vars_of_parsed_args_passes_only_the_declared_options(
    tmp_path: Path, declare: str, clip: float, source: str
) -> None:
    files = {"requirements.txt": REQUIREMENTS,
             "helpers.py": HELPERS.replace("{flag_default}", "False"),
             "train.py": VARS_ENTRY.format(declare=declare), "other.py": OTHER_ENTRY}
    [pipeline] = pipelines_of(tmp_path, files)
    assert (pipeline.params["clip"].value, pipeline.params["clip"].source) == (clip, source)
    assert pipeline.params["batch_size"].value == 512
    assert pipeline.params["sigma"].value == 1.0


def test_a_function_in_a_skipped_dispatch_arm_is_not_an_entry_of_its_own(tmp_path: Path) -> None:
    """``warmup`` is only called from the arm the default skips: it is part of no pipeline, and
    not the top of one either (its caller ``experiment`` is the entry)."""
    code = '''
    import torch

    CLIP, SIGMA = 1.0, 1.0


    def noisy_step(model, x, y):
        params = list(model.parameters())
        sums = [torch.zeros_like(p) for p in params]
        for xi, yi in zip(x, y):
            model.zero_grad()
            torch.nn.functional.cross_entropy(model(xi[None]), yi[None]).backward()
            norm = sum(p.grad.norm() ** 2 for p in params) ** 0.5
            factor = min(CLIP / (norm + 1e-6), 1.0)
            for p, s in zip(params, sums):
                s.add_(p.grad * factor)
        with torch.no_grad():
            for p, s in zip(params, sums):
                noisy = s + CLIP * SIGMA * torch.randn_like(s)
                p -= 0.1 * noisy / len(x)


    def warmup(model, data, labels):
        mask = torch.rand(len(data)) < 0.001
        noisy_step(model, data[mask], labels[mask])


    def phase(model, data, labels):
        mask = torch.rand(len(data)) < 0.01
        noisy_step(model, data[mask], labels[mask])


    def experiment(model, data, labels, mode="phased"):
        if mode == "phased":
            phase(model, data, labels)
        else:
            warmup(model, data, labels)
    '''
    pipelines = pipelines_of(tmp_path, {"lib.py": code})
    assert [p.entry for p in pipelines] == ["lib.py::experiment"]
    dispatch = [e.span.line for e in pipelines[0].evidence if e.role == "dispatch"]
    assert dispatch == [33]
