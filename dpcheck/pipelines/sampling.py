"""How a pipeline forms its batches: Poisson, shuffle (fixed-size batches) or unknown.

The loader the training loop iterates decides (following the object the loop reads, so an
Opacus ``make_private`` that returns a Poisson loader wins over the ``shuffle=True`` of the
loader passed in, and a project helper's returned loader is the one of the ``return`` the
default configuration reaches). The loop that takes optimizer steps wins over statistics or
pre-computation passes over other loaders. A loop over a project generator function reads
what it yields (``generators``: fixed slices are shuffle, Bernoulli-masked items Poisson). A
loop over ``range`` that draws ``next(it)`` from
``it = iter(loader)`` reads that loader; other loops over ``range`` use the index sampling
found in the same scopes: Bernoulli masks (``rand(n) < q``, ``rand(n) > 1 - q``) are Poisson;
permutations and fixed slices are shuffle. Training fed by TF without a Python loop is read
from where its batches are made: a tf.data ``.shuffle().batch(B)`` chain, an estimator ``numpy_input_fn`` (shuffled or
sequential fixed batches), Keras ``fit(batch_size=...)``, a Hugging Face dataset's
``to_tf_dataset(batch_size=B, shuffle=...)`` (``hf_datasets``: fixed batches, shuffled or not).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from dpcheck.model import Evidence, Span
from dpcheck.pipelines.binding import Binding
from dpcheck.pipelines.divisor import BERNOULLI, UNIFORM, DivisorClassifier
from dpcheck.pipelines.generators import Yielded, yielded_batches
from dpcheck.pipelines.handwritten import assigned_names
from dpcheck.pipelines.hf_datasets import is_to_tf_dataset
from dpcheck.pipelines.hf_trainer import inherited_loader, sampler_method
from dpcheck.pipelines.index import ProjectIndex
from dpcheck.pipelines.returned import returned_item
from dpcheck.pipelines.scope import Ctx
from dpcheck.pipelines.values import READ_AT, Evaluator
from dpcheck.sites.ir import IR, callee_name, tail_name, walk
from dpcheck.sites.nodes import Call

POISSON_SAMPLERS = frozenset({"UniformWithReplacementSampler", "DPDataLoader",
                              "from_data_loader", "DistributedUniformWithReplacementSampler"})
SHUFFLE_SAMPLERS = frozenset({"RandomSampler", "DistributedSampler", "SubsetRandomSampler"})
#: Calls that iterate over a loader unchanged (a progress bar, an index pairing).
ITERATION_WRAPPERS = frozenset({"tqdm", "enumerate"})
PERMUTATIONS = frozenset({"permutation", "randperm", "shuffle"})
#: TF estimator input functions over in-memory arrays (``tf.compat.v1.estimator.inputs``).
INPUT_FNS = frozenset({"numpy_input_fn", "pandas_input_fn"})
#: Receivers whose ``shuffle(x)`` permutes ``x`` in place (anything else is a tf.data dataset).
RANDOM_MODULES = ("random", "rng", "generator", "np", "numpy")
_EVAL_NAME = re.compile(r"(test|val|eval|valid)", re.I)
#: The note of a pipeline in which no sampling site at all was found (no loop over a loader, no
#: index draw): ``full_batch`` reads it.
NO_SAMPLING = "no training loop over a data loader or sampled indices found"
#: Calls that make a loop over a loader a training loop (``step*`` too: ``step_dp``).
TRAINING_CALLS = frozenset({"backward", "virtual_step", "apply_gradients", "minimize"})


@dataclass
class Sampling:
    """The sampling decision, its evidence, and the loader call the batch size comes from."""

    kind: str = "unknown"
    evidence: list[Evidence] = field(default_factory=list)
    loader: tuple[Ctx, IR] | None = None
    note: str = ""
    rate: tuple[Ctx, IR] | None = None
    steps: tuple[Ctx, IR] | None = None
    population: tuple[Ctx, IR] | None = None
    batch: tuple[Ctx, IR] | None = None
    #: The batches of one pass over the loader (a project sampler's ``range``): ``steps`` only
    #: once multiplied by the passes the training loop makes (``loader_passes``).
    per_pass: tuple[Ctx, IR] | None = None



def _span(ctx: Ctx, node: IR | None, stmt: dict[str, Any]) -> Span:
    if node is not None and node[0] == "call":
        return Span(ctx.path, *node[4])
    return Span(ctx.path, stmt["line"], stmt["col"])


class SamplingAnalyzer:
    """Classifies the sampling of the training loops found in a set of scopes."""

    def __init__(self, index: ProjectIndex, poisson_default: bool | None) -> None:
        self.index = index
        self.origins = DivisorClassifier(index)
        self.poisson_default = poisson_default
        self._reached: set[tuple[str, str]] = set()

    def analyze(self, scopes: Iterable[Ctx]) -> Sampling:
        scopes = list(scopes)
        self._reached = {(c.path, c.scope) for c in scopes}
        training: list[Sampling] = []
        decisions: list[Sampling] = []
        index_sampling: list[Sampling] = []
        for ctx in scopes:
            scope = self.index.scope(ctx)
            stmts = scope["stmts"] if scope else []
            for position, stmt in enumerate(stmts):
                if not self.index.runs(ctx, stmt):
                    continue
                where = Ctx(ctx.path, ctx.scope, stmt["line"])
                if stmt["k"] == "for":
                    steps = _steps(stmts, position)
                    drawn = _drawn(stmts, position, ctx)
                    found = self._loop(stmt, where, steps) if drawn is None \
                        else self.loader(*drawn)
                    if found is not None and found.per_pass is not None:
                        found = replace(found, steps=loader_passes(ctx, stmts, position,
                                                              found.per_pass)
                                        if drawn is None and self._runs_once(ctx, scopes[0])
                                        else None)
                    if found is not None:
                        (training if steps else decisions).append(found)
                index_sampling.extend(self._index_sampling(stmt, where))
        for group in (training or decisions, index_sampling):
            kinds = {d.kind for d in group}
            if len(kinds) == 1:
                return group[0]
            if len(kinds) > 1:
                return Sampling("unknown", [e for d in group for e in d.evidence],
                                note="the training loops sample in different ways")
        return Sampling(note=NO_SAMPLING)

    def _runs_once(self, ctx: Ctx, entry: Ctx, depth: int = 0) -> bool:
        """Whether the scope ``ctx`` runs once per run of ``entry``: it is the entry, or its one
        caller in the pipeline calls it outside any loop and runs once itself."""
        if (ctx.path, ctx.scope) == (entry.path, entry.scope):
            return True
        sites = [w for w, _ in self.index.call_sites(Ctx(ctx.path, ctx.scope))
                 if (w.path, w.scope) in self._reached]
        scope = self.index.scope(sites[0]) if len(sites) == 1 and depth < 8 else None
        return scope is not None and any(
            stmt["line"] == sites[0].line and stmt["ld"] == 0 for stmt in scope["stmts"]) \
            and self._runs_once(sites[0], entry, depth + 1)

    def _loop(self, stmt: dict[str, Any], ctx: Ctx, trains: bool = False) -> Sampling | None:
        """The sampling of a loop's iterable when it is a loader (None when it is not one). A
        training loop over a name saying it is a loader that dpcheck cannot follow, or over a
        batch source found but not decided (an ``unknown`` with sampler evidence: a project
        generator), is kept as ``unknown``: another loop's loader must not stand in for it."""
        iterable: IR = stmt["e"]
        while iterable[0] == "call" and callee_name(iterable) in ("enumerate", "tqdm", "zip") \
                and iterable[2]:
            iterable = iterable[2][0]
        if iterable[0] == "r" and _EVAL_NAME.search(iterable[1]):
            return None
        if self.origins.origin(iterable, ctx) == "loader":
            return self.loader(iterable, ctx)
        if iterable[0] not in ("r", "call"):
            return None
        found = self.loader(iterable, ctx)  # a loader a project helper builds and returns
        named = iterable[0] == "r" and "loader" in iterable[1].lower()
        return found if found.kind != "unknown" or (trains and (named or found.evidence)) \
            else None

    def loader(self, ir: IR, ctx: Ctx, depth: int = 0) -> Sampling:
        """The sampling of a loader expression (followed to the call that built it)."""
        if depth > 8:
            return Sampling(note="loader chain too long")
        if ir[0] == "r":
            binding = self.index.attribute(ir[1], ctx)
            if binding is not None and binding.kind == "param":
                passed = {self.loader(arg, where, depth + 1).kind: (arg, where)
                          for where, arg in self._arguments(binding)}
                if len(passed) == 1:
                    arg, where = passed.popitem()[1]
                    return self.loader(arg, where, depth + 1)
            if binding is None or binding.ir is None or binding.kind not in ("assign", "loop"):
                return Sampling(note=f"{ir[1]} is not bound to a loader dpcheck can follow")
            value = binding.ir
            where = replace(binding.ctx, line=binding.line)
            if binding.index and value[0] == "call" and tail_name(callee_name(value)) in (
                    "make_private", "make_private_with_epsilon"):
                return self._opacus(value, where, depth)
            target = self.index.function(callee_name(value) or "", where) \
                if binding.index and value[0] == "call" else None
            if target is not None and not target.scope.endswith(".__init__"):
                return self._returned_loader(target, tail_name(callee_name(value)), depth,
                                             binding.index, self.index.unpacked_width(binding))
            if binding.index:
                return Sampling(note=f"{ir[1]} is unpacked from an expression not followed")
            return self.loader(value, where, depth + 1)
        item = returned_item(self.index, ir, ctx)
        if item is not None:
            return self.loader(*item, depth + 1)
        if ir[0] != "call":
            return Sampling(note="loader expression not followed")
        tail = tail_name(callee_name(ir))
        span = Span(ctx.path, *ir[4])
        if tail in ITERATION_WRAPPERS and ir[2]:
            return self.loader(ir[2][0], ctx, depth + 1)
        inherited = inherited_loader(self.index, ir, ctx)
        if inherited is not None:
            return Sampling("shuffle", [inherited])
        if callee_name(ir) == "iter" and ir[2]:
            return self.loader(ir[2][0], ctx, depth + 1)
        if tail in POISSON_SAMPLERS:
            return Sampling("poisson", [Evidence("sampler", span, f"{tail}: Poisson sampling")],
                            (ctx, ir))
        if tail == "BatchMemoryManager":
            inner = ir[3].get("data_loader")
            return self.loader(inner, ctx, depth + 1) if inner else Sampling()
        if tail == "DataLoader":
            return self._data_loader(ir, ctx, span, depth)
        if is_to_tf_dataset(self.index, ir, ctx):
            return self._to_tf_dataset(ir, ctx)
        if tail == "batch":
            chain = [n for n in walk(ir)
                     if n[0] == "call" and tail_name(callee_name(n)) == "shuffle"]
            if chain:
                buffer = shuffle_buffer(chain[0])
                extra = [self._buffer_evidence(ctx, chain[0], None, buffer)] if buffer else []
                return Sampling("shuffle", [Evidence("sampler", span,
                                                     "tf.data .shuffle().batch(): fixed batches"),
                                            *extra], (ctx, ir))
        target = self.index.function(callee_name(ir) or "", ctx)
        if target is not None and not target.scope.endswith(".__init__"):
            yielded = yielded_batches(self.index, target, ir, ctx)
            if yielded is not None:
                return self._generator(target, yielded, span)
            return self._returned_loader(target, tail, depth)
        return Sampling(note=f"{tail}() is not a loader dpcheck knows")

    def _generator(self, function: Ctx, yielded: Yielded, call: Span) -> Sampling:
        """The batches of a project generator the loop iterates: fixed-size slices are shuffle
        (sequential, or after the permutation the generator draws), items indexed by the
        Bernoulli mask it draws are Poisson; anything else (slices with a mask, a mask with
        fixed slices, nothing drawn for indexed items) stays unknown."""
        drawn = [found for where, stmt in self.index.statements([function])
                 for found in self._index_sampling(stmt, where)]
        kinds = {d.kind for d in drawn}
        via = Evidence("sampler", call, "the training loop iterates this project generator")
        evidence = [Evidence("sampler", yielded.span, yielded.note), via]
        if yielded.kind == "slices" and kinds <= {"shuffle"}:
            order = "after a permutation: shuffled" if kinds else "in order: sequential"
            evidence[0] = Evidence("sampler", yielded.span,
                                   f"{yielded.note}, {order} fixed-size batches")
            return Sampling("shuffle", [*evidence, *(e for d in drawn for e in d.evidence)],
                            batch=yielded.width)
        if yielded.kind == "indexed" and kinds == {"poisson"}:
            # its loop counts the batches of one call (one pass), not the training steps
            return replace(drawn[0], steps=None, per_pass=drawn[0].steps,
                           evidence=[*evidence, *drawn[0].evidence])
        why = yielded.note if yielded.kind == "unknown" else (
            f"{yielded.note}, drawn {' and '.join(sorted(kinds)) or 'without a sampling draw'}")
        return Sampling(note=why, evidence=evidence)

    def _returned_loader(self, function: Ctx, name: str, depth: int, index: tuple[int, ...] = (),
                         width: int | None = None) -> Sampling:
        """The loader a project function returns (``get_loader(...)``, a loader factory's
        closure), or element ``index`` of the tuples it returns, unpacked into ``width`` names
        (``train, test, n = get_loaders(...)``: a return of another length is not the one
        unpacked). Returns in an ``if`` arm the default configuration skips are left out; the
        rest must agree."""
        evaluator = Evaluator(self.index)
        found: list[Sampling] = []
        for value, where, stmt in self.index.returned_parts(function, index, width):
            runs = [None if holds is None else holds == (arm == 0)
                    for line, arm in stmt.get("br", ())
                    for holds in [self._holds(evaluator, where, line)]]
            if False in runs:
                continue
            found.append(self.loader(value, where, depth + 1))
            if stmt["ld"] == 0 and None not in runs:
                break  # this return always runs: the later ones are unreachable
        kinds = {f.kind for f in found}
        if len(kinds) == 1:
            return found[0]
        return Sampling(note=f"{name}() returns loaders that sample in different ways" if found
                        else f"{name}() returns no loader dpcheck can follow")

    def _holds(self, evaluator: Evaluator, ctx: Ctx, line: int) -> bool | None:
        """Whether the test of the ``if`` at ``line`` holds under the default configuration."""
        test = self.index.if_test(ctx, line)
        return evaluator.truth(test, replace(ctx, line=line)) if test is not None else None

    def _flag(self, ir: IR, ctx: Ctx, depth: int = 0) -> bool | None:
        """A boolean literal, or a name holding one (an option default: ``type=`` only parses
        command-line strings, the default is used as written)."""
        if ir[0] == "c" and isinstance(ir[1], bool):
            return ir[1]
        binding = self.index.attribute(ir[1], ctx) if ir[0] == "r" and depth < 8 else None
        if binding is None or binding.ir is None or binding.index or binding.kind not in (
                "assign", "option"):
            return None
        return self._flag(binding.ir, replace(binding.ctx, line=binding.line), depth + 1)

    def _project_sampler(self, call: IR, ctx: Ctx, key: str) -> Sampling | None:
        """A sampler class of the project: the index sampling its methods draw (a Bernoulli
        mask in ``__iter__`` is Poisson sampling)."""
        cls = self.index.bind(callee_name(call) or "", ctx)
        summary = self.index.summary(cls.ctx.path) if cls is not None else None
        if cls is None or cls.kind != "class" or summary is None:
            return None
        found = [sampling for qual, scope in summary["scopes"].items()
                 if scope.get("class") == cls.name and qual != cls.name
                 for stmt in scope["stmts"]
                 for sampling in self._index_sampling(stmt, Ctx(cls.ctx.path, qual, stmt["line"]))]
        kinds = {f.kind for f in found}
        if len(kinds) != 1:
            return None
        # its range() counts the batches of one pass over the loader, not the training steps
        chosen = replace(found[0], steps=None, per_pass=found[0].steps)
        note = f"DataLoader({key}={cls.name}) draws its batches in the project's sampler" + (
            "; its iteration count is per pass over the loader, not a step count"
            if chosen.per_pass is not None else "")
        chosen.evidence = [Evidence("sampler", Span(ctx.path, *call[4]), note), *chosen.evidence]
        return chosen

    def _arguments(self, param: Binding) -> list[tuple[Ctx, IR]]:
        """What callers pass for a parameter, preferring the callers inside this pipeline (a
        helper shared by several entry points gets each entry's own loader)."""
        passed = list(self.index.arguments(param))
        own = [(w, a) for w, a in passed if (w.path, w.scope) in self._reached]
        return own or passed

    def _data_loader(self, ir: IR, ctx: Ctx, span: Span, depth: int) -> Sampling:
        kwargs = ir[3]
        for key in ("batch_sampler", "sampler"):
            sampler = kwargs.get(key)
            if sampler is None:
                continue
            if sampler[0] == "r":
                binding = self.index.attribute(sampler[1], ctx)
                sampler = binding.ir if binding is not None and binding.ir else sampler
            tail = tail_name(callee_name(sampler)) if sampler[0] == "call" else ""
            if tail in POISSON_SAMPLERS:
                return Sampling("poisson", [Evidence("sampler", span,
                                                     f"DataLoader({key}={tail}): Poisson")],
                                (ctx, ir))
            if tail in SHUFFLE_SAMPLERS:
                return Sampling("shuffle", [Evidence("sampler", span,
                                                     f"DataLoader({key}={tail}): fixed batches")],
                                (ctx, ir))
            own = self._project_sampler(sampler, ctx, key) if sampler[0] == "call" else None
            fixed = sampler_method(self.index, sampler, ctx, SHUFFLE_SAMPLERS) \
                if own is None and key == "sampler" and sampler[0] == "call" else None
            if fixed:
                return Sampling("shuffle", [*fixed, Evidence(
                    "sampler", span, "DataLoader(sampler=...) batches the sampler returned")],
                    (ctx, ir))
            return own or Sampling(note=f"DataLoader {key} not recognised")
        shuffle = kwargs.get("shuffle")
        note = "DataLoader(shuffle=True): shuffled fixed-size batches" if shuffle == [
            "c", True] else "DataLoader without shuffle: sequential fixed-size batches"
        if shuffle not in (None, ["c", True], ["c", False]):
            note = ("DataLoader with a shuffle flag not resolved: fixed-size batches, shuffled "
                    "or sequential")
        return Sampling("shuffle", [Evidence("sampler", span, note)], (ctx, ir))

    def _to_tf_dataset(self, call: Call, ctx: Ctx) -> Sampling:
        """``to_tf_dataset`` of a Hugging Face dataset: fixed-size batches, of a shuffled order
        with ``shuffle=True``, in order without it (the library's default is False)."""
        flag = call.kwargs.get("shuffle")
        shuffled = False if flag is None else self._flag(flag, ctx)
        order = {True: "shuffled", False: "sequential"}.get(shuffled, "shuffled or sequential")
        return Sampling("shuffle", [Evidence(
            "sampler", Span(ctx.path, *call.position),
            f"datasets to_tf_dataset(shuffle={shuffled}): {order} fixed-size batches")],
            (ctx, call))

    def _opacus(self, call: IR, ctx: Ctx, depth: int) -> Sampling:
        flag = call[3].get("poisson_sampling")
        span = Span(ctx.path, *call[4])
        poisson = self.poisson_default if flag is None else self._flag(flag, ctx)
        inner = call[3].get("data_loader")
        if poisson:
            base = self.loader(inner, ctx, depth + 1) if inner is not None else Sampling()
            return Sampling("poisson", [Evidence(
                "sampler", span, "make_private replaces the data loader by a Poisson DPDataLoader"
            )], base.loader or (ctx, call))
        if poisson is None:
            return Sampling(note="make_private's poisson_sampling is not known")
        if inner is None:
            return Sampling(note="make_private without a data_loader argument")
        base = self.loader(inner, ctx, depth + 1)
        note = "make_private(poisson_sampling=False) keeps the loader's fixed-size batches"
        base.evidence = [Evidence("sampler", span, note), *base.evidence]
        return base

    def _buffer_evidence(self, ctx: Ctx, node: IR, stmt: dict[str, Any] | None,
                         buffer: IR) -> Evidence:
        """The shuffle buffer of a tf.data ``.shuffle(buffer)``: a buffer smaller than the
        dataset only shuffles locally (PATTERNS 3); never the dataset size."""
        size = Evaluator(self.index).value(buffer, ctx)
        shown = f"{size.value:g}" if size is not None else "unresolved"
        span = Span(ctx.path, *node[4]) if stmt is None else _span(ctx, node, stmt)
        return Evidence("shuffle-buffer", span,
                        f"tf.data shuffle buffer = {shown} examples; a buffer smaller than the "
                        "dataset is only a local shuffle")

    def _slice_width(self, ctx: Ctx) -> tuple[Ctx, IR] | None:
        """The step of a ``for start in range(0, n, B)`` loop in the scope: the batch size of
        fixed slices of a permutation."""
        scope = self.index.scope(ctx)
        for stmt in scope["stmts"] if scope else []:
            iterable = stmt["e"]
            if stmt["k"] == "for" and iterable[0] == "call" and callee_name(iterable) == "range" \
                    and len(iterable[2]) == 3:
                return Ctx(ctx.path, ctx.scope, stmt["line"]), iterable[2][2]
        return None

    def _input_fn(self, call: IR, ctx: Ctx, stmt: dict[str, Any]) -> list[Sampling]:
        """A TF estimator ``numpy_input_fn``/``pandas_input_fn``: fixed-size batches, shuffled
        or sequential (``shuffle=False``, still fixed batches for DP102). An input fn for
        evaluation (its name or its data says test/eval) is not the training sampler, nor is one
        serving an already sampled array as a single batch (``batch_size=len(subsample)``)."""
        named = [t for t in assigned_names(stmt["t"]) if _EVAL_NAME.search(t)]
        data = loader_dataset(call)
        data_names = [n[1] for n in walk(data) if n[0] == "r"] if data is not None else []
        batch = call[3].get("batch_size")
        if named or any(_EVAL_NAME.search(n) for n in data_names) or (
                batch is not None and batch[0] == "call" and callee_name(batch) == "len"):
            return []
        span = _span(ctx, call, stmt)
        flag = call[3].get("shuffle")
        shuffled = self._flag(flag, ctx) if flag is not None else None
        if shuffled is None:
            return [Sampling(note=f"{tail_name(callee_name(call))} shuffle flag not resolved",
                             evidence=[Evidence("sampler", span, "estimator input fn with an "
                                                "unresolved shuffle flag")])]
        note = "shuffled fixed-size batches" if shuffled else "sequential fixed-size batches"
        return [Sampling("shuffle", [Evidence(
            "sampler", span, f"{tail_name(callee_name(call))}(shuffle={shuffled}): {note}")],
            (ctx, call))]

    def _index_sampling(self, stmt: dict[str, Any], ctx: Ctx) -> list[Sampling]:
        found: list[Sampling] = []
        # The enclosing range() counts all steps only when no outer loop (epochs) repeats it.
        steps = self.index.loop_count(ctx, stmt) if stmt["ld"] == 1 else None
        for node in walk(stmt["e"]):
            if node[0] == "call" and tail_name(callee_name(node)) in BERNOULLI:
                rate, population = _bernoulli_arguments(node)
                found.append(Sampling("poisson", [Evidence("sampler", _span(ctx, node, stmt),
                                                           "Bernoulli mask: Poisson sampling")],
                                      rate=(ctx, rate) if rate else None, steps=steps,
                                      population=(ctx, population) if population else None))
            elif node[0] == "call" and (buffer := shuffle_buffer(node)) is not None:
                size = _batched(stmt["e"], node)
                found.append(Sampling("shuffle", [
                    Evidence("sampler", _span(ctx, node, stmt),
                             "tf.data .shuffle(): shuffled fixed-size batches"),
                    self._buffer_evidence(ctx, node, stmt, buffer)],
                    batch=(ctx, size) if size is not None else None))
            elif node[0] == "call" and tail_name(callee_name(node)) in PERMUTATIONS:
                found.append(Sampling("shuffle", [Evidence(
                    "sampler", _span(ctx, node, stmt), "permutation then fixed-size slices")],
                    population=(ctx, node[2][0]) if node[2] else None,
                    batch=self._slice_width(ctx)))
            elif node[0] == "cmp" and node[1] in ("<", "<=") and node[2][0] == "call" \
                    and tail_name(callee_name(node[2])) in UNIFORM:
                draw = node[2]
                found.append(Sampling("poisson", [Evidence(
                    "sampler", _span(ctx, draw, stmt), "uniform draw < q: Poisson sampling")],
                    rate=(ctx, node[3]), steps=steps,
                    population=(ctx, draw[2][0]) if draw[2] else None))
            elif node[0] == "cmp" and node[1] in (">", ">=") and node[2][0] == "call" \
                    and tail_name(callee_name(node[2])) in UNIFORM and node[2][2]:
                draw = node[2]
                found.append(Sampling("poisson", [Evidence(
                    "sampler", _span(ctx, draw, stmt), "uniform draw > 1 - q: Poisson sampling")],
                    rate=(ctx, _complement(node[3])), steps=steps,
                    population=(ctx, draw[2][0]) if draw[2] else None))
            elif node[0] == "call" and tail_name(callee_name(node)) in INPUT_FNS:
                found.extend(self._input_fn(node, ctx, stmt))
            elif is_to_tf_dataset(self.index, node, ctx) and not any(
                    _EVAL_NAME.search(t) for t in assigned_names(stmt["t"])):
                found.append(self._to_tf_dataset(node, ctx))
            elif node[0] == "call" and tail_name(callee_name(node)) == "fit" \
                    and "batch_size" in node[3]:
                found.append(Sampling("shuffle", [Evidence(
                    "sampler", _span(ctx, node, stmt), "Keras fit(batch_size=...): shuffled "
                    "fixed-size batches")], (ctx, node)))
        return found


