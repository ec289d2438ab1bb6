"""The size of a ``torch.utils.data.Subset``: the length of its index sequence.

``Subset(dataset, indices)`` holds ``len(indices)`` examples, whatever the dataset. The index
sequence is read for its length only, through what keeps a length: ``range(...)`` and
``arange(...)`` (as many items as ``range`` with those integers), ``randperm(n)`` and
``permutation(n)`` (n examples), ``list(...)``/``array(...)`` of a sequence,
a slice ``seq[a:b:c]`` of a sequence of known length (``len(range(L)[a:b:c])``, so a train split
``indices[split:]`` of N indices has N - split), an element of a tuple of sequences
(``train_idx, valid_idx = idx[k:], idx[:k]``), and names bound to them; an in-place shuffle
(``np.random.shuffle(indices)``) reorders the sequence and keeps its length. The bounds are
evaluated by the value evaluator (``len(train_set)`` of a well-known dataset, constants,
arithmetic). Calls are matched by import-qualified name (``index.library_name``) against the
framework vocabularies (``index_ranges``, the length-keeping conversions of ``keeps_examples``)
and the sampler table's permutations (what they permute: an integer n or a sequence).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dpcheck.pipelines.index import ProjectIndex
from dpcheck.pipelines.questions import frozen
from dpcheck.pipelines.scope import Ctx
from dpcheck.pipelines.vocabulary import calls_in
from dpcheck.samplers import sampler_table
from dpcheck.sites.nodes import Call, Const, Name, Node, Seq, Slice, Subscript

if TYPE_CHECKING:
    from dpcheck.pipelines.values import Evaluator

SUBSETS = frozenset({"torch.utils.data.Subset", "torch.utils.data.dataset.Subset"})


def subset_size(evaluator: Evaluator, call: Node, ctx: Ctx) -> int | None:
    """The number of examples of a ``Subset(dataset, indices)`` call, None when ``call`` is not
    one or its index sequence has no length dpcheck can read."""
    if not isinstance(call, Call) or call.name is None or call.name.startswith("?."):
        return None
    if evaluator.index.library_name(call.name, ctx) not in SUBSETS:
        return None
    indices = call.argument(1, "indices")
    return sequence_length(evaluator, indices, ctx) if indices is not None else None


def sequence_length(evaluator: Evaluator, value: Node, ctx: Ctx) -> int | None:
    """The length of an index sequence expression (see the module docstring), else None. A
    name, where bindings are followed, is a question of the index's memo and cycle guard
    (``dpcheck.pipelines.questions``)."""
    if isinstance(value, Seq):
        return len(value.items)
    if isinstance(value, Name):
        index = evaluator.index
        key = ("sequence-length", frozen(value), ctx, index.reach,
               frozenset(evaluator.assumed.items()))
        return index.questions.ask(key, lambda: _bound_length(evaluator, value, ctx), None)
    if isinstance(value, Subscript) and isinstance(value.index, Slice) and value.index.bounded:
        whole = sequence_length(evaluator, value.value, ctx)
        return None if whole is None else _slice_length(evaluator, value.index, whole, ctx)
    if isinstance(value, Call) and value.name is not None and value.args:
        # keywords (dtype=, device=, generator=) do not change a length
        index = evaluator.index
        if calls_in("index_ranges", value, ctx, index) and len(value.args) <= 3:
            bounds = [evaluator.value(argument, ctx) for argument in value.args]
            if all(b is not None and float(b.value).is_integer() for b in bounds) \
                    and (len(bounds) < 3 or bounds[-1].value != 0):  # type: ignore[union-attr]
                return len(range(*(int(b.value) for b in bounds)))  # type: ignore[union-attr]
        permuted = _permuted(value, ctx, index)
        if permuted is not None:
            count = evaluator.value(permuted, ctx)
            if count is not None and float(count.value).is_integer():
                return int(count.value)
            return sequence_length(evaluator, permuted, ctx)
        if len(value.args) == 1 and calls_in("keeps_examples", value, ctx, index):
            [same] = value.args
            return sequence_length(evaluator, same, ctx)
    return None


def _permuted(call: Call, ctx: Ctx, index: ProjectIndex) -> Node | None:
    """What a permutation of the sampler table permutes (an integer n, or a sequence), else None."""
    qualified = index.library_name(call.name or "", ctx)
    api = sampler_table().api(qualified) if qualified is not None else None
    if api is None or api.role != "permutation" or api.population is None:
        return None
    return api.population.of(call.args, call.kwargs)  # type: ignore[no-any-return]


def _bound_length(evaluator: Evaluator, name: Name, ctx: Ctx) -> int | None:
    """The length of what a name is bound to (an element of an unpacked tuple display too)."""
    binding = evaluator.index.attribute(name.dotted, ctx)
    if binding is None or binding.kind != "assign" or binding.ir is None:
        return None
    bound: Node = binding.ir
    for position in binding.index or ():
        if not isinstance(bound, Seq) or position >= len(bound.items):
            return None
        bound = bound.items[position]
    where = Ctx(binding.ctx.path, binding.ctx.scope, binding.line)
    return sequence_length(evaluator, bound, where)


def _slice_length(evaluator: Evaluator, bounds: Slice, whole: int, ctx: Ctx) -> int | None:
    """``len(range(whole)[lower:upper:step])`` with the bounds evaluated (None: omitted)."""
    parts: list[int | None] = []
    for part in (bounds.lower, bounds.upper, bounds.step):
        if part is None or isinstance(part, Const) and part.value is None:
            parts.append(None)
            continue
        found = evaluator.value(part, ctx)
        if found is None or not float(found.value).is_integer():
            return None
        parts.append(int(found.value))
    lower, upper, step = parts
    if step == 0:
        return None
    return len(range(whole)[lower:upper:step])
