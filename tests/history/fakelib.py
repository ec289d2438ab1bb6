"""A small fake DP library ("fakedp"), written for these tests, whose tagged commits move
through the Opacus eras with the shapes of the real code: a clipper whose ``pre_step`` returns
the realized batch (0.x), an engine flag ``poisson`` with ``avg_batch_size`` (0.4), an optimizer
dividing by ``expected_batch_size = int(N * q)`` behind ``make_private`` (1.x), a Poisson sampler
added at 0.3, the default accountant switched at 1.1, a file that stops parsing at 1.2 and a
tree without the package at 2.0. As in Opacus, every division of the noisy sum sits under a
``loss_reduction == "mean"`` test, so the ``sum`` mode leaves it undivided."""

from __future__ import annotations

from pathlib import Path

import git

CLIPPER = '''
class Clipper:
    def __init__(self, module, loss_reduction="mean"):
        self.module = module
        self.loss_reduction = loss_reduction
        self._batch = 0

    def clip_and_accumulate(self):
        batch_size = next(g.shape[0] for g in self.module.grad_samples())
        self._batch += batch_size

    def _state(self):
        return self.norms, self._batch

    def pre_step(self):
        norms, batch_size = self._state()
        for p in self.module.parameters():
            p.grad = self._scale(p.summed_grad, batch_size)
        return norms, batch_size

    def _scale(self, summed_grad, batch_size):
        if self.loss_reduction == "mean":
            return summed_grad / batch_size
        return summed_grad
'''

ENGINE_0 = '''
from fakedp.clipper import Clipper


class PrivacyEngine:
    def __init__(self, module, batch_size, sample_size, noise_multiplier, max_grad_norm):
        self.module = module
        self.batch_size = batch_size
        self.sample_rate = batch_size / sample_size
        self.clipper = Clipper(module)

    def attach(self, optimizer):
        optimizer.privacy_engine = self

    def step(self):
        self.clipper.clip_and_accumulate()
        clip_values, batch_size = self.clipper.pre_step()
        for p in self.module.parameters():
            noise = self._noise(p)
            if self.clipper.loss_reduction == "mean":
                noise /= batch_size
            p.grad += noise
'''

ENGINE_04 = '''
from fakedp.clipper import Clipper


class PrivacyEngine:
    def __init__(self, module, sample_rate, sample_size, noise_multiplier, max_grad_norm,
                 poisson: bool = False):
        self.module = module
        self.poisson = poisson
        self.sample_rate = sample_rate
        self.sample_size = sample_size
        self.avg_batch_size = self.sample_rate * self.sample_size
        self.clipper = Clipper(module)

    def attach(self, optimizer):
        optimizer.privacy_engine = self

    def step(self):
        self.clipper.clip_and_accumulate()
        clip_values, batch_size = self.clipper.pre_step()
        for p in self.module.parameters():
            noise = self._noise(p)
            if self.clipper.loss_reduction == "mean":
                noise /= batch_size
            p.grad += noise
            if self.poisson and self.clipper.loss_reduction == "mean":
                p.grad *= batch_size / self.avg_batch_size
'''

OPTIMIZER = '''
class DPOptimizer:
    def __init__(self, optimizer, expected_batch_size, loss_reduction: str = "mean"):
        self.original_optimizer = optimizer
        self.expected_batch_size = expected_batch_size
        self.loss_reduction = loss_reduction

    def pre_step(self):
        self.add_noise()
        self.scale_grad()

    def scale_grad(self):
        if self.loss_reduction == "mean":
            for p in self.params:
                p.grad /= self.expected_batch_size

    def step(self):
        self.pre_step()
        return self.original_optimizer.step()
'''

ENGINE_1 = '''
from fakedp.optimizer import DPOptimizer


class PrivacyEngine:
    def __init__(self, *, accountant: str = "{accountant}"):
        self.accountant = accountant

    def make_private(self, module, optimizer, data_loader, noise_multiplier, max_grad_norm,
                     poisson_sampling: bool = True):
        sample_rate = 1 / len(data_loader)
        expected_batch_size = int(len(data_loader.dataset) * sample_rate)
        optimizer = DPOptimizer(optimizer, expected_batch_size=expected_batch_size)
        return module, optimizer, data_loader
'''

