"""Code a library calls back, on real parsed projects: the overrides of a project subclass of a
library class reached from a library method called on an instance (and from an instance passed
to a library call), the loader a library's own training loop iterates, a project sampler class
read as the library sampler it iterates, and the attribute a library base keeps from its
constructor's keyword."""

from __future__ import annotations

from pathlib import Path

from dpcheck.pipelines.callbacks import called_back
from dpcheck.pipelines.index import ProjectIndex
from dpcheck.pipelines.sampling.analyzer import SamplingAnalyzer
from dpcheck.pipelines.scope import Ctx
from dpcheck.sites.nodes import Num
from tests.pipelines.builder import make_project

TRAINER = '''
import transformers
from torch.utils.data import DataLoader

from local import Trainer as OwnTrainer


class Hooks(transformers.TrainerCallback):
    def on_step_end(self, args, state, control, **kwargs):
        pass

    def on_log(self, args, state, control, **kwargs):
        pass


class Base(transformers.Trainer):
    def create_optimizer(self):
        return super().create_optimizer()


class Mine(Base):
    def __init__(self, **kwargs):
        self.hooks = Hooks()
        super().__init__(callbacks=[self.hooks], **kwargs)

    def training_step(self, model, inputs):
        return model(**inputs).loss

    def fit(self):
        return self.training_step(None, {})

    def evaluate(self, eval_dataset=None):
        return None


class NotLibrary(OwnTrainer):
    def training_step(self, model, inputs):
        return None


def main(model, data):
    trainer = Mine(model=model, train_dataset=data)
    trainer.train()
    trainer.fit()
    other = NotLibrary()
    other.train()
'''

LOCAL = '''
class Trainer:
    def train(self):
        return None
'''


def _index(tmp_path: Path, files: dict[str, str]) -> ProjectIndex:
    return ProjectIndex(make_project(tmp_path, files))


def _called_back(index: ProjectIndex, scope: str, name: str, path: str = "t.py") -> set[str]:
    found: set[str] = set()
    for where, _, call in index.calls([Ctx(path, scope)]):
        if call.name == name or (name == "super().__init__" and call.name == "?.__init__"):
            found.update(f.scope for f in called_back(index, call, where))
    return found


def test_a_library_method_on_a_subclass_instance_reaches_every_method_of_its_project_classes(
        tmp_path: Path) -> None:
    """All but the one the library runs from its evaluation loop, on held-out data."""
    index = _index(tmp_path, {"t.py": TRAINER, "local.py": LOCAL})
    assert _called_back(index, "main", "trainer.train") == {
        "Mine.__init__", "Mine.training_step", "Mine.fit", "Base.create_optimizer"}


def test_a_project_method_and_a_project_base_are_not_callbacks(tmp_path: Path) -> None:
    index = _index(tmp_path, {"t.py": TRAINER, "local.py": LOCAL})
    assert _called_back(index, "main", "trainer.fit") == set()
    assert _called_back(index, "main", "other.train") == set()


def test_an_instance_handed_to_the_library_base_is_called_back(tmp_path: Path) -> None:
    index = _index(tmp_path, {"t.py": TRAINER, "local.py": LOCAL})
    reached = _called_back(index, "Mine.__init__", "super().__init__")
    assert {"Hooks.on_step_end", "Hooks.on_log"} <= reached


ROLES = '''
from lightning.pytorch import LightningModule
from transformers import TrainerCallback


class Ledger(TrainerCallback):
    def on_step_end(self, args, state, control, **kwargs):
        pass

    def on_evaluate(self, args, state, control, **kwargs):
        pass


class Regressor(LightningModule):
    def training_step(self, batch, index):
        return self.interval_totals(batch)

    def interval_totals(self, batch):
        return batch

    def validation_step(self, batch, index):
        return batch

    def holdout_scores(self, batch):
        return batch


def main(trainer, data):
    trainer.fit(Regressor(), data, callbacks=[Ledger()])
    model = Regressor()
    model.fit_loop()
'''


