"""Steps of a DP-SGD update that are not a known call (``dpcheck.pipelines.steps``): clips
written as a test on the norm or a masked bound, noise returned by a project helper or added in
a backward hook, loops that differentiate one example at a time, library privatizers matched by
import-qualified name, and functions a command-line framework runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpcheck.model import Mechanism, SamplingKind
from dpcheck.pipelines.index import ProjectIndex
from dpcheck.pipelines.scope import Ctx
from dpcheck.pipelines.steps import is_noise_draw, scope_clips
from dpcheck.sites.nodes import Call
from tests.pipelines.builder import make_project, pipelines_of

TORCH = "torch==2.2.0\nopacus==1.4.0\n"

CONDITIONAL_CLIP = '''
import torch
from opacus.accountants import RDPAccountant
from torch import nn

SIGMA, C, Q, LOT = 1.0, 3.0, 0.01, 100


def bound(model, c):
    total = torch.sqrt(sum(torch.sum(p.grad * p.grad) for p in model.parameters()))
    if total > c:
        for p in model.parameters():
            p.grad = torch.div(p.grad, total / c)
    return [p.grad.clone() for p in model.parameters()]


def main():
    xs, ys = torch.load("xs.pt"), torch.load("ys.pt")
    model = nn.Linear(xs.shape[1], 2)
    accountant = RDPAccountant()
    for step in range(1000):
        keep = torch.rand(len(xs)) < Q
        xb, yb = xs[keep], ys[keep]
        losses = nn.functional.cross_entropy(model(xb), yb, reduction="none")
        summed = None
        for i in range(losses.shape[0]):
            model.zero_grad()
            losses[i].backward(retain_graph=True)
            grads = bound(model, C)
            summed = grads if summed is None else [a + b for a, b in zip(summed, grads)]
        for p, g in zip(model.parameters(), summed):
            p.grad = (g + torch.normal(0.0, SIGMA * C, size=g.shape)) / LOT
        accountant.step(noise_multiplier=SIGMA, sample_rate=Q)


if __name__ == "__main__":
    main()
'''


def test_a_division_under_a_norm_test_is_a_clip(tmp_path: Path) -> None:
    [pipeline] = pipelines_of(tmp_path, {"train.py": CONDITIONAL_CLIP,
                                         "requirements.txt": TORCH})
    assert (pipeline.mechanism, pipeline.sampling) == (Mechanism.SGM, SamplingKind.POISSON)
    clips = [e.span.line for e in pipeline.evidence if e.role == "clip"]
    assert clips == [12]


def test_without_the_norm_test_the_same_division_is_no_clip(tmp_path: Path) -> None:
    """The noise on the gradients and the accountant still anchor the pipeline (its sampling is
    checked however sensitivity is bounded), but no clip is taken from the division."""
    unguarded = CONDITIONAL_CLIP.replace("    if total > c:\n        for p", "    for p").replace(
        "            p.grad = torch.div", "        p.grad = torch.div").replace(
        "total / c)", "c)")
    [pipeline] = pipelines_of(tmp_path, {"train.py": unguarded, "requirements.txt": TORCH})
    [clip] = [e.note for e in pipeline.evidence if e.role == "clip"]
    assert clip.startswith("no per-example clip seen")
    assert "clip" not in pipeline.params


MASKED = '''
import torch
from backpack import backpack, extend
from backpack.extensions import BatchGrad
from torch import nn
from torch.utils.data import DataLoader
from torchvision import datasets, transforms

SIGMA, C, LR = 1.2, 4.0, 0.1


def clip_rows(params, c):
    n = params[0].grad_batch.shape[0]
    sq = torch.zeros(n)
    for p in params:
        sq += p.grad_batch.reshape(n, -1).pow(2).sum(dim=1)
    ratio = c / torch.sqrt(sq)
    ratio[ratio > 1] = 1
    for p in params:
        p.grad_batch *= ratio.view([n] + [1] * (p.grad_batch.dim() - 1))
        p.grad = p.grad_batch.sum(dim=0)


def main():
    data = datasets.MNIST("data", train=True, download=True, transform=transforms.ToTensor())
    loader = DataLoader(data, batch_size=250, shuffle=True)
    model = extend(nn.Sequential(nn.Flatten(), nn.Linear(784, 10)))
    loss_fn = extend(nn.CrossEntropyLoss(reduction="sum"))
    for x, y in loader:
        model.zero_grad()
        with backpack(BatchGrad()):
            loss_fn(model(x), y).backward()
        clip_rows(list(model.parameters()), C)
        for p in model.parameters():
            p.grad.data += torch.normal(0.0, SIGMA * C, size=p.grad.shape)
            p.data -= LR * p.grad / 250


if __name__ == "__main__":
    main()
'''


def test_a_masked_store_bounding_a_norm_ratio_is_a_clip(tmp_path: Path) -> None:
    [pipeline] = pipelines_of(tmp_path, {"train.py": MASKED, "requirements.txt": TORCH})
    assert (pipeline.mechanism, pipeline.sampling) == (Mechanism.FIXED_MEAN,
                                                       SamplingKind.SHUFFLE)
    assert 17 in [e.span.line for e in pipeline.evidence if e.role == "clip"]


HELPER_NOISE = '''
import torch
from torch import nn


def gaussian_like(tensor, clip, sigma):
    draw = torch.normal(0.0, sigma * clip, size=tensor.shape)
    return draw


class Client:
    def __init__(self, xs, ys, q, clip, sigma):
        self.xs, self.ys, self.q = xs, ys, q
        self.clip, self.sigma = clip, sigma
        self.model = nn.Linear(xs.shape[1], 2)

    def local_round(self):
        keep = torch.rand(len(self.xs)) < self.q
        xb, yb = self.xs[keep], self.ys[keep]
        sums = {k: torch.zeros_like(v) for k, v in self.model.named_parameters()}
        losses = nn.functional.cross_entropy(self.model(xb), yb, reduction="none")
        for i in range(losses.shape[0]):
            losses[i].backward(retain_graph=True)
            nn.utils.clip_grad_norm_(self.model.parameters(), max_norm=self.clip)
            for k, v in self.model.named_parameters():
                sums[k] += v.grad
            self.model.zero_grad()
        for k, v in self.model.named_parameters():
            sums[k] += gaussian_like(sums[k], self.clip, self.sigma)
            v.grad = sums[k] / len(xb)
'''


def test_noise_returned_by_a_project_helper_is_a_draw_where_it_is_called(tmp_path: Path) -> None:
    """A class nothing in the repository calls (a notebook drives it) is its own entry; the
    noise comes back from a helper and is added in place to a dict item; the loop
    differentiates one element of the loss vector per iteration, so the global clip call
    inside it clips per example."""
    [pipeline] = pipelines_of(tmp_path, {"client.py": HELPER_NOISE, "requirements.txt": TORCH})
    assert pipeline.entry == "client.py::Client.local_round"
    assert pipeline.mechanism == Mechanism.ASGM
    assert [e.span.line for e in pipeline.evidence if e.role == "noise"] == [28]


def test_a_helper_whose_draw_is_not_returned_is_not_noise(tmp_path: Path) -> None:
    silent = HELPER_NOISE.replace("    return draw\n", "    return tensor * 0\n")
    assert pipelines_of(tmp_path, {"client.py": silent, "requirements.txt": TORCH}) == []


HOOK = '''
import torch
from torch import nn

C, SIGMA = 1.0, 0.8


def private_hook(module, grad_input, grad_output):
    g = grad_input[0]
    rows = g.reshape(g.shape[0], -1)
    lengths = torch.norm(rows, p=2, dim=1)
    coef = C / (lengths + 1e-10)
    coef = torch.min(coef, torch.ones_like(coef))
    rows = coef.unsqueeze(-1) * rows
    rows = rows + SIGMA * C * torch.randn_like(rows)
    return (rows.view(g.shape),) + tuple(grad_input[1:])


def build():
    critic = nn.Sequential(nn.Conv2d(1, 8, 3), nn.Flatten(), nn.Linear(8 * 26 * 26, 1))
    critic[0].register_full_backward_hook(private_hook)
    return critic
'''


def test_noise_added_in_a_backward_hook_forms_a_pipeline(tmp_path: Path) -> None:
    """The hook's parameters are gradients (it is registered as a backward hook), the clip
    factor is bounded after its norm was computed one assignment earlier."""
    [pipeline] = pipelines_of(tmp_path, {"gan.py": HOOK, "requirements.txt": TORCH})
    assert pipeline.entry == "gan.py::private_hook"
    assert {e.role for e in pipeline.evidence} >= {"clip", "noise", "per-sample-grad"}


JAX_PRIVACY = '''
import dp_accounting
import jax
import jax.numpy as jnp
import jax_privacy
import numpy as np
from jax_privacy import noise_addition

BATCH, CLIP, SIGMA, N = 256, 1.0, 1.1, 50000


def loss(params, x, y):
    return jnp.mean((x @ params - y) ** 2)


def main():
    xs, ys = np.load("x.npy"), np.load("y.npy")
    params = jnp.zeros(xs.shape[1])
    clipped = jax_privacy.clipped_grad(loss, l2_clip_norm=CLIP, batch_argnums=(1, 2))
    privatizer = noise_addition.gaussian_privatizer(stddev=SIGMA * CLIP, prng_key=jax.random.key(0))
    state = privatizer.init(params)
    rng = np.random.default_rng(0)
    for step in range(2000):
        keep = rng.random(N) < BATCH / N
        grads = clipped(params, xs[keep], ys[keep])
        noisy_grads, state = privatizer.update(grads, state)
        params = params - 0.1 * noisy_grads / BATCH


if __name__ == "__main__":
    main()
'''


def test_jax_privacy_clipped_grad_and_privatizer_are_the_update(tmp_path: Path) -> None:
    [pipeline] = pipelines_of(tmp_path, {"train.py": JAX_PRIVACY,
                                         "requirements.txt": "jax-privacy==1.0.0\n"})
    assert (pipeline.mechanism, pipeline.sampling) == (Mechanism.SGM, SamplingKind.POISSON)
    roles = {e.role: e.span.line for e in pipeline.evidence}
    assert roles["clip"] == 24 and roles["noise"] == 25


def test_a_project_function_named_like_a_privatizer_is_not_one(tmp_path: Path) -> None:
    own = JAX_PRIVACY.replace("import jax_privacy\n", "").replace(
        "from jax_privacy import noise_addition\n", "import noise_addition\n").replace(
        "jax_privacy.clipped_grad", "noise_addition.clipped_grad")
    module = "def clipped_grad(f, **kw):\n    return f\n\n\n" \
             "def gaussian_privatizer(**kw):\n    return None\n"
    assert pipelines_of(tmp_path, {"train.py": own, "noise_addition.py": module,
                                   "requirements.txt": "jax==0.4.30\n"}) == []


DP_OPTIMIZER = '''
import torch
from opacus import GradSampleModule
from opacus.optimizers import DPOptimizer
from torch import nn
from torch.utils.data import DataLoader
from torchvision import datasets, transforms


def main():
    data = datasets.CIFAR10("data", train=True, download=True, transform=transforms.ToTensor())
    q = 256 / len(data)
    loader = DataLoader(data, batch_size=256, shuffle=True)
    model = GradSampleModule(nn.Sequential(nn.Flatten(), nn.Linear(3072, 10)))
    optimizer = DPOptimizer(
        torch.optim.SGD(model.parameters(), lr=0.1),
        noise_multiplier=1.0,
        max_grad_norm=1.0,
        expected_batch_size=int(len(data) * q),
    )
    for x, y in loader:
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()


if __name__ == "__main__":
    main()
'''


def test_opacus_dp_optimizer_used_directly_divides_by_its_argument(tmp_path: Path) -> None:
    [pipeline] = pipelines_of(tmp_path, {"train.py": DP_OPTIMIZER, "requirements.txt": TORCH})
    assert pipeline.sampling == SamplingKind.SHUFFLE
    assert [e.note.split(":")[0] for e in pipeline.evidence if e.role == "divisor"] == \
        ["floor-expected"]


TYPER = '''
import torch
import typer
from opacus import PrivacyEngine
from torch import nn
from torch.utils.data import DataLoader
from torchvision import datasets, transforms

app = typer.Typer()
DATA = datasets.MNIST("data", train=True, download=True, transform=transforms.ToTensor())


@app.command()
def fit(epochs: int = 3, batch_size: int = 128, sigma: float = 1.0):
    model = nn.Sequential(nn.Flatten(), nn.Linear(784, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = DataLoader(DATA, batch_size=batch_size)
    model, optimizer, loader = PrivacyEngine().make_private(
        module=model, optimizer=optimizer, data_loader=loader, noise_multiplier=sigma,
        max_grad_norm=1.0)
    for _ in range(epochs):
        for x, y in loader:
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            optimizer.step()


if __name__ == "__main__":
    app()
'''


def test_a_typer_command_is_run_by_its_script(tmp_path: Path) -> None:
    [pipeline] = pipelines_of(tmp_path, {"cli.py": TYPER, "requirements.txt": TORCH})
    assert pipeline.entry == "cli.py"


def test_a_decorator_of_another_library_does_not_make_an_entry(tmp_path: Path) -> None:
    other = TYPER.replace("import typer\n", "import functools\n").replace(
        "app = typer.Typer()\n", "").replace("@app.command()", "@functools.lru_cache()").replace(
        "    app()", "    print(DATA)")
    [pipeline] = pipelines_of(tmp_path, {"cli.py": other, "requirements.txt": TORCH})
    assert pipeline.entry == "cli.py::fit"


def _scope_clips(tmp_path: Path, source: str) -> bool:
    index = ProjectIndex(make_project(tmp_path, {"m.py": source}))
    module = Ctx("m.py", "<module>")
    scope = index.scope(module)
    return scope is not None and scope_clips(scope, module, index)


@pytest.mark.parametrize(("source", "clips"), [
    ("ratio = C / norms\nratio[ratio > 1] = 1\n", True),
    ("ratio = C / norms\nratio[ratio > 1] = 1.0\n", True),
    ("excess = norms - C\nexcess[excess < 0] = 0\n", False),
    ("ratio = C / sizes\nratio[ratio > 1] = 1\n", False),
])
def test_a_masked_store_clips_when_it_bounds_a_norm_factor_at_one(
        tmp_path: Path, source: str, clips: bool) -> None:
    assert _scope_clips(tmp_path, source) is clips


@pytest.mark.parametrize(("source", "clips"), [
    # torch's clip-by-norm API under a name of the project's choosing clips
    ("from torch.nn.utils import clip_grad_norm_ as bound_norm\nbound_norm(ps, 1.0)\n", True),
    ("import torch\ntorch.nn.utils.clip_grad_norm_(ps, 1.0)\n", True),
    # a project function that shares the API's name is project code, judged by what it does
    ("def clip_grad_norm_(ps, c):\n    return ps\nclip_grad_norm_(ps, 1.0)\n", False),
    # a bound taken of a norm clips; a project's own ``clip`` of a norm is not a bound
    ("import torch\nfactor = torch.clamp(C / norms, max=1.0)\n", True),
    ("factor = min(1.0, C / norm)\n", True),
    ("def min(a, b):\n    return a\nfactor = min(1.0, C / norm)\n", False),
    ("def clip(x, top):\n    return x\nfactor = clip(C / norm, 1.0)\n", False),
])
def test_clip_calls_are_matched_by_import_qualified_name(tmp_path: Path, source: str,
                                                         clips: bool) -> None:
    assert _scope_clips(tmp_path, source) is clips


IN_PLACE = '''
import torch
from opacus.accountants import RDPAccountant
from torch import nn
from torch.func import functional_call, grad, vmap

SIGMA, C, Q, LOT = 1.0, 1.0, 0.01, 100
xs, ys = torch.load("x.pt"), torch.load("y.pt")
net = nn.Linear(xs.shape[1], 2)
w = {k: v.detach() for k, v in net.named_parameters()}


def example_loss(p, x, y):
    return nn.functional.cross_entropy(functional_call(net, p, (x[None],)), y[None])


per_example = vmap(grad(example_loss), in_dims=(None, 0, 0))
accountant = RDPAccountant()
for step in range(100):
    keep = torch.rand(len(xs)) < Q
    gs = per_example(w, xs[keep], ys[keep])
    norms = torch.sqrt(sum(g.flatten(1).pow(2).sum(1) for g in gs.values()))
    factor = torch.clamp(C / norms, max=1.0)
    for k, g in gs.items():
        s = torch.einsum("i,i...->...", factor, g)
        s.add_(torch.randn_like(s) * SIGMA * C)
        w[k] = w[k] - 0.1 * s / LOT
    accountant.step(noise_multiplier=SIGMA, sample_rate=Q)
'''


def test_noise_added_in_place_by_add_underscore_is_the_update(tmp_path: Path) -> None:
    [pipeline] = pipelines_of(tmp_path, {"loop.py": IN_PLACE, "requirements.txt": TORCH})
    assert (pipeline.mechanism, pipeline.sampling) == (Mechanism.SGM, SamplingKind.POISSON)
    assert [e.span.line for e in pipeline.evidence if e.role == "noise"] == [25]


MAIN_BLOCK_IMPORT = '''
import torch
from torch import nn
from torch.utils.data import DataLoader
from torchvision import datasets, transforms


def main(epochs=3, sigma=1.0):
    data = datasets.MNIST("data", train=True, download=True, transform=transforms.ToTensor())
    loader = DataLoader(data, batch_size=128, shuffle=True)
    model = nn.Sequential(nn.Flatten(), nn.Linear(784, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    engine = PrivacyEngine()
    model, optimizer, loader = engine.make_private(
        module=model, optimizer=optimizer, data_loader=loader, noise_multiplier=sigma,
        max_grad_norm=1.0, poisson_sampling=False)
    for _ in range(epochs):
        for x, y in loader:
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            optimizer.step()


if __name__ == "__main__":
    from opacus import PrivacyEngine
    main()
'''


def test_a_name_imported_in_the_main_block_is_the_library_object(tmp_path: Path) -> None:
    [pipeline] = pipelines_of(tmp_path, {"train.py": MAIN_BLOCK_IMPORT,
                                         "requirements.txt": TORCH + "torchvision==0.17.0\n"})
    assert (pipeline.entry, pipeline.library) == ("train.py", "opacus==1.4.0")
    assert pipeline.sampling == SamplingKind.SHUFFLE


@pytest.mark.parametrize(("source", "draws"), [
    ("import torch\nnoise = torch.normal(0.0, s, size=(3,))\n", True),
    ("from torch import randn_like as jitter\nnoise = jitter(g)\n", True),
    ("import numpy as np\nrng = np.random.default_rng(0)\nnoise = rng.normal(0.0, s, 3)\n", True),
    # a tensor torch made, filled in place with a draw: a method of the object, not a module's
    ("import torch\nnoise = torch.zeros_like(g)\nnoise = noise.normal_(0.0, s)\n", True),
    # a generator passed in, whose class is not decided
    ("def f(gen, s):\n    noise = gen.standard_normal(3) * s\n", True),
    # torch.nn.init's initialiser is a function of an imported module, not a draw on gradients
    ("import torch\nnoise = torch.nn.init.normal_(w)\n", False),
    # the project's own function named like a draw is project code
    ("def normal(t):\n    return t / t.norm()\nnoise = normal(g)\n", False),
])
def test_gaussian_draws_are_matched_by_import_qualified_name(tmp_path: Path, source: str,
                                                             draws: bool) -> None:
    index = ProjectIndex(make_project(tmp_path, {"m.py": source}))
    scope_name = "f" if source.startswith("def f") else "<module>"
    scope = index.scope(Ctx("m.py", scope_name))
    assert scope is not None
    line = [stmt.line for stmt in scope.statements if stmt.target == "noise"][-1]
    call = next(part for stmt in scope.statements if stmt.line == line
                for part in stmt.expr.walk() if isinstance(part, Call))
    assert is_noise_draw(call, Ctx("m.py", scope_name, line), index) is draws
