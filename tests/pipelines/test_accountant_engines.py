"""The accountant of an Opacus engine that reaches ``get_epsilon`` through a function parameter, a
project subclass of the engine, and an engine whose default accountant is undecided (tan,
bench/REAL_REPOS.md): real projects, real parsing, the real pipeline builder."""

from __future__ import annotations

from pathlib import Path

from tests.pipelines.builder import pipelines_of

TRAIN = '''
import torch
from torch.utils.data import DataLoader, TensorDataset
{imports}


def run_epoch(loader, model, optimizer, privacy_engine, delta):
    for x, y in loader:
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
    return privacy_engine.get_epsilon(delta)


def main():
    data = TensorDataset(torch.randn(50000, 8), torch.randint(0, 2, (50000,)))
    loader = DataLoader(data, batch_size=250, shuffle=True)
    model = torch.nn.Linear(8, 2)
    engine = {engine}
    model, optimizer, loader = engine.make_private(
        module=model, optimizer=torch.optim.SGD(model.parameters(), lr=1.0), data_loader=loader,
        noise_multiplier=1.1, max_grad_norm=1.0)
    for epoch in range(3):
        print(run_epoch(loader, model, optimizer, engine, 1e-5))


if __name__ == "__main__":
    main()
'''

SUBCLASS = '''
from opacus import PrivacyEngine


class MultiplicityEngine(PrivacyEngine):
    """The Opacus engine with one extra option."""

    def make_private(self, *, K=1, **kwargs):
        self.K = K
        return super().make_private(**kwargs)
'''


def _pipeline(tmp_path: Path, engine: str, imports: str, requirement: str = "opacus==1.1.2",
              extra: dict[str, str] | None = None):
    files = {"train.py": TRAIN.format(engine=engine, imports=imports),
             "requirements.txt": f"torch\n{requirement}\n", **(extra or {})}
    [pipeline] = pipelines_of(tmp_path, files)
    return pipeline


def test_engine_passed_to_the_training_function_keeps_its_accountant(tmp_path: Path) -> None:
    pipeline = _pipeline(tmp_path, "PrivacyEngine()", "from opacus import PrivacyEngine")
    assert (pipeline.accountant.name, pipeline.accountant.assumes) == ("opacus-rdp", "SGM+poisson")
    assert pipeline.accountant.span is not None and pipeline.accountant.span.line == 11
    assert pipeline.params["delta"].value == 1e-5


def test_a_project_subclass_of_the_engine_inherits_the_release_default(tmp_path: Path) -> None:
    pipeline = _pipeline(tmp_path, "MultiplicityEngine()",
                         "from engines.multiplicity import MultiplicityEngine",
                         extra={"engines/__init__.py": "", "engines/multiplicity.py": SUBCLASS})
    assert (pipeline.accountant.name, pipeline.accountant.assumes) == ("opacus-rdp", "SGM+poisson")
    assert pipeline.sampling == "poisson" and pipeline.mechanism == "FEASGM"


def test_an_explicit_accountant_follows_the_engine_through_the_parameter(tmp_path: Path) -> None:
    pipeline = _pipeline(tmp_path, 'PrivacyEngine(accountant="gdp")',
                         "from opacus import PrivacyEngine", requirement="opacus==1.4.0")
    assert pipeline.accountant.name == "opacus-gdp"


def test_an_undecided_default_accountant_still_assumes_poisson_sgm(tmp_path: Path) -> None:
    """Unpinned: the 1.x default is RDP up to 1.2 and PRV from 1.3, but every Opacus
    accountant accounts SGM with Poisson sampling."""
    pipeline = _pipeline(tmp_path, "PrivacyEngine()", "from opacus import PrivacyEngine",
                         requirement="opacus")
    assert (pipeline.accountant.name, pipeline.accountant.assumes) == ("opacus", "SGM+poisson")


def test_callers_passing_different_engines_leave_the_accountant_open(tmp_path: Path) -> None:
    code = TRAIN.format(engine="PrivacyEngine()", imports="from opacus import PrivacyEngine")
    code = code.replace("    for epoch in range(3):", "    run_epoch(loader, model, optimizer, "
                        "Tracker(), 1e-5)\n    for epoch in range(3):")
    code += '''

class Tracker:
    """Not a DP engine: it only counts."""

    def get_epsilon(self, delta):
        return 0.0
'''
    [pipeline] = pipelines_of(tmp_path, {"train.py": code, "requirements.txt": "opacus==1.1.2\n"})
    assert pipeline.accountant.name == "none"


ATTACHED = '''
import torch
from torch.utils.data import DataLoader, TensorDataset
{imports}

data = TensorDataset(torch.randn(50000, 8), torch.randint(0, 2, (50000,)))
loader = DataLoader(data, batch_size=250, shuffle=True)
model = torch.nn.Linear(8, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=1.0)
engine = {engine}(model, batch_size=250, sample_size=50000, noise_multiplier=1.1,
                  max_grad_norm=1.0)
engine.attach(optimizer)
for x, y in loader:
    optimizer.zero_grad()
    torch.nn.functional.cross_entropy(model(x), y).backward()
    optimizer.step()
print(optimizer.privacy_engine.get_privacy_spent(1e-5))
'''

OWN_ENGINE = '''
class NoisyEngine:
    """A project's own engine (not Opacus) with the 0.x calling convention."""

    def __init__(self, module, *, batch_size, sample_size, noise_multiplier, max_grad_norm):
        self.module = module

    def attach(self, optimizer):
        optimizer.privacy_engine = self

    def get_privacy_spent(self, delta):
        return 0.0, 2
'''


def test_the_0x_engine_is_read_through_the_optimizer_it_is_attached_to(tmp_path: Path) -> None:
    files = {"train.py": ATTACHED.format(engine="PrivacyEngine",
                                         imports="from opacus import PrivacyEngine"),
             "requirements.txt": "opacus==0.13.0\n"}
    [pipeline] = pipelines_of(tmp_path, files)
    assert (pipeline.accountant.name, pipeline.accountant.assumes) == ("opacus-rdp", "SGM+poisson")
    assert pipeline.accountant.span is not None and pipeline.accountant.span.line == 16


def test_a_project_engine_attached_to_the_optimizer_is_not_an_opacus_accountant(
        tmp_path: Path) -> None:
    code = ATTACHED.format(engine="NoisyEngine", imports="from own import NoisyEngine")
    files = {"train.py": code, "own.py": OWN_ENGINE}
    assert all(p.accountant.name == "none" for p in pipelines_of(tmp_path, files))
