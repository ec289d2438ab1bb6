"""Hugging Face trainers on real parsed projects: the library's default loader for a Trainer
subclass, a project trainer's sampler method, the returned setup dict, and the fields of
``HfArgumentParser`` dataclasses."""

from __future__ import annotations

from pathlib import Path

from dpcheck.pipelines.hf_trainer import inherited_loader, sampler_method
from dpcheck.pipelines.index import ProjectIndex
from dpcheck.pipelines.returned import returned_item
from dpcheck.pipelines.sampling.analyzer import SamplingAnalyzer
from dpcheck.pipelines.sampling.sampler_calls import SamplerCalls
from dpcheck.pipelines.scope import Ctx
from dpcheck.sites.ir import walk
from tests.pipelines.builder import make_project

TRAINERS = '''
import transformers
from transformers import Trainer as HfTrainer
from torch.utils.data import DataLoader, RandomSampler, SequentialSampler

from mylib import Trainer as LocalTrainer


class Plain(transformers.Trainer):
    def setup(self):
        loader = self.get_train_dataloader()
        return {"loader": loader, "steps": len(loader)}

    def loop(self):
        setup = self.setup()
        loader = setup["loader"]
        for batch in loader:
            self.optimizer.step()


class Deeper(Plain):
    def first(self):
        return self.get_train_dataloader()


class Aliased(HfTrainer):
    def first(self):
        return self.get_train_dataloader()


class OwnLoader(transformers.Trainer):
    def get_train_dataloader(self):
        return DataLoader(self.train_dataset, batch_size=4, shuffle=False)

    def first(self):
        return self.get_train_dataloader()


class OwnSampler(Plain):
    def _get_train_sampler(self):
        return SequentialSampler(self.train_dataset)

    def first(self):
        return self.get_train_dataloader()


class NotHf(LocalTrainer):
    def first(self):
        return self.get_train_dataloader()


def build(model, data):
    trainer = Aliased(model=model, train_dataset=data)
    return trainer.get_train_dataloader()
'''

MYLIB = '''
class Trainer:
    def get_train_dataloader(self):
        return None
'''


def _line(text: str, snippet: str, occurrence: int = 1) -> int:
    """The 1-based line of the ``occurrence``-th line containing ``snippet`` in a source as
    ``make_project`` writes it (dedented, leading newline removed)."""
    lines = [n for n, line in enumerate(text.lstrip("\n").splitlines(), 1) if snippet in line]
    return lines[occurrence - 1]


def _index(tmp_path: Path, files: dict[str, str]) -> ProjectIndex:
    return ProjectIndex(make_project(tmp_path, files))


def _first_call(index: ProjectIndex, ctx: Ctx, tail: str) -> list:
    scope = index.scope(ctx)
    return next(n for s in scope["stmts"] for n in walk(s["e"])
                if n[0] == "call" and n[1][0] == "r" and n[1][1].endswith(tail))


def test_a_trainer_subclass_without_a_loader_method_gets_the_library_sampler(
        tmp_path: Path) -> None:
    index = _index(tmp_path, {"t.py": TRAINERS, "mylib.py": MYLIB})
    for scope in ("Plain.setup", "Deeper.first", "Aliased.first", "build"):
        ctx = Ctx("t.py", scope)
        found = inherited_loader(index, _first_call(index, ctx, "get_train_dataloader"), ctx)
        assert found is not None and found.role == "sampler", scope
        assert "RandomSampler" in found.note
    for scope in ("OwnLoader.first", "OwnSampler.first", "NotHf.first"):
        ctx = Ctx("t.py", scope)
        assert inherited_loader(index, _first_call(index, ctx, "get_train_dataloader"),
                                ctx) is None, scope


def test_the_loader_of_a_returned_setup_dict_is_followed(tmp_path: Path) -> None:
    index = _index(tmp_path, {"t.py": TRAINERS, "mylib.py": MYLIB})
    sampling = SamplingAnalyzer(index, None).analyze([Ctx("t.py", "Plain.loop"),
                                                      Ctx("t.py", "Plain.setup")])
    assert sampling.kind == "shuffle"
    assert sampling.evidence[0].span.line == _line(TRAINERS, "loader = self.get_train_dataloader()")


