"""Library objects are named by where they come from (``ProjectIndex.library_name``): aliases,
re-exports through a project package, instances through assignments, callers and ``self``
attributes, methods inherited from a library class; a project's own object has no library name."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpcheck.pipelines.index import ProjectIndex
from dpcheck.pipelines.scope import Ctx
from tests.pipelines.builder import make_project

FILES = {
    "mypkg/__init__.py": "from opacus import PrivacyEngine as Engine\n",
    "train.py": """
        import torch as th
        from jax_privacy import keras_api
        from opacus.accountants import RDPAccountant
        from opacus import PrivacyEngine
        from mypkg import Engine


        def make_private(model):
            return model


        class Trainer(PrivacyEngine):
            def attach_all(self):
                pass


        class Own(PrivacyEngine):
            def make_private(self, **kwargs):
                return kwargs


        class Loop:
            def __init__(self):
                self.accountant = RDPAccountant()

            def run(self, sigma, q):
                self.accountant.step(noise_multiplier=sigma, sample_rate=q)


        def train(engine, model):
            return engine.make_private(module=model)


        def main():
            noise = th.normal(0.0, 1.0, size=(3,))
            engine = PrivacyEngine()
            again = Engine()
            mine = make_private(noise)
            keras = keras_api.make_private(noise, None)
            sub = Trainer()
            own = Own()
            train(PrivacyEngine(), mine)
            return engine, again, keras, sub, own


        if __name__ == "__main__":
            main()
    """,
}


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> ProjectIndex:
    return ProjectIndex(make_project(tmp_path_factory.mktemp("names"), FILES))


@pytest.mark.parametrize(("dotted", "scope", "expected"), [
    ("th.normal", "main", "torch.normal"),
    ("engine.make_private", "main", "opacus.PrivacyEngine.make_private"),
    ("engine", "main", "opacus.PrivacyEngine()"),
    ("again.make_private", "main", "opacus.PrivacyEngine.make_private"),
    ("keras_api.make_private", "main", "jax_privacy.keras_api.make_private"),
    ("make_private", "main", None),
    ("sub.make_private", "main", "opacus.PrivacyEngine.make_private"),
    ("own.make_private", "main", None),
    ("engine.make_private", "train", "opacus.PrivacyEngine.make_private"),
    ("self.accountant.step", "Loop.run", "opacus.accountants.RDPAccountant.step"),
    ("undefined_name.step", "main", None),
])
def test_library_names(index: ProjectIndex, dotted: str, scope: str, expected: str | None) -> None:
    assert index.library_name(dotted, Ctx("train.py", scope)) == expected
