"""Opacus updates only in its optimizer's ``step``: a ``make_private`` whose optimizer is never
stepped afterwards makes no update, so no update rule is judged (the DP code is still reported,
as DP107). A step method called on it, or the optimizer leaving sight (a library call, an
alias, a return), keeps the pipeline; a project function it is handed to is read the same way."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.pipelines.builder import pipelines_of

HEAD = '''
import torch
from opacus import PrivacyEngine
from torch.utils.data import DataLoader, TensorDataset

data = TensorDataset(torch.randn(1000, 4), torch.randint(0, 2, (1000,)))


def fit(model, opt, loader):
    for x, y in loader:
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
'''

MAKE = '''model, opt, loader = engine.make_private(
        module=model, optimizer=torch.optim.SGD(model.parameters(), lr=0.1),
        data_loader=DataLoader(data, batch_size=100), noise_multiplier=1.0, max_grad_norm=1.0)'''

CASES = {
    "never read": ("""
def main():
    engine = PrivacyEngine()
    model = torch.nn.Linear(4, 2)
    {make}
    print(len(loader), engine.get_epsilon(1e-5))
""", 0),
    "stepped later": ("""
def main():
    engine = PrivacyEngine()
    model = torch.nn.Linear(4, 2)
    {make}
    for x, y in loader:
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
    print(engine.get_epsilon(1e-5))
""", 1),
    "handed to a function": ("""
def main():
    engine = PrivacyEngine()
    model = torch.nn.Linear(4, 2)
    {make}
    fit(model, opt, loader)
    print(engine.get_epsilon(1e-5))
""", 1),
    "handed to a project function that only restores it": ("""
def restore(path, model, optimizer):
    state = torch.load(path)
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])


def main():
    engine = PrivacyEngine()
    model = torch.nn.Linear(4, 2)
    {make}
    restore("ckpt.pt", model, opt)
    opt.zero_grad()
    print(engine.get_epsilon(1e-5))
""", 0),
    "handed to a library scheduler": ("""
def main():
    engine = PrivacyEngine()
    model = torch.nn.Linear(4, 2)
    {make}
    schedule = torch.optim.lr_scheduler.StepLR(opt, step_size=10)
    print(schedule, engine.get_epsilon(1e-5))
""", 1),
    "aliased": ("""
def main():
    engine = PrivacyEngine()
    model = torch.nn.Linear(4, 2)
    {make}
    inner = opt.original_optimizer
    print(inner, engine.get_epsilon(1e-5))
""", 1),
    "loop-carried": ("""
def main():
    engine = PrivacyEngine()
    opt = None
    for round_ in range(3):
        if opt is not None:
            fit(model, opt, loader)
        model = torch.nn.Linear(4, 2)
        {make}
    print(engine.get_epsilon(1e-5))
""", 1),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_pipeline_forms_only_where_the_private_optimizer_may_step(tmp_path: Path, case: str) -> None:
    body, count = CASES[case]
    text = HEAD + body.format(make=MAKE) + '\n\nif __name__ == "__main__":\n    main()\n'
    pipelines = pipelines_of(tmp_path, {"train.py": text, "requirements.txt": "opacus==1.4.0\n"})
    assert len(pipelines) == count, [p.evidence for p in pipelines]


def test_a_module_level_engine_read_by_a_function_of_the_module_may_step(tmp_path: Path) -> None:
    text = HEAD + """
engine = PrivacyEngine()
model = torch.nn.Linear(4, 2)
""" + MAKE.replace("\n        ", "\n    ") + """


def train():
    fit(model, opt, loader)


train()
print(engine.get_epsilon(1e-5))
"""
    pipelines = pipelines_of(tmp_path, {"train.py": text, "requirements.txt": "opacus==1.4.0\n"})
    assert len(pipelines) == 1