SETUPS = '''
def as_call():
    return dict(loader=make(), steps=3)


def as_display():
    return {"loader": make(), "steps": 3}


def two_returns(flag):
    if flag:
        return {"loader": make()}
    return {"loader": other()}


def user():
    a = as_call()
    b = as_display()
    c = two_returns(True)
    return a["loader"], b["loader"], c["loader"], a["missing"]
'''


def test_returned_items_come_from_a_single_dict_return(tmp_path: Path) -> None:
    index = _index(tmp_path, {"s.py": SETUPS})
    at = Ctx("s.py", "user", 20)
    found = [returned_item(index, ["i", ["r", name], ["s", key]], at)
             for name, key in (("a", "loader"), ("b", "loader"), ("c", "loader"),
                               ("a", "missing"))]
    assert [f[0][1] if f else None for f in found] == [["r", "make"], ["r", "make"], None, None]
    assert found[0][1] == Ctx("s.py", "as_call", 2)


SAMPLERS = '''
import torch
from torch.utils.data import DataLoader, DistributedSampler, RandomSampler, SequentialSampler

from bernoulli import BernoulliSampler


class Trainer:
    def __init__(self, data, rank=-1):
        self.data = data
        self.rank = rank

    def train_sampler(self, shuffle=True):
        if isinstance(self.data, torch.utils.data.IterableDataset):
            return None
        if shuffle:
            return RandomSampler(self.data) if self.rank == -1 else DistributedSampler(self.data)
        return SequentialSampler(self.data)

    def ordered_sampler(self, shuffle=True):
        if shuffle:
            return RandomSampler(self.data)
        return SequentialSampler(self.data)

    def poisson_sampler(self):
        if self.rank == -1:
            return BernoulliSampler(self.data)
        return RandomSampler(self.data)

    def loaders(self):
        train = DataLoader(self.data, sampler=self.train_sampler())
        ordered = DataLoader(self.data, sampler=self.ordered_sampler(shuffle=False))
        mixed = DataLoader(self.data, sampler=self.poisson_sampler())
        evaluation = DataLoader(self.data, sampler=self.train_sampler(shuffle=False))
        return train, ordered, mixed, evaluation
'''


def test_a_sampler_method_is_read_for_the_call_that_runs_it(tmp_path: Path) -> None:
    index = _index(tmp_path, {"tr.py": SAMPLERS, "bernoulli.py": "class BernoulliSampler: pass\n"})
    ctx = Ctx("tr.py", "Trainer.loaders")
    scope = index.scope(ctx)
    samplers = [s["e"][3]["sampler"] for s in scope["stmts"] if s["k"] == "assign"]
    kinds = SamplerCalls(index).sampler_kind
    train, ordered, mixed, evaluation = (sampler_method(index, s, ctx, kinds)
                                         for s in samplers)
    random = _line(SAMPLERS, "return RandomSampler(self.data) if")
    unsampled = _line(SAMPLERS, "return None")
    sequential = _line(SAMPLERS, "return SequentialSampler")
    assert train is not None and [e.span.line for e in train] == [random, random, unsampled,
                                                                  sequential]
    assert "RandomSampler" in train[0].note and "DistributedSampler" in train[1].note
    assert ordered is not None and [e.span.line for e in ordered] == [
        _line(SAMPLERS, "return SequentialSampler", 2)]
    assert "sequential" in ordered[0].note
    assert mixed is None
    assert evaluation is not None and [e.span.line for e in evaluation] == [unsampled,
                                                                            sequential]


ARGUMENTS = '''
from dataclasses import dataclass, field

import transformers
from transformers import HfArgumentParser


@dataclass
class TrainingArguments(transformers.TrainingArguments):
    lr_decay: bool = field(default=True)
    num_train_epochs: float = field(default=5.0, metadata={"help": "epochs"})


@dataclass
class PrivacyArguments:
    clip: float = 0.5
    noise_multiplier: float = field(default=None)
    orders: list = field(default_factory=list)


def main():
    parser = HfArgumentParser((PrivacyArguments, TrainingArguments))
    privacy_args, training_args = parser.parse_args_into_dataclasses()
    return privacy_args, training_args
'''


