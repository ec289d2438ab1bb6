"""How TensorFlow training is fed its batches without a Python loop over a loader: a tf.data
``.shuffle(buffer).batch(B)`` chain (fixed batches of a buffered shuffle; the buffer is
evidence, a buffer smaller than the dataset only shuffles locally), an estimator
``numpy_input_fn``/``pandas_input_fn`` (shuffled or sequential fixed batches), Keras
``fit(batch_size=...)``, and a Hugging Face dataset's ``to_tf_dataset(batch_size=B,
shuffle=...)`` (``hf_datasets``: fixed batches, shuffled or not)."""

from __future__ import annotations

from dpcheck.model import Evidence, Span
from dpcheck.pipelines.handwritten import assigned_names
from dpcheck.pipelines.sampling.decision import (
    EVAL_NAME,
    Sampling,
    loader_dataset,
    of_scheme,
    site,
    title,
)
from dpcheck.pipelines.sampling.sampler_calls import SamplerCalls
from dpcheck.pipelines.scope import Ctx
from dpcheck.pipelines.values import Evaluator
from dpcheck.sites.nodes import Attr, Call, Name, Node, walk
from dpcheck.sites.views import Statement

#: Receivers whose ``shuffle(x)`` permutes ``x`` in place (anything else is a tf.data dataset).
RANDOM_MODULES = ("random", "rng", "generator", "np", "numpy")


def shuffle_buffer(call: Node) -> Node | None:
    """The buffer size of a tf.data ``dataset.shuffle(buffer_size)`` call, None for any other
    call (``np.random.shuffle(x)``, ``random.shuffle(x)`` and ``rng.shuffle(x)`` shuffle
    their argument in place; a bare ``shuffle(x, y)`` is a function, not a dataset's
    method)."""
    if not isinstance(call, Call) or call.method != "shuffle":
        return None
    receiver = call.callee.base if isinstance(call.callee, Attr) else None
    head, _, _ = (call.name or "").rpartition(".")
    if receiver is None and not head:
        return None
    if "buffer_size" in call.kwargs:
        return call.kwargs["buffer_size"]
    named = receiver.name if isinstance(receiver, Call) else None
    base = (named or head).lower()
    if not call.args or any(word in base for word in RANDOM_MODULES):
        return None
    return call.argument(0)


def batched(expr: Node, shuffled: Call) -> Call | None:
    """The ``.batch(B)`` call applied to a tf.data ``.shuffle()`` call in the same chain
    (``ds.shuffle(n).repeat().batch(B, drop_remainder=True)``): the loader of those batches,
    whose ``drop_remainder`` decides the batches per epoch; else None."""
    for item in walk(expr):
        if isinstance(item, Call) and isinstance(item.callee, Attr) and item.callee.attr == "batch" \
                and any(inner is shuffled for inner in walk(item.callee.base)):
            return item
    return None


def buffer_evidence(calls: SamplerCalls, ctx: Ctx, shuffle: Call, buffer: Node) -> Evidence:
    """The shuffle buffer of a tf.data ``.shuffle(buffer)``: a buffer smaller than the
    dataset only shuffles locally (docs/theory.md#shuffle-deterministic); never the dataset size."""
    size = Evaluator(calls.index).value(buffer, ctx)
    shown = f"{size.value:g}" if size is not None else "unresolved"
    return Evidence("shuffle-buffer", Span(ctx.path, *shuffle.position),
                    f"tf.data shuffle buffer = {shown} examples; a buffer smaller than the "
                    "dataset is only a local shuffle")


def batch_chain(calls: SamplerCalls, call: Call, ctx: Ctx) -> Sampling | None:
    """A loader expression ``ds.shuffle(n).batch(B)``: fixed batches of a buffered shuffle;
    None when no ``.shuffle()`` is in the chain."""
    chain = [n for n in walk(call) if isinstance(n, Call) and n.method == "shuffle"]
    if not chain:
        return None
    shuffle, *_ = chain
    buffer = shuffle_buffer(shuffle)
    extra = [buffer_evidence(calls, ctx, shuffle, buffer)] if buffer else []
    return of_scheme("buffered-shuffle", [
        Evidence("sampler", Span(ctx.path, *call.position),
                 "tf.data .shuffle().batch(): fixed batches"),
        *extra], (ctx, call))