def loader_dataset(call: IR) -> IR | None:
    """The dataset a loader call batches: ``DataLoader(dataset)``/``dataset=``, the ``x`` of an
    estimator input fn (the first array of an ``x={'name': array}`` dict), the dataset whose
    ``to_tf_dataset`` made the batches (a call ``SamplingAnalyzer`` took for that method)."""
    if isinstance(call, Call) and call.method == "to_tf_dataset":
        return call.receiver
    if tail_name(callee_name(call)) in INPUT_FNS:
        data = call[3].get("x", call[2][0] if call[2] else None)
        if data is not None and data[0] == "d":
            return data[1][0][1] if data[1] else None
        return data
    return call[2][0] if call[2] else call[3].get("dataset")


def _batched(expr: IR, shuffled: IR) -> IR | None:
    """The batch size B of the ``.batch(B)`` applied to a tf.data ``.shuffle()`` call in the
    same chain (``ds.shuffle(n).repeat().batch(B)``), else None."""
    for node in walk(expr):
        if node[0] == "call" and node[1][0] == "a" and node[1][2] == "batch" \
                and any(inner is shuffled for inner in walk(node[1][1])):
            return node[3].get("batch_size", node[2][0] if node[2] else None)
    return None


def _complement(ir: IR) -> IR:
    """``q`` of a threshold ``1 - q`` (``rand(n) > 1 - q`` keeps each item with probability q),
    else the expression ``1 - threshold``."""
    if ir[0] == "b" and ir[1] == "-" and ir[2] in (["n", 1], ["n", 1.0]):
        return ir[3]
    return ["b", "-", ["n", 1], ir]


