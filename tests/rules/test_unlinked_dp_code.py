"""DP107 unlinked-dp-code: DP code from which no complete pipeline forms is reported once per
file, with what was seen and what could not be linked; formed pipelines, unused imports, noise
on data and a DP library's own source tree are not its subject."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpcheck.cli import main
from dpcheck.model import Evidence, Role, Severity, Span, UnlinkedCode
from dpcheck.pipelines import link_project
from dpcheck.rules import check_unlinked
from dpcheck.rules.unlinked_dp_code import check
from tests.pipelines.builder import make_project

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"

CALCULATOR = '''
import tensorflow_privacy as tfp

ORDERS = [1 + x / 10.0 for x in range(1, 100)] + list(range(12, 64))


def epsilon(n, batch, sigma, epochs, delta):
    q = batch / n
    rdp = tfp.compute_rdp(q=q, noise_multiplier=sigma, steps=int(epochs * n / batch), orders=ORDERS)
    return tfp.get_privacy_spent(ORDERS, rdp, target_delta=delta)[0]


if __name__ == "__main__":
    print(epsilon(60000, 256, 1.1, 60, 1e-5))
'''

TRAINER = '''
import jax
import jax.numpy as jnp
import numpy as np


class Trainer:
    def __init__(self, sigma, clip, batch):
        self.sigma, self.clip, self.batch = sigma, clip, batch

    def train(self, params, xs, ys, key):
        def loss(p, x, y):
            return jnp.mean((x @ p - y) ** 2)

        per_example = jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))
        for start in range(0, len(xs), self.batch):
            xb, yb = xs[start:start + self.batch], ys[start:start + self.batch]
            grads = per_example(params, xb, yb)
            norms = jnp.linalg.norm(grads, axis=1)
            clipped = grads * jnp.minimum(1.0, self.clip / norms)[:, None]
            key, sub = jax.random.split(key)
            noisy = clipped.sum(0) + self.sigma * self.clip * jax.random.normal(sub, params.shape)
            params = params - 0.1 * noisy / len(xb)
        return params
'''


def _link(tmp_path: Path, files: dict[str, str]) -> tuple[list, list]:
    project = make_project(tmp_path, files)
    linking = link_project(project)
    return linking.pipelines, check_unlinked(linking.unlinked, project)


def test_an_accountant_that_no_pipeline_links_is_reported_where_it_is(tmp_path: Path) -> None:
    """The trainer forms a pipeline without an accountant (it claims no epsilon: not this rule's
    case); the epsilon is computed by a separate script no pipeline links: that is."""
    pipelines, findings = _link(tmp_path, {"trainer.py": TRAINER, "privacy/calc.py": CALCULATOR,
                                           "requirements.txt": "tensorflow-privacy==0.9.0\n"})
    assert [p.entry for p in pipelines] == ["trainer.py::Trainer.train"]
    [finding] = findings
    assert (finding.rule, finding.severity) == ("DP107", Severity.INFO)
    assert (finding.span.path, finding.span.line) == ("privacy/calc.py", 8)
    assert "TensorFlow Privacy used" in finding.message and "an accountant call" in finding.message
    assert "per-example clipping" in finding.message.split("not found or not linked:")[1]
    assert {e.role for e in finding.evidence} == {Role.LIBRARY, Role.ACCOUNTANT}


def test_an_import_that_is_never_called_is_not_a_marker(tmp_path: Path) -> None:
    code = "import opacus\nimport torch\n\nprint(torch.__version__, opacus)\n"
    assert _link(tmp_path, {"env.py": code}) == ([], [])


def test_a_dp_librarys_own_tree_is_not_a_use_of_it(tmp_path: Path) -> None:
    """In the library's own repository its imports name project modules, not the library."""
    files = {
        "opacus/__init__.py": "from opacus.layers import describe\n",
        "opacus/layers.py": "def describe(module):\n    return type(module).__name__\n",
        "examples/show.py": ("from opacus.layers import describe\n\n"
                             "if __name__ == '__main__':\n    print(describe(1))\n"),
    }
    assert _link(tmp_path, files)[1] == []
    installed = {"show.py": files["examples/show.py"]}
    [finding] = _link(tmp_path / "user", installed)[1]
    assert "Opacus used (line 4)" in finding.message


def _unlinked(path: str, line: int, role: Role, entry: str) -> UnlinkedCode:
    return UnlinkedCode(entry, path, 1, (Evidence(role, Span(path, line), "seen"),),
                        ("an accountant",), ("Opacus",))