def test_what_a_library_calls_back_from_its_evaluation_loop_is_its_role_not_a_name(
        tmp_path: Path) -> None:
    """The library's evaluation hooks (``validation_step``, ``on_evaluate``) are left out by the
    table of what each library calls from its evaluation loop; a training method whose name
    merely contains "val" (``interval_totals``) or a project method whose name says nothing of
    evaluation (``holdout_scores``) is reached like any other override."""
    index = _index(tmp_path, {"t.py": ROLES})
    assert _called_back(index, "main", "model.fit_loop") == {
        "Regressor.training_step", "Regressor.interval_totals", "Regressor.holdout_scores"}


SAMPLERS = '''
import torch
from torch.utils.data import BatchSampler, DataLoader, RandomSampler, SequentialSampler, Sampler


class Remap(Sampler):
    def __init__(self, inner, table):
        self.inner = inner
        self.table = table

    def __iter__(self):
        for ids in self.inner:
            yield [self.table[i] for i in ids]


class Shuffled(Remap):
    def __init__(self, table, size):
        inner = BatchSampler(RandomSampler(table), batch_size=size, drop_last=True)
        super().__init__(inner, table)


class InOrder(Remap):
    def __init__(self, table, size):
        super().__init__(BatchSampler(SequentialSampler(table), size, False), table)


class Kept(Remap):
    pass


class Own(Sampler):
    def __iter__(self):
        for _ in range(10):
            yield torch.randint(0, 100, (8,)).tolist()


def shuffled(data, table, model, optimizer):
    for batch in DataLoader(data, batch_sampler=Shuffled(table, 16)):
        model(batch).sum().backward()
        optimizer.step()


def kept(data, table, model, optimizer):
    for batch in DataLoader(data, batch_sampler=Kept(BatchSampler(RandomSampler(data), 8, True), table)):
        model(batch).sum().backward()
        optimizer.step()


def in_order(data, table, model, optimizer):
    loader = DataLoader(data, batch_sampler=InOrder(table, 16))
    for batch in loader:
        model(batch).sum().backward()
        optimizer.step()


def wrapped_directly(data, model, optimizer):
    for batch in DataLoader(data, batch_sampler=Remap(BatchSampler(RandomSampler(data), 8, True), [])):
        model(batch).sum().backward()
        optimizer.step()
'''


def test_a_project_sampler_class_has_the_kind_of_the_library_sampler_it_iterates(
        tmp_path: Path) -> None:
    index = _index(tmp_path, {"s.py": SAMPLERS})
    shuffled = SamplingAnalyzer(index, None).analyze([Ctx("s.py", "shuffled")])
    assert (shuffled.kind, shuffled.sampler) == ("shuffle", "shuffle"), shuffled.evidence
    assert [e.span.line for e in shuffled.evidence][:2] == [17, 17]  # RandomSampler in BatchSampler
    assert "Shuffled yields the batches" in " ".join(e.note for e in shuffled.evidence)
    in_order = SamplingAnalyzer(index, None).analyze([Ctx("s.py", "in_order")])
    assert (in_order.kind, in_order.sampler) == ("shuffle", "sequential"), in_order.evidence
    for through in ("wrapped_directly", "kept"):  # the wrapper, a subclass without __init__
        direct = SamplingAnalyzer(index, None).analyze([Ctx("s.py", through)])
        assert direct.sampler == "shuffle", (through, direct.evidence)


def test_a_batch_sampler_does_not_size_batches_by_the_loader_batch_size(tmp_path: Path) -> None:
    index = _index(tmp_path, {"s.py": SAMPLERS})
    shuffled = SamplingAnalyzer(index, None).analyze([Ctx("s.py", "shuffled")])
    assert shuffled.loader is None


def test_a_sampler_class_iterating_nothing_stored_is_not_read_as_a_wrapper(tmp_path: Path) -> None:
    files = {"s.py": SAMPLERS + '''

def own(data, model, optimizer):
    for batch in DataLoader(data, batch_sampler=Own()):
        model(batch).sum().backward()
        optimizer.step()
'''}
    index = _index(tmp_path, files)
    sampling = SamplingAnalyzer(index, None).analyze([Ctx("s.py", "own")])
    assert sampling.sampler != "shuffle"
    assert not any("yields the batches of the sampler" in e.note for e in sampling.evidence)


