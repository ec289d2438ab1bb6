"""Batches and arguments of a Hugging Face ``Trainer``: shuffled fixed-size batches.

Two forms of sampler are read, both fixed-size batches (shuffle-like for DP102):

* a project subclass of ``transformers.Trainer`` (or ``Seq2SeqTrainer``) that does not override
  ``get_train_dataloader``/``_get_train_sampler`` gets the library's loader: a ``RandomSampler``
  over ``train_dataset`` in batches of ``per_device_train_batch_size`` (``DistributedSampler``
  under distributed training; both fixed-size);
* a project trainer whose own sampler method returns the sampler (``_get_train_sampler`` of a
  trainer written after the Hugging Face one): every sampler it can return under the default
  configuration must make fixed-size batches (a shuffling sampler, a ``SequentialSampler`` or
  ``None``, which leaves the DataLoader sequential).

Arguments parsed by ``HfArgumentParser((A, B, C)).parse_args_into_dataclasses()`` are command-line
options like argparse ones: ``training_args.x`` is the field ``x`` of the matching dataclass, its
default read from the project class or, for fields inherited from ``transformers.TrainingArguments``,
from the library's documented defaults (the few that size batches and steps).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from dpcheck.model import Evidence, Span
from dpcheck.pipelines.calls import argument
from dpcheck.pipelines.index import ProjectIndex
from dpcheck.pipelines.scope import Ctx
from dpcheck.pipelines.values import Evaluator
from dpcheck.sites.ir import IR, callee_name, tail_name

HF_TRAINERS = frozenset({"Trainer", "Seq2SeqTrainer"})
#: Methods of the Hugging Face Trainer that build the training loader or its sampler: a project
#: class overriding one of them decides the sampling itself.
LOADER_METHODS = ("get_train_dataloader", "_get_train_sampler")
SEQUENTIAL = "SequentialSampler"
MAX_BASES = 8
ARGUMENT_PARSERS = frozenset({"HfArgumentParser"})
PARSE_METHODS = frozenset({"parse_args_into_dataclasses", "parse_json_file", "parse_dict",
                           "parse_yaml_file"})
TRAINING_ARGUMENTS = frozenset({"TrainingArguments", "Seq2SeqTrainingArguments"})
#: Defaults of ``transformers.TrainingArguments`` fields that size batches and steps (unchanged
#: from transformers 3 to 4.x).
TRAINING_ARGUMENT_DEFAULTS: dict[str, float] = {
    "per_device_train_batch_size": 8, "gradient_accumulation_steps": 1, "num_train_epochs": 3.0,
    "max_steps": -1,
}


def inherited_loader(index: ProjectIndex, call: IR, ctx: Ctx) -> Evidence | None:
    """The sampler evidence of ``trainer.get_train_dataloader()`` when ``trainer`` (``self`` in
    a method) is an instance of a project subclass of the Hugging Face Trainer that overrides
    neither loader method: the library's ``RandomSampler``. None for anything else."""
    name = callee_name(call) or ""
    receiver, _, method = name.rpartition(".")
    if method != LOADER_METHODS[0] or not receiver:
        return None
    if receiver == "self":
        scope = index.scope(ctx)
        owner = scope.get("class") if scope else None
        cls = Ctx(ctx.path, owner) if owner else None
    else:
        cls = index.instance_class(receiver, ctx)
    base = _hf_base(index, cls) if cls is not None else None
    if cls is None or base is None:
        return None
    return Evidence("sampler", Span(ctx.path, *call[4]), (
        f"{cls.scope}.get_train_dataloader is inherited from transformers.{base}: a "
        "RandomSampler over train_dataset, fixed-size batches of per_device_train_batch_size"))


