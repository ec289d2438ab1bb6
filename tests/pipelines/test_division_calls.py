"""A division written as a call (``torch.div``, ``torch.divide``, ``np.divide``, ``g.div_``)
divides the noisy sum by its last argument, as ``/`` does: the vocabulary's ``divisions`` group,
which the update reader and the divide-by-batch-size fix share."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpcheck.model import Mechanism, SamplingKind
from tests.pipelines.builder import pipelines_of
from tests.pipelines.test_dp_steps import CONDITIONAL_CLIP, TORCH

NOISY = "g + torch.normal(0.0, SIGMA * C, size=g.shape)"


@pytest.mark.parametrize("update", [
    f"p.grad = torch.div({NOISY}, len(xb))",
    f"p.grad = torch.divide({NOISY}, len(xb))",
    f"p.grad = torch.true_divide({NOISY}, xb.shape[0])",
])
def test_a_division_call_by_the_realized_batch_size_is_asgm(tmp_path: Path, update: str) -> None:
    code = CONDITIONAL_CLIP.replace(f"p.grad = ({NOISY}) / LOT", update)
    assert update in code
    [pipeline] = pipelines_of(tmp_path, {"train.py": code, "requirements.txt": TORCH})
    assert (pipeline.mechanism, pipeline.sampling) == (Mechanism.ASGM, SamplingKind.POISSON)