def _body(stmts: list[dict[str, Any]], loop: int) -> Iterator[dict[str, Any]]:
    """The statements inside the loop at ``stmts[loop]`` (nested ones included), in order."""
    for stmt in stmts[loop + 1:]:
        enclosing = stmt["loop"]
        while enclosing > loop:
            enclosing = stmts[enclosing]["loop"]
        if enclosing == loop:
            yield stmt
        elif stmt["ld"] <= stmts[loop]["ld"]:
            return


def _steps(stmts: list[dict[str, Any]], loop: int) -> bool:
    """Whether the body of the loop at ``stmts[loop]`` takes training steps (``backward``, an
    optimizer ``step``): the loop that trains, not a statistics or pre-computation pass over
    another loader."""
    return any(node[0] == "call" and _is_step(tail_name(callee_name(node)))
               for stmt in _body(stmts, loop) for node in walk(stmt["e"]))


def _drawn(stmts: list[dict[str, Any]], loop: int, ctx: Ctx) -> tuple[IR, Ctx] | None:
    """The iterator a ``for ... in range(n)`` loop draws its batches from with ``next(it)``
    (``it = iter(loader)`` before the loop), and where the draw reads it; None for any other
    loop."""
    iterable = stmts[loop]["e"]
    if iterable[0] != "call" or callee_name(iterable) != "range":
        return None
    for stmt in _body(stmts, loop):
        for node in walk(stmt["e"]):
            if node[0] == "call" and callee_name(node) == "next" and node[2]:
                return node[2][0], Ctx(ctx.path, ctx.scope, stmt["line"])
    return None