def test_hf_argument_dataclass_fields_are_options_with_their_defaults(tmp_path: Path) -> None:
    index = _index(tmp_path, {"args.py": ARGUMENTS})
    at = Ctx("args.py", "main", 24)

    def field_of(name: str, attr: str) -> object:
        found = index.dataclass_field(index.bind(name, at), attr)
        return (found.kind, found.ir, found.line) if found is not None else None

    parse = _line(ARGUMENTS, "HfArgumentParser((")
    assert field_of("privacy_args", "clip") == ("option", ["n", 0.5], _line(ARGUMENTS, "clip:"))
    assert field_of("privacy_args", "noise_multiplier") == (
        "option", ["c", None], _line(ARGUMENTS, "noise_multiplier:"))
    assert field_of("privacy_args", "orders") is None
    assert field_of("privacy_args", "missing") is None
    assert field_of("training_args", "num_train_epochs") == (
        "option", ["n", 5.0], _line(ARGUMENTS, "num_train_epochs:"))
    assert field_of("training_args", "per_device_train_batch_size") == ("option", ["n", 8], parse)
    assert field_of("training_args", "gradient_accumulation_steps") == ("option", ["n", 1], parse)
    assert field_of("training_args", "learning_rate") is None
    assert index.dataclass_field(index.bind("parser", at), "clip") is None


def _layered_arguments(levels: int) -> str:
    """Dataclasses deriving from each other ``levels`` deep; the deepest declares clip = 0.25,
    and HfArgumentParser parses the shallowest; a second parser parses a class that derives
    from itself."""
    classes = "".join(
        f"\n@dataclass\nclass Layer{i}({f'Layer{i + 1}' if i + 1 < levels else ''}):\n"
        + ("    clip: float = 0.25\n" if i + 1 == levels else "    rank: int = 0\n")
        for i in reversed(range(levels)))
    return ("from dataclasses import dataclass\n\nfrom transformers import HfArgumentParser\n"
            + classes + "\n\n@dataclass\nclass Loop(Loop):\n    rank: int = 0\n\n\n"
            "def main():\n    parser = HfArgumentParser((Layer0,))\n"
            "    (layered,) = parser.parse_args_into_dataclasses()\n"
            "    other = HfArgumentParser((Loop,))\n"
            "    (looped,) = other.parse_args_into_dataclasses()\n"
            "    return layered, looped\n")


def test_dataclass_fields_are_found_through_bases_at_any_depth(tmp_path: Path) -> None:
    """Bases of an argument dataclass are followed however deep (each a question of the index's
    memo and cycle guard); a class listed as its own base ends there."""
    source = _layered_arguments(12)
    index = _index(tmp_path, {"args.py": source})
    at = Ctx("args.py", "main", _line(source, "return layered"))
    found = index.dataclass_field(index.bind("layered", at), "clip")
    assert found is not None and (found.kind, found.ir, found.line) == (
        "option", ["n", 0.25], _line(source, "clip: float"))
    assert index.dataclass_field(index.bind("looped", at), "clip") is None


def test_dataclass_parses_are_matched_by_import_qualified_name(tmp_path: Path) -> None:
    """The Hugging Face parser imported under another name parses its dataclasses; a project's
    own class that happens to be called HfArgumentParser is project code, not the library's."""
    aliased = ARGUMENTS.replace("from transformers import HfArgumentParser",
                                "from transformers import HfArgumentParser as Options").replace(
        "parser = HfArgumentParser((", "parser = Options((")
    own = ARGUMENTS.replace("from transformers import HfArgumentParser\n", "").replace(
        "\n\ndef main():", "\n\nclass HfArgumentParser:\n    def __init__(self, kinds):\n"
        "        self.kinds = kinds\n\n    def parse_args_into_dataclasses(self):\n"
        "        return [kind() for kind in self.kinds]\n\n\ndef main():")
    for source, clip in ((aliased, ("option", ["n", 0.5], _line(aliased, "clip:"))), (own, None)):
        index = _index(tmp_path / str(clip is None), {"args.py": source})
        at = Ctx("args.py", "main", _line(source, "return privacy_args"))
        found = index.dataclass_field(index.bind("privacy_args", at), "clip")
        got = (found.kind, found.ir, found.line) if found is not None else None
        assert got == clip
