"""A loader that serves its whole dataset as one batch samples nothing.

``DataLoader(data, batch_size=len(data))`` yields ``data`` itself, once per pass: the batch is
the dataset it was given, so the loader's order (shuffled or not) decides nothing and the
sampling is whatever made ``data``. A batch size is "the size of the data" when it measures the
very value the loader batches, or the index set that value was built from: ``len(x)``,
``x.shape[0]``, ``x.size(0)``, ``x.__len__()``, or a name bound to one of them, where ``x`` is
the loader's dataset or the indices of ``Subset(base, indices)`` / ``base[indices]``.

Where the examples come from is then read from the index set: followed through names, item
reads (``lots[t]``: one of a sequence of index sets) and attribute stores (``self.lots =
...``) to the project function that returns the index sets (``draws``); the sampling
analyzer reads that function's draws as it reads any index sampling (a Bernoulli mask is
Poisson sampling, a permutation cut into fixed-size slices fixed-size batches), each name
followed a question of the memo and cycle guard of ``dpcheck.pipelines.questions``.
"""

from __future__ import annotations

from dataclasses import dataclass

from dpcheck.pipelines.index import ProjectIndex
from dpcheck.pipelines.scope import Ctx
from dpcheck.pipelines.vocabulary import vocabulary
from dpcheck.sites.nodes import Call, Name, Node, Num, Subscript, node

@dataclass(frozen=True)
class WholeBatch:
    """A loader serving its dataset as one batch: the dataset, and the index set it was built
    from (None when it was not built from one) with where that index set is read."""

    dataset: Node
    indices: tuple[Node, Ctx] | None


def whole_batch(index: ProjectIndex, call: Node, ctx: Ctx) -> WholeBatch | None:
    """``call`` (a loader taking a dataset and a batch size) as a loader of one batch holding
    its whole dataset, else None."""
    call = node(call)
    if not isinstance(call, Call):
        return None
    dataset = call.argument(0, "dataset")
    size = call.argument(1, "batch_size")
    if dataset is None or size is None:
        return None
    measured = _measured(index, size, ctx)
    if measured is None:
        return None
    indices = index_set(index, dataset, ctx)
    if measured == dataset:
        return WholeBatch(dataset, indices)
    if indices is not None:
        index_values, read_at = indices
        if (read_at.path, read_at.scope) == (ctx.path, ctx.scope) and measured == index_values:
            return WholeBatch(dataset, indices)
    return None


def _measured(index: ProjectIndex, size: Node, ctx: Ctx) -> Node | None:
    """The value whose size ``size`` is (``len(x)``, ``x.shape[0]``, ``x.size(0)``,
    ``x.__len__()``, or a local name bound to one of them), else None."""
    if isinstance(size, Call) and size.name == "len" and len(size.args) == 1:
        [measured] = size.args
        return measured
    if isinstance(size, Call) and size.method in ("size", "__len__") and size.receiver is not None \
            and (not size.args if size.method == "__len__" else _is_zero(size.args)):
        return size.receiver
    if isinstance(size, Subscript) and isinstance(size.index, Num) and size.index.value == 0 \
            and isinstance(size.value, Name) and size.value.last == "shape" and "." in size.value.dotted:
        return Name(["r", size.value.base])
    if isinstance(size, Name):
        bound = _assigned(index, size, ctx)
        if bound is not None:
            value, where = bound
            return index.questions.ask(("measured", size.dotted, ctx, index.reach), lambda: _measured(
                index, value, where), None) if where.scope == ctx.scope else None
    return None


def _is_zero(args: list[Node]) -> bool:
    if len(args) != 1:
        return False
    [arg] = args
    return isinstance(arg, Num) and arg.value == 0


def index_set(index: ProjectIndex, dataset: Node, ctx: Ctx) -> tuple[Node, Ctx] | None:
    """The index set a dataset value was built from (``Subset(base, indices)``, ``base[indices]``,
    through names) and where it is read, else None."""
    if isinstance(dataset, Name):
        bound = _assigned(index, dataset, ctx)
        return index.questions.ask(("index-set", dataset.dotted, ctx, index.reach), lambda: index_set(
            index, *bound), None) if bound is not None else None
    named = index.library_name(dataset.name, ctx) if isinstance(dataset, Call) \
        and dataset.name and not dataset.name.startswith("?.") else None
    if isinstance(dataset, Call) and named is not None \
            and vocabulary()["selects_indices"].has_library_function(named):
        indices = dataset.argument(1, "indices")
        return (indices, ctx) if indices is not None else None
    if isinstance(dataset, Subscript) and not isinstance(dataset.index, Num):
        return dataset.index, ctx
    return None


def draws(index: ProjectIndex, indices: Node, ctx: Ctx) -> Ctx | None:
    """The project function whose return an index set is taken from (directly, or as one item
    of the sequence of index sets it returns), followed through names and attribute stores."""
    if isinstance(indices, Subscript):
        return draws(index, indices.value, ctx)
    if isinstance(indices, Name):
        bound = _assigned(index, indices, ctx)
        return index.questions.ask(("draws", indices.dotted, ctx, index.reach), lambda: draws(
            index, *bound), None) if bound is not None else None
    if isinstance(indices, Call) and indices.name:
        function = index.function(indices.name, ctx)
        if function is not None and not function.scope.endswith(".__init__"):
            return function
    return None


def _assigned(index: ProjectIndex, name: Name, ctx: Ctx) -> tuple[Node, Ctx] | None:
    """What a name (or attribute) is plainly assigned, and where to read it."""
    found = index.assigned(name.dotted, ctx)
    if found is None:
        return None
    value, where = found
    return node(value), where
