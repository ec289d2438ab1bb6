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

Besides the coarse kind (poisson / shuffle = any fixed batch size / balls-and-bins), every
decision names its scheme, a kind of the sampler table (``dpcheck/data/samplers.json``):
shuffle, sequential, shuffled-or-sequential, buffered-shuffle, fixed-subsets (B distinct
indices drawn afresh every step), with-replacement, balls-and-bins. Library samplers, loaders,
permutations and index draws are recognised by their import-qualified name (a generator
method by the type the generator was built from) through that table; a draw with replacement
compared for equality with a batch number allocates examples to batches (balls-and-bins).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from dpcheck.model import Evidence, Span
from dpcheck.pipelines.binding import Binding
from dpcheck.pipelines.divisor import DivisorClassifier
from dpcheck.pipelines.provenance import Origin
from dpcheck.pipelines.vocabulary import calls_in
from dpcheck.pipelines.generators import Yielded, yielded_batches
from dpcheck.pipelines.guards import Guards
from dpcheck.pipelines.handwritten import assigned_names
from dpcheck.pipelines.hf_datasets import is_to_tf_dataset
from dpcheck.pipelines.hf_trainer import inherited_loader, sampler_method
from dpcheck.pipelines.index import ProjectIndex
from dpcheck.pipelines.returned import returned_item
from dpcheck.pipelines.scope import Ctx
from dpcheck.pipelines.single_batch import WholeBatch, draws, whole_batch
from dpcheck.pipelines.values import READ_AT, Evaluator
from dpcheck.samplers import UNKNOWN, SamplerApi, sampler_table
from dpcheck.sites.ir import IR, callee_name, tail_name, walk
from dpcheck.sites.nodes import Call
from dpcheck.sites.nodes import node as typed

#: Class names of the table's shuffling samplers, for the Hugging Face sampler-method reader
#: (which compares class names of the samplers a project method returns).
SHUFFLE_SAMPLERS = frozenset(tail_name(api.name) for api in sampler_table().apis.values()
                             if api.role == "sampler" and api.kind == "shuffle")
#: Calls that iterate over a loader unchanged (a progress bar, an index pairing).
ITERATION_WRAPPERS = frozenset({"tqdm", "enumerate"})
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
    #: The scheme, a kind of the sampler table ("" until decided: see ``sampler``).
    scheme: str = ""

    @property
    def sampler(self) -> str:
        """The scheme: as decided, else what the coarse kind alone says (fixed-size batches of
        an order not decided are "shuffled-or-sequential")."""
        if self.scheme:
            return self.scheme
        return {"poisson": "poisson", "shuffle": "shuffled-or-sequential"}.get(self.kind, self.kind)


def of_scheme(scheme: str, evidence: list[Evidence], loader: tuple[Ctx, IR] | None = None,
              **found: Any) -> Sampling:
    """A decision for a kind of the sampler table: its coarse kind is the table's ``sampling``."""
    kind = UNKNOWN if scheme == UNKNOWN else sampler_table().kind(scheme).sampling
    return Sampling(kind, evidence, loader, scheme=scheme, **found)



def _span(ctx: Ctx, node: IR | None, stmt: dict[str, Any]) -> Span:
    if node is not None and node[0] == "call":
        return Span(ctx.path, *node[4])
    return Span(ctx.path, stmt["line"], stmt["col"])


