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
options like argparse ones (read by ``dpcheck.pipelines.options``): ``training_args.x`` is the field ``x`` of the matching dataclass, its
default read from the project class or, for fields inherited from ``transformers.TrainingArguments``,
from the library's documented defaults (the few that size batches and steps).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from dpcheck.model import Evidence, Span
from dpcheck.pipelines.calls import argument
from dpcheck.pipelines.index import ProjectIndex
from dpcheck.pipelines.scope import Ctx
from dpcheck.pipelines.values import Evaluator
from dpcheck.sites.ir import IR, tail_name
from dpcheck.sites.nodes import Call, Const, Name, Node, Opaque, UnaryOp, node
from dpcheck.sites.views import Scope

HF_TRAINERS = frozenset({"Trainer", "Seq2SeqTrainer"})
#: The methods of the Hugging Face Trainer that build the training loader and its sampler: a
#: project class overriding one of them decides the sampling itself.
LOADER_METHOD = "get_train_dataloader"
SAMPLER_METHOD = "_get_train_sampler"
LOADER_METHODS = (LOADER_METHOD, SAMPLER_METHOD)


def inherited_loader(index: ProjectIndex, call: IR, ctx: Ctx) -> Evidence | None:
    """The sampler evidence of ``trainer.get_train_dataloader()`` when ``trainer`` (``self`` in
    a method) is an instance of a project subclass of the Hugging Face Trainer that overrides
    neither loader method: the library's ``RandomSampler``. None for anything else."""
    call = node(call)
    if not isinstance(call, Call):
        return None
    receiver, _, method = (call.name or "").rpartition(".")
    if method != LOADER_METHOD or not receiver:
        return None
    if receiver == "self":
        scope = index.scope(ctx)
        owner = scope.owner if scope else None
        cls = Ctx(ctx.path, owner) if owner else None
    else:
        cls = index.instance_class(receiver, ctx)
    base = _hf_base(index, cls) if cls is not None else None
    if cls is None or base is None:
        return None
    return Evidence("sampler", Span(ctx.path, *call.position), (
        f"{cls.scope}.get_train_dataloader is inherited from transformers.{base}: a "
        "RandomSampler over train_dataset, fixed-size batches of per_device_train_batch_size"))


def _hf_base(index: ProjectIndex, cls: Ctx) -> str | None:
    """The Hugging Face trainer class ``cls`` derives from, when no class on the way overrides
    a loader method; None otherwise (each project base a question of the index's memo and
    cycle guard, ``dpcheck.pipelines.questions``: a cycle of bases ends there)."""
    summary = index.summary(cls.path)
    if summary is None or cls.scope not in summary.classes:
        return None
    if any(f"{cls.scope}.{method}" in summary.scopes for method in LOADER_METHODS):
        return None
    for base in summary.bases(cls.scope):
        binding = index.bind(base, Ctx(cls.path, "<module>")) if base else None
        if binding is None:
            continue
        if binding.kind == "module" and binding.name.startswith("transformers") \
                and tail_name(binding.name) in HF_TRAINERS:
            return tail_name(binding.name)
        if binding.kind == "class":
            bound = Ctx(binding.ctx.path, binding.name)
            found = index.questions.ask(("hf-base", bound), lambda: _hf_base(index, bound), None)
            if found is not None:
                return found
    return None


def sampler_method(index: ProjectIndex, call: IR, ctx: Ctx,
                   kind_of: Callable[[Call, Ctx], str | None]) -> list[Evidence] | None:
    """Sampler evidence for ``DataLoader(sampler=self._get_train_sampler())`` where the project
    method returns, under the default configuration, only samplers whose kind ``kind_of`` (the
    sampler table, by import-qualified name and switch) says is ``shuffle`` or ``sequential``,
    or ``None``: fixed-size batches whichever runs. The shuffling samplers come first (they are
    the training sampler of the default path). None when the callee is not a project function
    or it may return anything else."""
    call = node(call)
    function = index.function(call.name or "", ctx) if isinstance(call, Call) else None
    scope = index.scope(function) if function is not None else None
    if function is None or scope is None:
        return None
    returned = _default_returns(index, function, scope, call, ctx)
    shuffling: list[Evidence] = []
    sequential: list[Evidence] = []
    for value, where in returned:
        kind = kind_of(value, where) if isinstance(value, Call) else None
        none = isinstance(value, Const) and value.value is None
        if not none and kind not in ("shuffle", "sequential"):
            return None
        span = Span(where.path, *value.position) if isinstance(value, Call) \
            else Span(where.path, where.line)
        tail = value.method if isinstance(value, Call) else "None"
        if kind == "shuffle":
            shuffling.append(Evidence("sampler", span, f"{tail} returned by {function.scope}: "
                                      "shuffled fixed-size batches"))
        else:
            sequential.append(Evidence("sampler", span, f"{function.scope} may return "
                                       f"{tail}: sequential fixed-size batches"))
    return [*shuffling, *sequential] or None


def _default_returns(index: ProjectIndex, function: Ctx, scope: Scope, call: Call,
                     caller: Ctx) -> list[tuple[Node, Ctx]]:
    """What ``function`` may return when ``call`` (at ``caller``) runs it under the default
    configuration: the returns outside an ``if`` arm skipped, both arms of a conditional
    expression. A test on a parameter is read from this call's argument or the default (a
    call elsewhere passing another value does not decide this one)."""
    evaluator = Evaluator(index)
    found: list[tuple[Node, Ctx]] = []
    for stmt in scope.statements:
        if stmt.kind != "return":
            continue
        where = Ctx(function.path, function.scope, stmt.line)
        skipped = False
        for line, arm in stmt.arms:
            test = index.if_test(where, line)
            holds = _holds(evaluator, test, replace(where, line=line), scope, call, caller) \
                if test else None
            skipped = skipped or (holds is not None and holds != (arm == 0))
        if not skipped:
            found.extend((value, where) for value in _arms(stmt.expr))
    return found


def _holds(evaluator: Evaluator, test: Node, where: Ctx, scope: Scope, call: Call,
           caller: Ctx) -> bool | None:
    """Whether an ``if`` test holds for this call: ``param`` and ``not param`` from the call's
    argument (else the parameter's default), anything else under the default configuration."""
    if isinstance(test, UnaryOp) and test.op == "not":
        inner = _holds(evaluator, test.operand, where, scope, call, caller)
        return None if inner is None else not inner
    defaults = {param.name: param.default for param in scope.params}
    if isinstance(test, Name) and test.dotted in defaults:
        passed = argument(call, list(defaults), test.dotted)
        value = passed if passed is not None else defaults[test.dotted]
        return evaluator.truth(value, caller if passed is not None else where) \
            if value is not None else None
    return evaluator.truth(test, where)


def _arms(value: Node) -> list[Node]:
    """The values a conditional expression may take (``a if c else b``: both)."""
    if isinstance(value, Opaque) and value.kind == "ifexp" and len(value.parts) == 2:
        return [arm for part in value.parts for arm in _arms(part)]
    return [value]