def test_one_finding_per_file_anchored_on_its_first_own_marker(tmp_path: Path) -> None:
    """Entries of one file merge; an entry whose file holds no marker (a script driving a
    helper module) is reported where its DP code is; an entry with markers of its own keeps
    its finding in its own file, naming the markers elsewhere by path."""
    project = make_project(tmp_path, {"a.py": "x = 1\n", "b.py": "y = 2\n", "c.py": "z = 3\n"})
    codes = (_unlinked("a.py", 30, Role.NOISE, "a.py"),
             _unlinked("a.py", 12, Role.CLIP, "a.py::f"),
             UnlinkedCode("b.py", "b.py", 1, (Evidence(Role.CLIP, Span("a.py", 12), "seen"),),
                          ("Gaussian noise added to the clipped gradients",)),
             UnlinkedCode("c.py", "c.py", 1, (Evidence(Role.ACCOUNTANT, Span("c.py", 5), "seen"),
                                              Evidence(Role.CLIP, Span("a.py", 12), "seen")),
                          ("Gaussian noise added to the clipped gradients",)))
    hits = list(check(codes, project))
    assert [(h.span.path, h.span.line, h.entries) for h in hits] == [
        ("a.py", 12, ("a.py", "a.py::f", "b.py")), ("c.py", 5, ("c.py",))]
    assert hits[0].missing == ("an accountant", "Gaussian noise added to the clipped gradients")
    assert "per-example clipping (line 12)" in hits[0].message()
    assert "per-example clipping (a.py:12)" in hits[1].message()
    assert "used" not in hits[0].message() and "an accountant call (line 5)" in hits[1].message()


@pytest.mark.parametrize(("fail_on", "code"), [("info", 1), ("warning", 0)])
def test_fail_on_info_makes_a_gate_refuse_unlinked_dp_code(
        fail_on: str, code: int, capsys: pytest.CaptureFixture[str]) -> None:
    folder = FIXTURES / "unlinked_external_noise_note"
    assert main(["scan", "--no-cache", "--fail-on", fail_on, str(folder)]) == code
    assert "DP107" in capsys.readouterr().out


VENDORED_RDP = '''
import math

import numpy as np


def compute_rdp(q, noise_multiplier, steps, orders):
    return np.array([steps * q * q * order / noise_multiplier ** 2 for order in orders])


def get_privacy_spent(orders, rdp, target_eps=None, target_delta=None):
    eps = [r + math.log(1 / target_delta) / (o - 1) for o, r in zip(orders, rdp)]
    return min(eps), target_delta, None


if __name__ == "__main__":
    ORDERS = [1.5, 2, 4, 8, 16, 32]
    print(get_privacy_spent(ORDERS, compute_rdp(0.01, 1.1, 1000, ORDERS), target_delta=1e-5))
'''


def test_a_vendored_accountants_own_demonstration_is_not_a_use_of_it(tmp_path: Path) -> None:
    assert _link(tmp_path, {"rdp_accountant.py": VENDORED_RDP}) == ([], [])
    calculator = "from rdp_accountant import compute_rdp, get_privacy_spent\n\n" \
                 "ORDERS = [2, 4, 8]\n" \
                 "print(get_privacy_spent(ORDERS, compute_rdp(0.01, 1.0, 500, ORDERS), target_delta=1e-5))\n"
    files = {"rdp_accountant.py": VENDORED_RDP, "epsilon.py": calculator}
    assert [(f.rule, f.span.path) for f in _link(tmp_path / "p", files)[1]] == \
        [("DP107", "epsilon.py")]


JACOBIAN_CHECK = '''
import torch
from torch.func import vjp, vmap


def check_batched(f, x):
    out, pullback = vjp(f, x)
    grad_outputs = [torch.randn_like(out) for _ in range(2)]
    batched = vmap(pullback)(torch.stack(grad_outputs))
    looped = torch.stack([pullback(v)[0] for v in grad_outputs])
    return torch.allclose(batched[0], looped)


if __name__ == "__main__":
    print(check_batched(torch.sin, torch.randn(5)))
'''


def test_noise_named_like_a_gradient_is_not_noise_on_gradients(tmp_path: Path) -> None:
    """Random vectors for a vector-Jacobian check are called grad_outputs and batched with
    vmap: no value computed as a gradient receives them, so no DP marker."""
    assert _link(tmp_path, {"check.py": JACOBIAN_CHECK}) == ([], [])