LIBRARY_LOOP = '''
import transformers
from torch.utils.data import DataLoader, RandomSampler


class Tuned(transformers.Trainer):
    def get_train_dataloader(self):
        return DataLoader(self.train_dataset, sampler=RandomSampler(self.train_dataset),
                          batch_size=8)

    def get_eval_dataloader(self, eval_dataset=None):
        return DataLoader(eval_dataset, batch_size=8)


def main(model, data):
    trainer = Tuned(model=model, train_dataset=data)
    trainer.train()
'''


def test_the_library_loop_iterates_the_loader_the_subclass_returns(tmp_path: Path) -> None:
    index = _index(tmp_path, {"t.py": LIBRARY_LOOP})
    scopes = [Ctx("t.py", "main"), Ctx("t.py", "Tuned.get_train_dataloader"),
              Ctx("t.py", "Tuned.get_eval_dataloader")]
    sampling = SamplingAnalyzer(index, None).analyze(scopes)
    assert sampling.sampler == "shuffle", sampling.evidence
    notes = " ".join(e.note for e in sampling.evidence)
    assert "trainer.train runs the training loop of the library base" in notes
    assert "get_eval_dataloader" not in notes


ATTRIBUTES = '''
import argparse

import transformers

from local import Trainer as OwnTrainer


class Kept(transformers.Trainer):
    def __init__(self, args=None, **kwargs):
        super().__init__(args=args, **kwargs)

    def size(self):
        return self.args.per_device_train_batch_size


class Stored:
    def __init__(self, config=None):
        self.config = config

    def size(self):
        return self.config.batch


class ProjectBase(OwnTrainer):
    def __init__(self, args=None):
        super().__init__(args=args)

    def size(self):
        return self.args.per_device_train_batch_size


def main():
    training = transformers.TrainingArguments(output_dir="o", per_device_train_batch_size=32)
    settings = argparse.Namespace(batch=64)
    Kept(args=training).size()
    Stored(config=settings).size()
    ProjectBase(args=training).size()
'''


def test_a_keyword_handed_to_a_library_base_constructor_is_the_same_named_attribute(
        tmp_path: Path) -> None:
    index = _index(tmp_path, {"t.py": ATTRIBUTES, "local.py": LOCAL})
    kept = index.attribute("self.args.per_device_train_batch_size", Ctx("t.py", "Kept.size", 14))
    assert kept is not None and kept.ir == Num(["n", 32])
    assert index.attribute("self.args", Ctx("t.py", "ProjectBase.size", 30)) is None


def test_an_attribute_of_a_stored_parameter_defaulting_to_none_reads_the_callers_object(
        tmp_path: Path) -> None:
    index = _index(tmp_path, {"t.py": ATTRIBUTES, "local.py": LOCAL})
    stored = index.attribute("self.config.batch", Ctx("t.py", "Stored.size", 21))
    assert stored is not None and stored.ir == Num(["n", 64])


HELPER_CALLED_TWICE = '''
from opacus.utils.uniform_sampler import UniformWithReplacementSampler
from torch.utils.data import DataLoader


def make_loader(data, private):
    if not private:
        return DataLoader(data, batch_size=64, shuffle=True)
    return DataLoader(data, batch_sampler=UniformWithReplacementSampler(
        num_samples=len(data), sample_rate=0.01))


def held_out(data, model):
    for batch in make_loader(data, private=False):
        model(batch)


def train(data, model, optimizer, use_dp):
    if use_dp:
        for batch in make_loader(data, private=use_dp):
            model(batch).sum().backward()
            optimizer.step()
'''


def test_a_helper_loader_is_read_with_the_truth_its_call_passes(tmp_path: Path) -> None:
    """Another caller in the same reach passing the opposite flag (an evaluation) does not
    make the training call's loader undecided."""
    index = _index(tmp_path, {"h.py": HELPER_CALLED_TWICE})
    assumed = {("h.py", "train", "use_dp"): True}
    scopes = [Ctx("h.py", "train"), Ctx("h.py", "held_out"), Ctx("h.py", "make_loader")]
    sampling = SamplingAnalyzer(index, None, assumed).analyze(scopes)
    assert (sampling.kind, sampling.sampler) == ("poisson", "poisson"), sampling.evidence