def _hf_base(index: ProjectIndex, cls: Ctx, depth: int = 0) -> str | None:
    """The Hugging Face trainer class ``cls`` derives from, when no class on the way overrides
    a loader method; None otherwise."""
    summary = index.summary(cls.path)
    if summary is None or cls.scope not in summary["classes"] or depth > MAX_BASES:
        return None
    if any(f"{cls.scope}.{method}" in summary["scopes"] for method in LOADER_METHODS):
        return None
    for base in summary["classes"][cls.scope]["bases"]:
        binding = index.bind(base, Ctx(cls.path, "<module>")) if base else None
        if binding is None:
            continue
        if binding.kind == "module" and binding.name.startswith("transformers") \
                and tail_name(binding.name) in HF_TRAINERS:
            return tail_name(binding.name)
        if binding.kind == "class":
            found = _hf_base(index, Ctx(binding.ctx.path, binding.name), depth + 1)
            if found is not None:
                return found
    return None


def sampler_method(index: ProjectIndex, call: IR, ctx: Ctx,
                   shuffled: frozenset[str]) -> list[Evidence] | None:
    """Sampler evidence for ``DataLoader(sampler=self._get_train_sampler())`` where the project
    method returns, under the default configuration, only samplers of ``shuffled`` (by class
    name), ``SequentialSampler`` or ``None``: fixed-size batches whichever runs. The shuffling
    samplers come first (they are the training sampler of the default path). None when the
    callee is not a project function or it may return anything else."""
    function = index.function(callee_name(call) or "", ctx)
    scope = index.scope(function) if function is not None else None
    if function is None or scope is None:
        return None
    returned = _default_returns(index, function, scope, call, ctx)
    shuffling: list[Evidence] = []
    sequential: list[Evidence] = []
    for value, where in returned:
        tail = tail_name(callee_name(value)) if value[0] == "call" else ""
        if value != ["c", None] and tail not in shuffled and tail != SEQUENTIAL:
            return None
        span = Span(where.path, *value[4]) if value[0] == "call" else Span(where.path, where.line)
        if tail in shuffled:
            shuffling.append(Evidence("sampler", span, f"{tail} returned by {function.scope}: "
                                      "shuffled fixed-size batches"))
        else:
            sequential.append(Evidence("sampler", span, f"{function.scope} may return "
                                       f"{tail or 'None'}: sequential fixed-size batches"))
    return [*shuffling, *sequential] or None


def _default_returns(index: ProjectIndex, function: Ctx, scope: dict[str, Any], call: IR,
                     caller: Ctx) -> list[tuple[IR, Ctx]]:
    """What ``function`` may return when ``call`` (at ``caller``) runs it under the default
    configuration: the returns outside an ``if`` arm skipped, both arms of a conditional
    expression. A test on a parameter is read from this call's argument or the default (a
    call elsewhere passing another value does not decide this one)."""
    evaluator = Evaluator(index)
    found: list[tuple[IR, Ctx]] = []
    for stmt in scope["stmts"]:
        if stmt["k"] != "return":
            continue
        where = Ctx(function.path, function.scope, stmt["line"])
        skipped = False
        for line, arm in stmt.get("br", ()):
            test = index.if_test(where, line)
            holds = _holds(evaluator, test, replace(where, line=line), scope, call, caller) \
                if test else None
            skipped = skipped or (holds is not None and holds != (arm == 0))
        if not skipped:
            found.extend((value, where) for value in _arms(stmt["e"]))
    return found


def _holds(evaluator: Evaluator, test: IR, where: Ctx, scope: dict[str, Any], call: IR,
           caller: Ctx) -> bool | None:
    """Whether an ``if`` test holds for this call: ``param`` and ``not param`` from the call's
    argument (else the parameter's default), anything else under the default configuration."""
    if test[0] == "u" and test[1] == "not":
        inner = _holds(evaluator, test[2], where, scope, call, caller)
        return None if inner is None else not inner
    defaults = dict((name, default) for name, default in scope["params"])
    if test[0] == "r" and test[1] in defaults:
        passed = argument(call, list(defaults), test[1])
        value = passed if passed is not None else defaults[test[1]]
        return evaluator.truth(value, caller if passed is not None else where) \
            if value is not None else None
    return evaluator.truth(test, where)


def _arms(value: IR) -> list[IR]:
    """The values a conditional expression may take (``a if c else b``: both)."""
    if value[0] == "?" and value[1] == "ifexp" and len(value) == 4:
        return [*_arms(value[2]), *_arms(value[3])]
    return [value]



