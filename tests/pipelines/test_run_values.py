"""A noise multiplier that differs between the runs its callers make (a sweep) is judged at the
lowest of them; the values are listed only where every run's value is known and no pairing of
two varying values is invented. Real parsing and pipeline building on small projects."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpcheck.model import ParamValue
from tests.pipelines.builder import pipelines_of

SCRIPT = '''
import torch
from opacus import PrivacyEngine
from torch.utils.data import DataLoader
from torchvision import datasets

{constants}


def trial(bound, noise, lot=250):
    data = datasets.MNIST("data", train=True)
    net = torch.nn.Linear(784, 10)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    engine = PrivacyEngine()
    net, opt, loader = engine.make_private(
        module=net, optimizer=opt, data_loader=DataLoader(data, batch_size=lot, shuffle=True),
        noise_multiplier={sigma}, max_grad_norm=bound, poisson_sampling=False,
    )
    for x, y in loader:
        opt.step()


def main():
{calls}


if __name__ == "__main__":
    main()
'''


def _params(tmp_path: Path, calls: str, sigma: str = "noise", constants: str = "") -> dict[str, ParamValue]:
    text = SCRIPT.format(constants=constants, sigma=sigma, calls=calls)
    [pipeline] = pipelines_of(tmp_path, {"train.py": text, "requirements.txt": "opacus==1.4.0\n"})
    return pipeline.params


def test_literal_at_each_call_site_gives_the_lowest(tmp_path: Path) -> None:
    params = _params(tmp_path, "    trial(1.0, 0.7)\n    trial(2.0, 0.3)\n    trial(1.0, 1.1)")
    assert params["sigma"].value == 0.3
    assert params["sigma"].source == "lowest-over-runs"
    assert "0.3, 0.7, 1.1" in (params["sigma"].expression or "")
    assert "clip" not in params  # two clip values: no worst case for every rule (unresolved)


def test_loop_over_a_literal_list_and_subscripts(tmp_path: Path) -> None:
    params = _params(tmp_path, "    for i in range(len(LEVELS)):\n        trial(1.0, LEVELS[i])",
                     constants="LEVELS = [0.9, 0.45, 2.0]")
    assert (params["sigma"].value, params["sigma"].source) == (0.45, "lowest-over-runs")


def test_a_constant_index_reads_one_element(tmp_path: Path) -> None:
    params = _params(tmp_path, "    trial(1.0, LEVELS[2])\n    trial(1.0, LEVELS[0])",
                     constants="LEVELS = [0.9, 0.05, 2.0]")
    assert params["sigma"].value == 0.9  # never 0.05: no run uses LEVELS[1]


def test_one_varying_operand_in_arithmetic(tmp_path: Path) -> None:
    params = _params(tmp_path, "    trial(1.0, 0.01)\n    trial(1.0, 0.02)", sigma="noise * lot / 5")
    assert params["sigma"].value == pytest.approx(0.5)


@pytest.mark.parametrize("calls", [
    # noise and lot vary together per call: pairing 0.01 with 100 would invent a run
    "    trial(1.0, 0.01, lot=1000)\n    trial(1.0, 1.0, lot=100)",
    # one run's value is not known
    "    trial(1.0, 0.5)\n    trial(1.0, float(input()))",
])
def test_no_value_is_invented(tmp_path: Path, calls: str) -> None:
    params = _params(tmp_path, calls, sigma="noise * lot / 5")
    assert "sigma" not in params  # unresolved


def test_a_list_changed_after_it_is_written_is_not_read(tmp_path: Path) -> None:
    calls = "    levels = [0.9, 1.2]\n    levels.append(0.01)\n    for level in levels:\n        trial(1.0, level)"
    params = _params(tmp_path, calls)
    assert "sigma" not in params  # unresolved
