"""Training loops over a project generator function (fast-dpsgd ``opacusdp.py``,
bench/REAL_REPOS.md: ``for x, y in data.dataloader(x, y, B)`` where ``dataloader`` yields
``x[i:i + B]`` over ``range(0, n, B)``). The generator is classified by what it yields: fixed
slices (sequential or after a permutation) are shuffle-like fixed batches, items selected by a
Bernoulli mask are Poisson, anything else stays unknown with the reason. Real projects on disk,
the real builder."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from dpcheck.model import Pipeline
from dpcheck.sites.ir import Encoder, Source, walk
from tests.pipelines.builder import pipelines_of

REQUIREMENTS = "torch==1.8.1\nopacus==0.10.0\n"

SEQUENTIAL = '''
def batches(features, targets, width):
    for start in range(0, len(features), width):
        yield features[start:start + width], targets[start:start + width]
'''

PERMUTED = '''
import numpy as np


def batches(features, targets, width=32):
    order = np.random.permutation(len(features))
    for start in range(0, len(features), width):
        picked = order[start:start + width]
        yield features[picked], targets[picked]
'''

MASKED = '''
import numpy as np


def batches(features, targets, rate, rounds):
    for _ in range(rounds):
        keep = np.random.rand(len(features)) < rate
        yield features[keep], targets[keep]
'''

TRAIN = '''
import argparse

import torch
from opacus import PrivacyEngine

import feed

parser = argparse.ArgumentParser()
parser.add_argument("--batch", type=int, default={batch})
args = parser.parse_args()

x, y = torch.randn(6000, 10), torch.randint(0, 2, (6000,))
model = torch.nn.Linear(10, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
engine = PrivacyEngine(model, batch_size=args.batch, sample_size=6000,
                       noise_multiplier=1.1, max_grad_norm=1.0)
engine.attach(optimizer)
for epoch in range(3):
    stream = {call}
    for step, (xb, yb) in enumerate(stream):
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(model(xb), yb).backward()
        optimizer.step()
    print(engine.get_privacy_spent(1e-5))
'''


def _pipelines(tmp_path: Path, feed: str, **scripts: tuple[int, str]) -> dict[str, Pipeline]:
    files = {"feed.py": feed, "requirements.txt": REQUIREMENTS}
    files.update({f"{name}.py": TRAIN.format(batch=batch, call=call)
                  for name, (batch, call) in scripts.items()})
    return {p.path: p for p in pipelines_of(tmp_path, files)}


def _samplers(pipeline: Pipeline) -> list[tuple[str, int, str]]:
    return [(e.span.path, e.span.line, e.note) for e in pipeline.evidence if e.role == "sampler"]


def test_sequential_fixed_slices_are_fixed_batches_of_each_callers_width(tmp_path: Path) -> None:
    """Two scripts share the generator: each one's batch size is the argument it passes."""
    found = _pipelines(tmp_path, SEQUENTIAL,
                       small=(64, "feed.batches(x, y, args.batch)"),
                       large=(128, "feed.batches(x, y, width=args.batch)"))
    for path, batch in (("small.py", 64), ("large.py", 128)):
        pipeline = found[path]
        assert (pipeline.mechanism, pipeline.sampling) == ("fixed-mean", "shuffle")
        assert pipeline.params["batch_size"].value == batch
        samplers = _samplers(pipeline)
        assert samplers[0][:2] == ("feed.py", 3)
        assert "sequential fixed-size batches" in samplers[0][2]
        assert samplers[1][:2] == (path, 19)


def test_slices_of_a_permutation_are_shuffled_fixed_batches(tmp_path: Path) -> None:
    """The width is the parameter's default when the call does not pass it."""
    pipeline = _pipelines(tmp_path, PERMUTED, train=(32, "feed.batches(x, y)"))["train.py"]
    assert (pipeline.mechanism, pipeline.sampling) == ("fixed-mean", "shuffle")
    assert pipeline.params["batch_size"].value == 32
    notes = [note for _, _, note in _samplers(pipeline)]
    assert "after a permutation: shuffled fixed-size batches" in notes[0]
    assert any("permutation" in note for note in notes[2:])


def test_items_selected_by_a_bernoulli_mask_are_poisson(tmp_path: Path) -> None:
    """Opacus 0.x divides by the realized batch: with Poisson batches that is ASGM; the rate
    is read through the call's argument."""
    call = "feed.batches(x, y, 0.01, 100)"
    pipeline = _pipelines(tmp_path, MASKED, train=(60, call))["train.py"]
    assert (pipeline.mechanism, pipeline.sampling) == ("ASGM", "poisson")
    assert pipeline.params["q"].value == pytest.approx(0.01)
    # the generator's range(rounds) counts one pass; the script makes 3 passes of 100
    assert pipeline.params["steps"].value == pytest.approx(300)
    assert _samplers(pipeline)[0][:2] == ("feed.py", 7)


@pytest.mark.parametrize(
    ("feed", "reason"),
    [
        # a slice to the end is not of one fixed width
        (SEQUENTIAL.replace("targets[start:start + width]", "targets[start:]"),
         "not of one fixed width"),
        # fixed slices and a Bernoulli draw: which one makes the batch is not decided
        (SEQUENTIAL.replace("    for start", "    keep = np.random.rand(9) < 0.1\n    for start"),
         "drawn poisson"),
        # indexed items with no sampling draw in the generator
        (SEQUENTIAL.replace("features[start:start + width], targets[start:start + width]",
                            "features[width], targets[width]"),
         "without a sampling draw"),
        (SEQUENTIAL.replace("yield features[start:start + width], targets[start:start + width]",
                            "yield from zip(features, targets)"),
         "delegates to with yield from: zip() is not a loader"),
    ],
    ids=["open-slice", "slices-and-mask", "no-draw", "yield-from"],
)
def test_other_generators_stay_unknown_with_the_reason(tmp_path: Path, feed: str,
                                                      reason: str) -> None:
    pipeline = _pipelines(tmp_path, feed, train=(64, "feed.batches(x, y, args.batch)"))[
        "train.py"]
    assert pipeline.sampling == "unknown"
    assert pipeline.mechanism == "unknown"
    [update] = [e for e in pipeline.evidence if e.role == "update"
                and e.note.startswith("mechanism unknown")]
    assert reason in update.note


def test_a_slice_keeps_its_bounds_in_the_ir_and_walk_does_not_enter_them() -> None:
    """The generator reader compares ``[i:i + B]`` with the loop; multi-dimensional keys stay
    opaque, and slice bounds are not values other classifiers should see."""
    source = "x[i:i + f(b)], y[a:b, 0], z[::2]"
    ir = Encoder(Source(source), lambda _name, _ir: None).encode(ast.parse(source).body[0].value)
    first, second, third = ir[1]
    assert first[2][:3] == ["slice", ["r", "i"], ["b", "+", ["r", "i"], first[2][2][3]]]
    assert first[2][2][3][0] == "call" and first[2][3] == ["c", None]
    assert second[2] == ["slice"]
    assert third[2] == ["slice", ["c", None], ["c", None], ["n", 2]]
    assert not [node for node in walk(ir) if node[0] == "call"]
