"""Gradient accumulation: k read from the ``if`` test that gates the step, the logical batch and
its step count, and running totals of realized batch sizes (``seen += len(x)``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpcheck.model import ParamValue, Span
from dpcheck.pipelines.accumulation import (
    MEMORY_MANAGER,
    Accumulation,
    LogicalBatch,
    accumulated_steps,
    find_accumulation,
    logical_batch,
)
from dpcheck.pipelines.divisor import DivisorClassifier
from dpcheck.pipelines.handwritten import HandwrittenAnalyzer
from dpcheck.pipelines.index import ProjectIndex
from dpcheck.pipelines.scope import Ctx
from dpcheck.pipelines.values import Evaluator
from tests.pipelines.builder import make_project

LOOP = '''
import torch

K = 6


def train(model, loader, opt, epochs):
    n = 0
    for epoch in range(epochs):
        for i, (x, y) in enumerate(loader):
            model(x).sum().backward()
            n += 1
{body}
'''


def _found(tmp_path: Path, body: str) -> tuple[Accumulation | None, Evaluator]:
    index = ProjectIndex(make_project(tmp_path, {"m.py": LOOP.format(body=body)}))
    return find_accumulation(index, [Ctx("m.py", "train")]), Evaluator(index)


def _k(found: Accumulation | None, values: Evaluator) -> float | None:
    """k as the logical batch of a physical batch of 1."""
    assert found is not None
    logical = logical_batch(found, ParamValue("batch_size", 1, "literal"), values)
    return logical.size if logical is not None else None


@pytest.mark.parametrize(("body", "flushes"), [
    ("            if (i + 1) % K != 0:\n                opt.signal_skip_step()\n"
     "            opt.step()", False),
    ("            if i % K != K - 1:\n                opt.signal_skip_step(do_skip=True)\n"
     "            opt.step()", False),
    ("            if (i + 1) % K:\n                opt.signal_skip_step()\n            opt.step()",
     False),
    ("            if not (i + 1) % K:\n                pass\n            else:\n"
     "                opt.signal_skip_step()\n            opt.step()", False),
    ("            opt.signal_skip_step(do_skip=(i + 1) % K != 0)\n            opt.step()", False),
    ("            if n % K != 0:\n                opt.signal_skip_step()\n            opt.step()",
     False),
    ("            if (i + 1) % K == 0:\n                opt.step()\n            else:\n"
     "                opt.virtual_step()", False),
    ("            if (i + 1) % K == 0 or i + 1 == len(loader):\n                opt.step()\n"
     "            else:\n                opt.virtual_step()", True),
    ("            if (i + 1) % K != 0 and (i + 1) != len(loader):\n"
     "                opt.virtual_step()\n            else:\n                opt.step()", True),
])
def test_the_factor_is_read_from_the_gate(tmp_path: Path, body: str, flushes: bool) -> None:
    found, values = _found(tmp_path, body)
    assert _k(found, values) == 6
    assert found is not None and found.flushes is flushes and found.multiplies


@pytest.mark.parametrize(("body", "why"), [
    ("            opt.signal_skip_step()\n            opt.step()", "not gated"),
    ("            if (i + 1) % K == 0:\n                opt.signal_skip_step()\n"
     "            opt.step()", "not the k-th"),
    ("            if epoch % K != 0:\n                opt.signal_skip_step()\n"
     "            opt.step()", "does not count the batches"),
    ("            if (i + 1) % K != 0 or epoch > 3:\n                opt.signal_skip_step()\n"
     "            opt.step()", "not gated"),
])
def test_an_unreadable_gate_leaves_the_factor_unknown(tmp_path: Path, body: str, why: str
                                                      ) -> None:
    found, values = _found(tmp_path, body)
    assert found is not None and found.factor is None and why in found.reason
    assert _k(found, values) is None
    assert "not derived" in found.evidence().note


def test_no_skip_signal_and_an_explicit_no_skip_are_not_accumulation(tmp_path: Path) -> None:
    assert _found(tmp_path, "            opt.step()")[0] is None
    body = "            opt.signal_skip_step(do_skip=False)\n            opt.step()"
    assert _found(tmp_path / "b", body)[0] is None


HANDWRITTEN = '''
import torch

ACC = 3
CLIP = 1.0


def add_noise(grad, sigma):
    noise = torch.normal(0.0, sigma * CLIP, size=grad.shape)
    return grad + noise


def train(model, loader, epochs, sigma, lot):
    params = list(model.parameters())
    total = [torch.zeros_like(p) for p in params]
    for epoch in range(epochs):
        for step, (x, y) in enumerate(loader):
            for xi, yi in zip(x, y):
                grads = torch.autograd.grad(model(xi[None]).sum(), params)
                norm = torch.sqrt(sum((g ** 2).sum() for g in grads))
                factor = torch.clamp(CLIP / (norm + 1e-6), max=1.0)
                for t, g in zip(total, grads):
                    t.add_(g * factor)
            if {test}:
                for p, t in zip(params, total):
                    p.grad = {update} / lot
                    t.zero_()
'''


@pytest.mark.parametrize(("test", "update", "k"), [
    ("(step + 1) % ACC == 0", "(t + torch.normal(0.0, sigma * CLIP, size=t.shape))", 3),
    ("step % ACC == ACC - 1", "(t + torch.normal(0.0, sigma * CLIP, size=t.shape))", 3),
    ("not (step + 1) % ACC", "add_noise(t, sigma)", 3),
    ("epoch % ACC == 0", "(t + torch.normal(0.0, sigma * CLIP, size=t.shape))", None),
    ("step > ACC", "(t + torch.normal(0.0, sigma * CLIP, size=t.shape))", None),
])
def test_noise_drawn_on_every_kth_batch_accumulates(tmp_path: Path, test: str, update: str,
                                                    k: int | None) -> None:
    index = ProjectIndex(make_project(tmp_path, {"m.py": HANDWRITTEN.format(test=test,
                                                                            update=update)}))
    scopes = [Ctx("m.py", "train"), Ctx("m.py", "add_noise")]
    draws = HandwrittenAnalyzer(index).analyze(scopes).noise_calls
    assert draws, "the update's noise draw is found"
    noise = frozenset((c.path, c.scope, c.line) for c, _, _ in draws)
    assert find_accumulation(index, scopes) is None  # without the update's noise sites
    found = find_accumulation(index, scopes, noise)
    if k is None:
        assert found is None
    else:
        assert _k(found, Evaluator(index)) == k and found is not None
        assert found.idiom == "gated-noise"


PRIVATIZED = '''
import torch
from opacus.optimizers import DPOptimizer

K = 4


def train(model, loader, epochs):
    plain = torch.optim.SGD(model.parameters(), lr=0.1)
    {build}
    other = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(epochs):
        for i, (x, y) in enumerate(loader):
            model(x).sum().backward()
            if (i + 1) % K == 0:
                {stepped}.step()
'''


@pytest.mark.parametrize(("build", "stepped", "k"), [
    ("private = DPOptimizer(plain, noise_multiplier=1.0, max_grad_norm=1.0, "
     "expected_batch_size=256)", "private", 4),
    ("private = DPOptimizer(plain, noise_multiplier=1.0, max_grad_norm=1.0, "
     "expected_batch_size=256)", "other", None),
])
def test_a_gated_step_of_a_privatized_optimizer_accumulates(tmp_path: Path, build: str,
                                                           stepped: str, k: int | None) -> None:
    """A library privatizer draws the noise at each step of the optimizer it built: that step,
    gated by a modulo test, accumulates; a step of another optimizer does not."""
    index = ProjectIndex(make_project(tmp_path, {"m.py": PRIVATIZED.format(build=build,
                                                                           stepped=stepped)}))
    scopes = [Ctx("m.py", "train")]
    draws = HandwrittenAnalyzer(index).analyze(scopes).noise_calls
    assert draws, "the privatizer's noise is found"
    noise = frozenset((c.path, c.scope, c.line) for c, _, _ in draws)
    found = find_accumulation(index, scopes, noise)
    if k is None:
        assert found is None
    else:
        assert found is not None and _k(found, Evaluator(index)) == k


def test_batch_memory_manager_keeps_the_loader_batch(tmp_path: Path) -> None:
    source = '''
from opacus.utils.batch_memory_manager import BatchMemoryManager


def train(loader, optimizer):
    with BatchMemoryManager(data_loader=loader, max_physical_batch_size=32,
                            optimizer=optimizer) as physical:
        for x, y in physical:
            optimizer.step()
'''
    index = ProjectIndex(make_project(tmp_path, {"m.py": source}))
    found = find_accumulation(index, [Ctx("m.py", "train")])
    assert found is not None and found.idiom == MEMORY_MANAGER and not found.multiplies
    assert "the loader's" in found.evidence().note


def _simulated_steps(size: int, physical: int, k: int, drop_last: bool, flushes: bool) -> int:
    """Steps of one epoch counted by running the gated loop itself (an independent count)."""
    batches = [min(physical, size - start) for start in range(0, size, physical)]
    if drop_last:
        batches = [b for b in batches if b == physical]
    steps = 0
    for i, _ in enumerate(batches):
        if (i + 1) % k == 0 or (flushes and i + 1 == len(batches)):
            steps += 1
    return steps


@pytest.mark.parametrize("size", [1000, 1024, 60000, 50001])
@pytest.mark.parametrize(("physical", "k"), [(64, 4), (250, 4), (256, 8), (100, 1), (7, 3)])
@pytest.mark.parametrize("drop_last", [False, True])
@pytest.mark.parametrize("flushes", [False, True])
def test_rounds_match_the_gated_loop(size: int, physical: int, k: int, drop_last: bool,
                                     flushes: bool) -> None:
    logical = LogicalBatch(ParamValue("batch_size", physical, "literal"),
                           ParamValue("k", k, "literal"), flushes)
    assert logical.rounds(size, drop_last) == _simulated_steps(size, physical, k, drop_last,
                                                               flushes)
    assert logical.size == physical * k
    assert logical.param().value == physical * k and "x" in (logical.param().expression or "")


@pytest.mark.parametrize(("draws", "flushes", "steps"), [(4000, False, 1000), (4001, False, 1000),
                                                         (4001, True, 1001)])
def test_accumulated_steps_of_a_range_loop(tmp_path: Path, draws: int, flushes: bool,
                                           steps: int) -> None:
    values = Evaluator(ProjectIndex(make_project(tmp_path, {"m.py": "K = 4\n"})))
    found = Accumulation("gated-noise", Span("m.py", 1), (Ctx("m.py", "<module>", 2), ["r", "K"]),
                         flushes)
    result = accumulated_steps(found, ParamValue("steps", draws, "literal"), values)
    assert result is not None and result.value == steps
    assert result.value == sum(1 for i in range(draws) if (i + 1) % 4 == 0
                               or (flushes and i + 1 == draws))


RUNNING = '''
import torch
from torchvision import datasets

Q = 0.01


def train(x_all, dataset):
    seen = 0
    count = 0
    fixed = int(len(dataset) * Q)
    for step in range(100):
        mask = torch.rand(len(x_all)) < Q
        x = x_all[mask]
        seen += len(x)
        count += 1
        print(seen, count, fixed)


train(torch.randn(60000, 784), datasets.MNIST("data", train=True, download=True))
'''


def test_a_running_total_has_the_kind_of_what_it_adds(tmp_path: Path) -> None:
    index = ProjectIndex(make_project(tmp_path, {"m.py": RUNNING}))
    divisors = DivisorClassifier(index)
    at = Ctx("m.py", "train", 17)
    assert divisors.classify(["r", "seen"], at).kind == "realized"
    assert divisors.classify(["r", "count"], at).kind == "constant"
    assert divisors.classify(["r", "fixed"], at).kind == "floor-expected"