SAMPLER = '''
class UniformWithReplacementSampler:
    def __init__(self, num_samples, sample_rate):
        self.num_samples = num_samples
        self.sample_rate = sample_rate
'''

ANALYSIS = "def compute_rdp(q, noise_multiplier, steps, orders):\n    return orders\n"
LIBRARY_TEST = ("def test_mean(batch):\n    expected_batch_size = len(batch)\n"
                "    return expected_batch_size\n")

ERA_0 = {"fakedp/__init__.py": "", "fakedp/clipper.py": CLIPPER,
         "fakedp/privacy_engine.py": ENGINE_0, "fakedp/privacy_analysis.py": ANALYSIS,
         "fakedp/tests/test_clipper.py": LIBRARY_TEST, "README.md": "fakedp\n"}
ERA_1 = {"fakedp/__init__.py": "", "fakedp/optimizer.py": OPTIMIZER,
         "fakedp/privacy_engine.py": ENGINE_1.format(accountant="rdp"),
         "fakedp/sampler.py": SAMPLER, "fakedp/tests/test_clipper.py": LIBRARY_TEST}

#: (tag, files changed (None deletes), files removed) in commit order.
COMMITS: list[tuple[str, dict[str, str], tuple[str, ...]]] = [
    ("v0.1.0", ERA_0, ()),
    ("v0.2.0", {"README.md": "fakedp, now documented\n"}, ()),
    ("v0.3.0", {"fakedp/sampler.py": SAMPLER}, ()),
    ("v0.4.0", {"fakedp/privacy_engine.py": ENGINE_04}, ()),
    ("v1.0.0", ERA_1, ("fakedp/clipper.py", "fakedp/privacy_analysis.py")),
    ("v1.1.0", {"fakedp/privacy_engine.py": ENGINE_1.format(accountant="prv")}, ()),
    ("v1.2.0rc1", {"README.md": "release candidate\n"}, ()),
    ("v1.2.0", {"fakedp/optimizer.py": OPTIMIZER.replace("def scale_grad(self):",
                                                         "def scale_grad(self)")}, ()),
    ("v2.0.0", {"newdp/__init__.py": ""}, ("fakedp",)),
]

#: Second tags on a release's commit (Opacus tags both ``v1.4`` and ``v1.4.0``).
ALIASES = {"v1.1": "v1.1.0"}

#: The expected table, row by row: the eras described in the module docstring.
EXPECTED = {
    "v0.1.0": ("A", "none", False, False, "opacus-rdp", "not supported"),
    "v0.2.0": ("A", "none", False, False, "opacus-rdp", "not supported"),
    "v0.3.0": ("A", "none", True, False, "opacus-rdp", "ASGM"),
    "v0.4.0": ("EA", "none", True, False, "opacus-rdp", "EASGM"),
    "v1.0.0": ("FEA", "none", True, True, "opacus-rdp", "FEASGM"),
    "v1.1": ("FEA", "none", True, True, "opacus-prv", "FEASGM"),
    "v1.1.0": ("FEA", "none", True, True, "opacus-prv", "FEASGM"),
    "v1.2.0": ("unknown", "unknown", True, True, "opacus-prv", "unknown"),
    "v2.0.0": ("unknown",) * 6,
}


def build_repository(root: Path) -> git.Repo:
    """The fake library's repository at ``root``, one tagged commit per entry of COMMITS."""
    repo = git.Repo.init(root)
    with repo.config_writer() as config:
        config.set_value("user", "name", "dpcheck tests")
        config.set_value("user", "email", "tests@dpcheck.invalid")
    for day, (tag, files, removed) in enumerate(COMMITS, start=1):
        for path in removed:
            repo.index.remove([path], r=True, working_tree=True)
        for path, text in files.items():
            target = root / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
            repo.index.add([path])
        stamp = f"2021-01-{day:02d}T12:00:00"
        repo.index.commit(f"release {tag}", author_date=stamp, commit_date=stamp)
        repo.create_tag(tag)
    for alias, tag in ALIASES.items():
        repo.create_tag(alias, ref=tag)
    return repo
