"""Where a training loop's batches come from (DP-SGD-Baseline-Opacus, bench/REAL_REPOS.md): ``it =
iter(loader)`` then ``next(it)`` inside ``for _ in range(steps)``; a loader that is one element of
the tuples a helper returns (a return of another length is not the one unpacked); and the
statements of dispatch arms the default configuration skips, which no analyzer reads. Real
projects on disk, the real builder."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpcheck.pipelines.binding import Binding
from dpcheck.pipelines.index import ProjectIndex
from dpcheck.pipelines.scope import Ctx, PipelineScope
from tests.pipelines.builder import make_project, pipelines_of

REQUIREMENTS = "torch==2.2.0\nopacus==1.4.0\n"

HELPER = '''
import torch
from torch.utils.data import DataLoader, TensorDataset


def loaders(kind, batch):
    train = TensorDataset(torch.randn(20000, 8), torch.randint(0, 2, (20000,)))
    test = TensorDataset(torch.randn(1000, 8), torch.randint(0, 2, (1000,)))
    if kind == "big":
        extra = TensorDataset(torch.randn(5000, 8), torch.randint(0, 2, (5000,)))
        return (DataLoader(train, batch_size=batch, {first}), DataLoader(extra),
                DataLoader(test), 25000)
    return DataLoader(train, batch_size=batch, {second}), DataLoader(test), 20000
'''

TRAIN = '''
import argparse

import torch
from opacus import PrivacyEngine

from helper import loaders

parser = argparse.ArgumentParser()
parser.add_argument("--kind", default="{kind}")
parser.add_argument("--batch", default=200, type=int)
args = parser.parse_args()

train_loader, test_loader, n = loaders(args.kind, args.batch)
model = torch.nn.Linear(8, 2)
engine = PrivacyEngine(accountant="rdp")
model, optimizer, train_loader = engine.make_private(
    module=model, optimizer=torch.optim.SGD(model.parameters(), lr=0.5),
    data_loader=train_loader, noise_multiplier=1.0, max_grad_norm=1.0, poisson_sampling=False)
draws = iter(train_loader)
for step in range(n // args.batch):
    x, y = next(draws)
    optimizer.zero_grad()
    torch.nn.functional.cross_entropy(model(x), y).backward()
    optimizer.step()
print(engine.get_epsilon(1e-5))
'''


def _pipeline(tmp_path: Path, kind: str, first: str, second: str):
    [pipeline] = pipelines_of(tmp_path, {
        "helper.py": HELPER.format(first=first, second=second),
        "train.py": TRAIN.format(kind=kind), "requirements.txt": REQUIREMENTS})
    return pipeline


@pytest.mark.parametrize("kind", ["small", "big"])
def test_next_on_an_iterator_of_the_kept_loader_reads_its_batches(tmp_path: Path,
                                                                  kind: str) -> None:
    """The 4-tuple return cannot be unpacked into three names, whatever ``--kind`` says."""
    pipeline = _pipeline(tmp_path, kind, "shuffle=False", "shuffle=True")
    assert (pipeline.mechanism, pipeline.sampling) == ("fixed-mean", "shuffle")
    samplers = [e for e in pipeline.evidence if e.role == "sampler"]
    assert [(e.span.path, e.span.line) for e in samplers] == [("train.py", 16), ("helper.py", 12)]
    assert "DataLoader(shuffle=True)" in samplers[1].note


def test_the_loader_of_a_return_the_default_skips_is_not_read(tmp_path: Path) -> None:
    """A 3-tuple return of the same length in the skipped arm would be unpacked there, but the
    default ``--kind`` does not run it: its Poisson loader does not decide."""
    helper = HELPER.replace("DataLoader(extra),\n                DataLoader(test), 25000",
                            "DataLoader(test), 25000")
    helper = helper.replace("DataLoader(train, batch_size=batch, {first})",
                            "DPDataLoader.from_data_loader(DataLoader(train, batch_size=batch))")
    helper = "from opacus.data_loader import DPDataLoader\n" + helper.format(second="shuffle=True")
    [pipeline] = pipelines_of(tmp_path, {"helper.py": helper,
                                         "train.py": TRAIN.format(kind="small"),
                                         "requirements.txt": REQUIREMENTS})
    assert (pipeline.mechanism, pipeline.sampling) == ("fixed-mean", "shuffle")


def test_an_unresolved_kept_loader_leaves_the_update_rule_unknown(tmp_path: Path) -> None:
    """Every loop draws from the kept loader, but the helper's returns disagree (a Poisson and a
    shuffled loader, both possible): floor(N/len(loader)) is data-dependent only if it samples,
    so the update rule is unknown, not FEASGM."""
    helper = HELPER.replace("DataLoader(train, batch_size=batch, {first})",
                            "DPDataLoader.from_data_loader(DataLoader(train, batch_size=batch))")
    helper = helper.replace("DataLoader(extra),\n                DataLoader(test), 25000",
                            "DataLoader(test), 25000")
    helper = helper.replace('if kind == "big":', "if torch.rand(1).item() > 0.5:")
    helper = "from opacus.data_loader import DPDataLoader\n" + helper.format(second="shuffle=True")
    [pipeline] = pipelines_of(tmp_path, {"helper.py": helper, "train.py": TRAIN.format(kind="x"),
                                         "requirements.txt": REQUIREMENTS})
    assert (pipeline.mechanism, pipeline.sampling) == ("unknown", "unknown")
    [reason] = [e.note for e in pipeline.evidence if e.note.startswith("mechanism unknown")]
    assert "only if the loader Opacus keeps samples" in reason


def test_returned_parts_and_unpacked_width(tmp_path: Path) -> None:
    project = make_project(tmp_path, {"helper.py": HELPER.format(first="", second=""),
                                      "train.py": TRAIN.format(kind="small")})
    index = ProjectIndex(project)
    binding = index.bind("test_loader", Ctx("train.py", "<module>"))
    assert isinstance(binding, Binding) and binding.index == (1,)
    assert index.unpacked_width(binding) == 3
    function = Ctx("helper.py", "loaders")
    assert [where.line for _, where, _ in index.returned_parts(function, (1,), 3)] == [12]
    assert [where.line for _, where, _ in index.returned_parts(function, (1,), 4)] == [10]
    elements = [value for value, _, _ in index.returned_parts(function, (3,))]
    assert elements == [["n", 25000], ["?", "unpacked"]]
    assert len(list(index.returned_parts(function))) == 2


DISPATCHED = '''
import argparse

import torch
from opacus import PrivacyEngine
from opacus.accountants import GaussianAccountant, RDPAccountant
from torch.utils.data import DataLoader, TensorDataset

parser = argparse.ArgumentParser()
parser.add_argument("--accounting", default="{default}")
args = parser.parse_args()

data = TensorDataset(torch.randn(20000, 8), torch.randint(0, 2, (20000,)))
model = torch.nn.Linear(8, 2)
model, optimizer, loader = PrivacyEngine().make_private(
    module=model, optimizer=torch.optim.SGD(model.parameters(), lr=0.5),
    data_loader=DataLoader(data, batch_size=200), noise_multiplier=1.0, max_grad_norm=1.0)
if args.accounting == "gdp":
    accountant = GaussianAccountant()
else:
    accountant = RDPAccountant()
for x, y in loader:
    optimizer.zero_grad()
    torch.nn.functional.cross_entropy(model(x), y).backward()
    optimizer.step()
    accountant.step(noise_multiplier=1.0, sample_rate=0.01)
print(accountant.get_epsilon(1e-5))
'''


@pytest.mark.parametrize(("default", "name"), [("rdp", "opacus-rdp"), ("gdp", "opacus-gdp")])
def test_statements_in_an_arm_the_defaults_skip_are_not_read(tmp_path: Path, default: str,
                                                            name: str) -> None:
    [pipeline] = pipelines_of(tmp_path, {"train.py": DISPATCHED.format(default=default),
                                         "requirements.txt": REQUIREMENTS})
    assert pipeline.accountant.name == name


def test_an_undecided_dispatch_reads_both_arms(tmp_path: Path) -> None:
    code = DISPATCHED.format(default="rdp").replace(
        'if args.accounting == "gdp":', 'if torch.cuda.device_count() == 2:')
    project = make_project(tmp_path, {"train.py": code, "requirements.txt": REQUIREMENTS})
    index = ProjectIndex(project)
    assert index.skipped_arms == frozenset()
    lines = [where.line for where, _ in index.statements([Ctx("train.py", "<module>")])]
    assert {18, 20} <= set(lines)
    scoped = index.within(PipelineScope(skipped_arms=frozenset({("train.py", "<module>", 17, 0)})))
    lines = [where.line for where, _ in scoped.statements([Ctx("train.py", "<module>")])]
    assert 18 not in lines and 20 in lines
