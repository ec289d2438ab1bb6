"""The size of a selection of a dataset's examples: what the selection keeps.

Selections are listed by import-qualified name in the vocabulary (``dpcheck/data/vocabulary.toml``),
methods of library objects by where the object comes from (``library_objects``):

* ``Subset(dataset, indices)``, ``ds.select(indices)`` (``selects_indices``) hold ``len(indices)``
  examples, whatever the dataset;
* ``frame.sample(n=K)`` (``samples_count``) holds K rows, ``frame.sample(frac=f)`` round(f * N);
* part i of ``random_split(dataset, lengths)`` (``splits_lengths``) holds ``lengths[i]``, or with
  fractions that sum to 1, floor(f_i * N) plus one of the remainder for each of the first parts
  (how torch spreads it);
* a method that keeps every example (``keeps_all_examples``: a shuffle, a format, a one-to-one
  ``map``) holds as many as its object.

The index sequence is read for its length only, through what keeps a length: ``range(...)`` and
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

import math
from typing import TYPE_CHECKING

from dpcheck.pipelines.index import ProjectIndex
from dpcheck.pipelines.library_objects import library_method
from dpcheck.pipelines.questions import frozen
from dpcheck.pipelines.scope import Ctx
from dpcheck.pipelines.vocabulary import calls_in, vocabulary
from dpcheck.samplers import sampler_table
from dpcheck.sites.nodes import Call, Const, Name, Node, Seq, Slice, Subscript

if TYPE_CHECKING:
    from dpcheck.pipelines.values import Evaluator

def selection_size(evaluator: Evaluator, call: Node, ctx: Ctx) -> int | None:
    """The number of examples a selection call keeps (see the module docstring), None when
    ``call`` is not one or what it keeps cannot be read."""
    if not isinstance(call, Call) or call.name is None:
        return None
    groups = vocabulary()
    named = evaluator.index.library_name(call.name, ctx) \
        if not call.name.startswith("?.") else None
    if named is not None and groups["selects_indices"].has_library_function(named):
        indices = call.argument(1, "indices")
        return sequence_length(evaluator, indices, ctx) if indices is not None else None
    method = library_method(evaluator.index, call, ctx)
    if method is None or call.receiver is None:
        return None
    library, name = method
    if groups["selects_indices"].has_library_method(library, name):
        indices = call.argument(0, "indices")
        return sequence_length(evaluator, indices, ctx) if indices is not None else None
    if groups["samples_count"].has_library_method(library, name):
        return _sampled(evaluator, call, call.receiver, ctx)
    batched = call.kwargs.get("batched")
    if groups["keeps_all_examples"].has_library_method(library, name) \
            and not (name == "map" and not (isinstance(batched, Const) and batched.value is False)
                     and batched is not None):
        whole = evaluator.dataset_size(call.receiver, ctx)
        return int(whole.value) if whole is not None else None
    return None


def split_size(evaluator: Evaluator, call: Node, part: int, ctx: Ctx) -> int | None:
    """The number of examples of part ``part`` of a split call (``random_split``), None when
    ``call`` is not one or its lengths cannot be read."""
    if not isinstance(call, Call) or call.name is None or call.name.startswith("?."):
        return None
    named = evaluator.index.library_name(call.name, ctx)
    if named is None or not vocabulary()["splits_lengths"].has_library_function(named):
        return None
    lengths = call.argument(1, "lengths")
    if not isinstance(lengths, Seq) or part >= len(lengths.items):
        return None
    found = [evaluator.value(item, ctx) for item in lengths.items]
    numbers = [f.value for f in found if f is not None]
    if len(numbers) != len(found):
        return None
    total = sum(numbers)
    if not (math.isclose(total, 1) and total <= 1):
        counts = [n for n in numbers if float(n).is_integer()]
        return int(numbers[part]) if len(counts) == len(numbers) else None
    dataset = call.argument(0, "dataset")
    whole = evaluator.dataset_size(dataset, ctx) if dataset is not None else None
    if whole is None:
        return None
    sizes = [math.floor(int(whole.value) * fraction) for fraction in numbers]
    for extra in range(int(whole.value) - sum(sizes)):
        sizes[extra % len(sizes)] += 1
    return sizes[part]


def _sampled(evaluator: Evaluator, call: Call, table: Node, ctx: Ctx) -> int | None:
    """The rows ``table.sample(n=K)`` (K) or ``table.sample(frac=f)`` (round(f * rows)) keeps."""
    count = call.argument(0, "n")
    if count is not None and not (isinstance(count, Const) and count.value is None):
        found = evaluator.value(count, ctx)
        return int(found.value) if found is not None and float(found.value).is_integer() else None
    fraction = call.argument(1, "frac")
    share = evaluator.value(fraction, ctx) if fraction is not None else None
    whole = evaluator.dataset_size(table, ctx) if share is not None else None
    return round(share.value * whole.value) if share is not None and whole is not None else None


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