def loader_passes(ctx: Ctx, stmts: list[dict[str, Any]], loop: int,
                  per_pass: tuple[Ctx, IR]) -> tuple[Ctx, IR] | None:
    """The steps of the loop ``stmts[loop]`` (of the scope ``ctx``, run once) over a loader of
    ``per_pass`` batches: ``per_pass`` times the count of each ``range(n)`` loop around it; None
    when another loop repeats it (a ``while epsilon < budget`` that rebuilds the loader)."""
    where, count = per_pass
    steps: IR = [READ_AT, where.path, where.scope, where.line, count]
    outer = stmts[loop]["loop"]
    while outer >= 0:
        header = stmts[outer]
        iterable = header["e"]
        if header["k"] != "for" or iterable[0] != "call" or callee_name(iterable) != "range" \
                or len(iterable[2]) != 1:
            return None
        steps = ["b", "*", steps, iterable[2][0]]
        outer = header["loop"]
    return Ctx(ctx.path, ctx.scope, stmts[loop]["line"]), steps


def _is_step(tail: str) -> bool:
    return tail in TRAINING_CALLS or tail.startswith("step")


def shuffle_buffer(node: IR) -> IR | None:
    """The buffer size of a tf.data ``dataset.shuffle(buffer_size)`` call, None for any other
    call (``np.random.shuffle(x)``, ``random.shuffle(x)`` and ``rng.shuffle(x)`` shuffle
    their argument in place)."""
    if tail_name(callee_name(node)) != "shuffle":
        return None
    if "buffer_size" in node[3]:
        return node[3]["buffer_size"]
    receiver = node[1][1] if node[1][0] == "a" else None
    named = callee_name(receiver) if receiver is not None and receiver[0] == "call" else None
    base = (named or (callee_name(node) or "").rpartition(".")[0]).lower()
    if not node[2] or any(word in base for word in RANDOM_MODULES):
        return None
    return node[2][0]


def _bernoulli_arguments(node: IR) -> tuple[IR | None, IR | None]:
    """(q, N) of ``np.random.binomial(1, q, N)`` or ``torch.bernoulli(torch.full((N,), q))``."""
    args = node[2]
    if tail_name(callee_name(node)) == "binomial" and len(args) > 2:
        return args[1], args[2]
    if args and args[0][0] == "call" and tail_name(callee_name(args[0])) in ("full", "ones") \
            and args[0][2]:
        shape = args[0][2][0]
        size = shape[1][0] if shape[0] == "t" and len(shape[1]) == 1 else shape
        rate = args[0][2][1] if len(args[0][2]) > 1 else args[0][3].get("fill_value")
        return rate, size
    return None, None