class SamplingAnalyzer:
    """Classifies the sampling of the training loops found in a set of scopes."""

    def __init__(self, index: ProjectIndex, poisson_default: bool | None,
                 assumed: Guards | None = None) -> None:
        self.index = index
        self.origins = DivisorClassifier(index)
        self.poisson_default = poisson_default
        #: The conditions the pipeline's DP code runs under (``dpcheck.pipelines.guards``):
        #: a helper's arm chosen by the same flag is read with them holding.
        self.assumed = assumed or {}
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
                return _agreed(group)
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
        if self.origins.origin(iterable, ctx) == Origin.LOADER:
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
            return of_scheme("shuffle", [inherited])
        if callee_name(ir) == "iter" and ir[2]:
            return self.loader(ir[2][0], ctx, depth + 1)
        api = self.api_of(ir, ctx)
        if api is not None and api.sampler_keywords:
            return self._data_loader(ir, ctx, span, depth, api)
        if api is not None and api.role in ("loader", "sampler", "strategy"):
            scheme = self._selected(api, ir, ctx)
            return of_scheme(scheme, [Evidence("sampler", span, f"{tail}: {_title(scheme)}")],
                             (ctx, ir))
        if tail == "BatchMemoryManager":
            inner = ir[3].get("data_loader")
            return self.loader(inner, ctx, depth + 1) if inner else Sampling()
        if is_to_tf_dataset(self.index, ir, ctx):
            return self._to_tf_dataset(ir, ctx)
        if tail == "batch":
            chain = [n for n in walk(ir)
                     if n[0] == "call" and tail_name(callee_name(n)) == "shuffle"]
            if chain:
                buffer = shuffle_buffer(chain[0])
                extra = [self._buffer_evidence(ctx, chain[0], None, buffer)] if buffer else []
                return of_scheme("buffered-shuffle", [
                    Evidence("sampler", span, "tf.data .shuffle().batch(): fixed batches"),
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
            return of_scheme("shuffle" if kinds else "sequential",
                             [*evidence, *(e for d in drawn for e in d.evidence)], batch=yielded.width)
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
        evaluator = Evaluator(self.index, self.assumed)
        found: list[Sampling] = []
        for value, where, stmt in self.index.returned_parts(function, index, width):
            runs = evaluator.arms(where, stmt)
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

    def _data_loader(self, ir: IR, ctx: Ctx, span: Span, depth: int, api: SamplerApi) -> Sampling:
        """A loader that takes a sampler (``DataLoader``): the sampler decides, else the
        loader's own shuffle flag."""
        kwargs = ir[3]
        for key in api.sampler_keywords:
            sampler = kwargs.get(key)
            if sampler is None:
                continue
            where = ctx
            if sampler[0] == "r":
                binding = self.index.attribute(sampler[1], ctx)
                if binding is not None and binding.ir:
                    sampler, where = binding.ir, replace(binding.ctx, line=binding.line)
            tail = tail_name(callee_name(sampler)) if sampler[0] == "call" else ""
            known = self.api_of(sampler, where) if sampler[0] == "call" else None
            if known is not None and known.role == "sampler":
                scheme = self._selected(known, sampler, where)
                words = "Poisson" if scheme == "poisson" else _title(scheme)
                return of_scheme(scheme, [Evidence("sampler", span, f"DataLoader({key}={tail}): {words}")],
                                 (ctx, ir))
            own = self._project_sampler(sampler, ctx, key) if sampler[0] == "call" else None
            fixed = sampler_method(self.index, sampler, ctx, SHUFFLE_SAMPLERS) \
                if own is None and key == "sampler" and sampler[0] == "call" else None
            if fixed:
                scheme = "sequential" if all("sequential" in e.note for e in fixed) else "shuffle"
                return of_scheme(scheme, [*fixed, Evidence(
                    "sampler", span, "DataLoader(sampler=...) batches the sampler returned")],
                    (ctx, ir))
            return own or Sampling(note=f"DataLoader {key} not recognised")
        whole = whole_batch(self.index, ir, ctx)
        if whole is not None:
            return self._whole_batch(whole, span)
        scheme = self._selected(api, ir, ctx)
        note = {"shuffle": "DataLoader(shuffle=True): shuffled fixed-size batches",
                "sequential": "DataLoader without shuffle: sequential fixed-size batches"}.get(
            scheme, "DataLoader with a shuffle flag not resolved: fixed-size batches, shuffled or "
                    "sequential")
        return of_scheme(scheme, [Evidence("sampler", span, note)], (ctx, ir))

    def _whole_batch(self, whole: WholeBatch, span: Span) -> Sampling:
        """A loader whose one batch is its whole dataset (``dpcheck.pipelines.single_batch``):
        the draws of the project function the dataset's index set comes from decide, read in
        the arms the default configuration runs; anything else stays unknown."""
        served = Evidence("sampler", span, "the loader's batch size is the size of its data: "
                          "each pass serves the whole dataset as one batch, sampling nothing")
        function = draws(self.index, *whole.indices) if whole.indices is not None else None
        if function is None:
            return Sampling(note="a loader serves its whole dataset as one batch, made where "
                            "dpcheck does not follow", evidence=[served])
        evaluator = Evaluator(self.index, self.assumed)
        drawn: list[Sampling] = []
        for where, stmt in self.index.statements([function]):
            runs = evaluator.arms(where, stmt)
            if False in runs:
                continue
            drawn.extend(self._index_sampling(stmt, where))
            if stmt["k"] == "return" and stmt["ld"] == 0 and None not in runs:
                break  # this return always runs: the later statements never do
        if len({d.kind for d in drawn}) != 1:
            return Sampling(note=f"{function.scope}() draws its index sets in "
                            f"{'different ways' if drawn else 'no way dpcheck knows'}",
                            evidence=[served])
        return replace(drawn[0], evidence=[served, *drawn[0].evidence])

    def api_of(self, call: IR, ctx: Ctx) -> SamplerApi | None:
        """The sampler-table API ``call`` invokes: by the callee's import-qualified name, or for
        a method on a name bound to a random generator (``rng = np.random.default_rng()``) or
        to a batch-selection object, by the type it was built from."""
        name = callee_name(call) if call[0] == "call" else None
        if not name:
            return None
        table = sampler_table()
        found = table.api(self.index.qualified(name, ctx.path))
        receiver, _, method = name.rpartition(".")
        if found is not None or not receiver:
            return found
        binding = self.index.attribute(receiver, ctx)
        if binding is None or binding.ir is None or binding.index or binding.ir[0] != "call" \
                or binding.kind != "assign":
            return None
        built = self.index.qualified(callee_name(binding.ir) or "", binding.ctx.path)
        made = table.generator_type(built)
        if made is not None:
            return table.api(f"{made}.{method}")
        strategy = table.api(built)
        return strategy if strategy is not None and strategy.method == method else None

    def _selected(self, api: SamplerApi, call: IR, ctx: Ctx) -> str:
        """The kind ``call`` selects: its switch argument's literal value (keyword, or the
        positional argument at the switch's position), the default when absent."""
        switch = api.switch
        if switch is None:
            return api.kind_for("default")
        value = call[3].get(switch.keyword)
        if value is None and len(call[2]) > switch.position:
            value = call[2][switch.position]
        return api.kind_for("default" if value is None else self._flag(value, ctx))

    def _to_tf_dataset(self, call: Call, ctx: Ctx) -> Sampling:
        """``to_tf_dataset`` of a Hugging Face dataset: fixed-size batches, of a shuffled order
        with ``shuffle=True``, in order without it (the library's default is False)."""
        flag = call.kwargs.get("shuffle")
        shuffled = False if flag is None else self._flag(flag, ctx)
        order = {True: "shuffled", False: "sequential"}.get(shuffled, "shuffled or sequential")
        scheme = {True: "shuffle", False: "sequential"}.get(shuffled, "shuffled-or-sequential")
        return of_scheme(scheme, [Evidence(
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
        dataset only shuffles locally (docs/theory.md#shuffle-deterministic); never the dataset size."""
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
        return [of_scheme("shuffle" if shuffled else "sequential", [Evidence(
            "sampler", span, f"{tail_name(callee_name(call))}(shuffle={shuffled}): {note}")],
            (ctx, call))]

    def _index_sampling(self, stmt: dict[str, Any], ctx: Ctx) -> list[Sampling]:
        found: list[Sampling] = []
        # The enclosing range() counts all steps only when no outer loop (epochs) repeats it.
        steps = self.index.loop_count(ctx, stmt) if stmt["ld"] == 1 else None
        subscripted = {id(node[1]): node[2] for node in walk(stmt["e"]) if node[0] == "i"}
        indexing = {id(node[2]) for node in walk(stmt["e"]) if node[0] == "i"}
        for node in walk(stmt["e"]):
            api = self.api_of(node, ctx) if node[0] == "call" else None
            if api is not None and api.role in ("permutation", "draw"):
                drawn = self._drawn_indices(api, node, stmt, ctx, steps, subscripted.get(id(node)),
                                            id(node) in indexing)
                found.extend([drawn] if drawn is not None else [])
            elif node[0] == "call" and calls_in("bernoulli_draws", node, ctx, self.index):
                rate, population = _bernoulli_arguments(node)
                found.append(Sampling("poisson", [Evidence("sampler", _span(ctx, node, stmt),
                                                           "Bernoulli mask: Poisson sampling")],
                                      rate=(ctx, rate) if rate else None, steps=steps,
                                      population=(ctx, population) if population else None))
            elif node[0] == "call" and (buffer := shuffle_buffer(node)) is not None:
                batching = _batched(stmt["e"], node)
                size = batching.argument(0, "batch_size") if batching is not None else None
                found.append(of_scheme("buffered-shuffle", [
                    Evidence("sampler", _span(ctx, node, stmt),
                             "tf.data .shuffle(): shuffled fixed-size batches"),
                    self._buffer_evidence(ctx, node, stmt, buffer)],
                    (ctx, batching) if batching is not None else None,
                    batch=(ctx, size) if size is not None else None))
            elif node[0] == "cmp" and node[1] in ("<", "<=") and node[2][0] == "call" \
                    and calls_in("uniform_draws", node[2], ctx, self.index):
                draw = node[2]
                found.append(Sampling("poisson", [Evidence(
                    "sampler", _span(ctx, draw, stmt), "uniform draw < q: Poisson sampling")],
                    rate=(ctx, node[3]), steps=steps,
                    population=(ctx, draw[2][0]) if draw[2] else None))
            elif node[0] == "cmp" and node[1] in (">", ">=") and node[2][0] == "call" \
                    and calls_in("uniform_draws", node[2], ctx, self.index) and node[2][2]:
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
                shuffled = self._flag(node[3]["shuffle"], ctx) if "shuffle" in node[3] else True
                scheme = {True: "shuffle", False: "sequential"}.get(shuffled, "shuffled-or-sequential")  # type: ignore[arg-type]
                found.append(of_scheme(scheme, [Evidence(
                    "sampler", _span(ctx, node, stmt), f"Keras fit(batch_size=...): {_title(scheme)}")],
                    (ctx, node)))
        return found

    def _drawn_indices(self, api: SamplerApi, call: IR, stmt: dict[str, Any], ctx: Ctx,
                       steps: tuple[Ctx, IR] | None, subscript: IR | None,
                       indexes: bool) -> Sampling | None:
        """An index draw of the table: a permutation cut into consecutive slices is shuffle,
        the prefix of a fresh permutation a fixed-size subset; a draw of B indices (inside a
        loop, used to index the data) selects by its switch (``replace=``); a draw with
        replacement compared for equality with a batch number assigns examples to batches
        (balls-and-bins). A draw used for anything else (random labels) is not a sampler."""
        span = _span(ctx, call, stmt)
        name = callee_name(call)
        population = api.population.of(call[2], call[3]) if api.population else None
        found: dict[str, Any] = {"population": (ctx, population) if population is not None else None}
        prefix = _prefix(subscript) if subscript is not None else None
        if api.role == "permutation":
            if prefix is None:
                return of_scheme("shuffle", [Evidence("sampler", span, "permutation then fixed-size slices")],
                                 batch=self._slice_width(ctx), **found)
            return of_scheme("fixed-subsets", [Evidence(
                "sampler", span, f"the first B of a fresh {name}(...) every time: {_title('fixed-subsets')}")],
                batch=(ctx, prefix), steps=steps, **found)
        use = "index" if indexes else self._use_of(stmt, ctx)
        if stmt["ld"] < 1 or use is None:
            return None
        scheme = self._selected(api, call, ctx)
        size = api.size.of(call[2], call[3]) if api.size else None
        if scheme == "with-replacement" and use == "allocation":
            # the draw's range is the number of batches M, its size the dataset: batches of N/M
            batches = (ctx, ["b", "/", size, population]) if size is not None and population is not None else None
            return of_scheme("balls-and-bins", [Evidence(
                "sampler", span, f"{name}(...) gives every example a batch number, compared with the "
                "batch in turn: balls-and-bins (random allocation)")],
                population=(ctx, size) if size is not None else None, batch=batches)
        return of_scheme(scheme, [Evidence("sampler", span, f"{name}(...): {_title(scheme)}")],
                         batch=(ctx, _first_item(size)) if size is not None else None, steps=steps, **found)

    def _use_of(self, stmt: dict[str, Any], ctx: Ctx) -> str | None:
        """How the names ``stmt`` assigns are used in its scope: ``"allocation"`` when compared
        for equality (``bins == b``: a batch number per example), ``"index"`` when they index
        something (``x[idx]``) or a loop runs over them (``for i in idx``), None otherwise
        (random labels passed to a loss are not a batch selection)."""
        names = set(assigned_names(stmt["t"])) if stmt["k"] == "assign" else set()
        scope = self.index.scope(ctx)
        if not names or scope is None:
            return None
        use = None
        for other in scope["stmts"]:
            for node in walk(other["e"]):
                if node[0] == "cmp" and node[1] == "==" and any(
                        side[0] == "r" and side[1] in names for side in (node[2], node[3])):
                    return "allocation"
                if node[0] == "i" and any(n[0] == "r" and n[1] in names for n in walk(node[2])):
                    use = "index"
            if other["k"] == "for" and any(n[0] == "r" and n[1].split(".")[0] in names
                                           for n in walk(other["e"])):
                use = "index"
        return use


def _agreed(group: list[Sampling]) -> Sampling:
    """One decision from decisions of the same coarse kind. Once-per-epoch fixed-size schemes
    that differ (a permutation drawn once, then batches taken in order by a non-shuffling input
    fn: a persistent shuffle) are "shuffle", whose witness and guarantee hold for every one of
    them; a "sequential" witness would assume an order the adversary knows."""
    first = group[0]
    schemes = {d.sampler for d in group}
    kinds = sampler_table().kinds
    if len(schemes) > 1 and all(s in kinds and kinds[s].fixed_size and kinds[s].once_per_epoch for s in schemes):
        return replace(first, scheme="shuffle", evidence=[e for d in group for e in d.evidence])
    return first


def _title(scheme: str) -> str:
    """The table's title of a kind (``unknown`` for none)."""
    return sampler_table().kinds[scheme].title if scheme in sampler_table().kinds else scheme


def _prefix(index: IR) -> IR | None:
    """B of a prefix slice ``[:B]`` / ``[0:B]`` (no step), else None."""
    if index[0] != "slice" or len(index) < 4:
        return None
    lower, upper, step = index[1], index[2], index[3]
    if lower not in (["c", None], ["n", 0]) or step != ["c", None] or upper == ["c", None]:
        return None
    return upper


def _first_item(size: IR) -> IR:
    """The batch size of a draw's size argument: ``B``, or the one item of ``(B,)``."""
    return size[1][0] if size[0] == "t" and len(size[1]) == 1 else size


def loader_dataset(call: IR) -> IR | None:
    """The dataset a loader call batches: ``DataLoader(dataset)``/``dataset=``, the ``x`` of an
    estimator input fn (the first array of an ``x={'name': array}`` dict), the dataset whose
    ``to_tf_dataset`` made the batches (a call ``SamplingAnalyzer`` took for that method), the
    tf.data dataset a ``.batch(B)`` batches."""
    if isinstance(call, Call) and call.method in ("to_tf_dataset", "batch", "padded_batch") \
            and call.receiver is not None:
        return call.receiver
    if tail_name(callee_name(call)) in INPUT_FNS:
        data = call[3].get("x", call[2][0] if call[2] else None)
        if data is not None and data[0] == "d":
            return data[1][0][1] if data[1] else None
        return data
    return call[2][0] if call[2] else call[3].get("dataset")


def _batched(expr: IR, shuffled: IR) -> Call | None:
    """The ``.batch(B)`` call applied to a tf.data ``.shuffle()`` call in the same chain
    (``ds.shuffle(n).repeat().batch(B, drop_remainder=True)``): the loader of those batches,
    whose ``drop_remainder`` decides the batches per epoch; else None."""
    for item in walk(expr):
        if item[0] == "call" and item[1][0] == "a" and item[1][2] == "batch" \
                and any(inner is shuffled for inner in walk(item[1][1])):
            return typed(item)  # type: ignore[return-value]
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