def shuffled_batches(calls: SamplerCalls, shuffle: Call, buffer: Node, ctx: Ctx,
                     stmt: Statement) -> Sampling:
    """A tf.data ``.shuffle(buffer)`` in a statement: shuffled fixed-size batches, made by the
    ``.batch(B)`` applied to it in the same chain when there is one."""
    batching = batched(stmt.expr, shuffle)
    size = batching.argument(0, "batch_size") if batching is not None else None
    return of_scheme("buffered-shuffle", [
        Evidence("sampler", site(ctx, shuffle, stmt),
                 "tf.data .shuffle(): shuffled fixed-size batches"),
        buffer_evidence(calls, ctx, shuffle, buffer)],
        (ctx, batching) if batching is not None else None,
        batch=(ctx, size) if size is not None else None)


def to_tf_dataset(calls: SamplerCalls, call: Call, ctx: Ctx) -> Sampling:
    """``to_tf_dataset`` of a Hugging Face dataset: fixed-size batches, of a shuffled order
    with ``shuffle=True``, in order without it (the library's default is False)."""
    flag = call.kwargs.get("shuffle")
    shuffled = False if flag is None else calls.flag(flag, ctx)
    order = {True: "shuffled", False: "sequential"}.get(shuffled, "shuffled or sequential")
    scheme = {True: "shuffle", False: "sequential"}.get(shuffled, "shuffled-or-sequential")
    return of_scheme(scheme, [Evidence(
        "sampler", Span(ctx.path, *call.position),
        f"datasets to_tf_dataset(shuffle={shuffled}): {order} fixed-size batches")],
        (ctx, call))


def input_fn(calls: SamplerCalls, call: Call, ctx: Ctx, stmt: Statement) -> list[Sampling]:
    """A TF estimator ``numpy_input_fn``/``pandas_input_fn``: fixed-size batches, shuffled
    or sequential (``shuffle=False``, still fixed batches for DP102). An input fn for
    evaluation (its name or its data says test/eval) is not the training sampler, nor is one
    serving an already sampled array as a single batch (``batch_size=len(subsample)``)."""
    named = [t for t in assigned_names(stmt.target) if EVAL_NAME.search(t)]
    data = loader_dataset(call)
    data_names = [n.dotted for n in walk(data) if isinstance(n, Name)] if data is not None else []
    batch = call.kwargs.get("batch_size")
    if named or any(EVAL_NAME.search(n) for n in data_names) or (
            isinstance(batch, Call) and batch.name == "len"):
        return []
    span = site(ctx, call, stmt)
    flag = call.kwargs.get("shuffle")
    shuffled = calls.flag(flag, ctx) if flag is not None else None
    if shuffled is None:
        return [Sampling(note=f"{call.method} shuffle flag not resolved",
                         evidence=[Evidence("sampler", span, "estimator input fn with an "
                                            "unresolved shuffle flag")])]
    note = "shuffled fixed-size batches" if shuffled else "sequential fixed-size batches"
    return [of_scheme("shuffle" if shuffled else "sequential", [Evidence(
        "sampler", span, f"{call.method}(shuffle={shuffled}): {note}")],
        (ctx, call))]


def keras_fit(calls: SamplerCalls, call: Call, ctx: Ctx, stmt: Statement) -> Sampling:
    """Keras ``fit(x, y, batch_size=B)``: fixed-size batches, shuffled unless ``shuffle=False``
    (the library's default is True)."""
    flag = call.kwargs.get("shuffle")
    shuffled = calls.flag(flag, ctx) if flag is not None else True
    scheme = {True: "shuffle", False: "sequential"}.get(shuffled, "shuffled-or-sequential")  # type: ignore[arg-type]
    return of_scheme(scheme, [Evidence(
        "sampler", site(ctx, call, stmt), f"Keras fit(batch_size=...): {title(scheme)}")],
        (ctx, call))
