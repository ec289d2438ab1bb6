"""Does a divisor depend on the private data? The rule that decides the update mechanism.

A divisor is classified by what it is built from (paper, sections 2-3 and Appendix A):

* the **realized** batch size (``len(batch)``, ``x.shape[0]``, ``y.size(0)``, ``mask.sum()``, a
  mean over the per-sample axis, the size of the index set of a sampling mask such as
  ``len(mask.nonzero())`` or ``np.flatnonzero(mask).size``, the length of a list appended to once
  per sampled example) -> ``realized`` (ASGM under Poisson sampling);
* the **dataset size** in a numerator (``len(dataset) * q``, ``n * sample_rate``) -> ``expected``
  (EASGM), and with ``int``/``math.floor``/``//`` on top -> ``floor-expected`` (FEASGM). The
  dataset size in a *denominator* builds a sample rate, which the privacy game holds fixed;
  ``len(loader)`` (rounds per epoch) is likewise a fixed hyper-parameter;
* only literals and hyper-parameters with literal defaults -> ``constant`` (SGM post-processing);
* anything not resolvable -> ``unknown`` with the reason; never a guess.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

from dpcheck.pipelines.binding import Binding
from dpcheck.pipelines.index import ProjectIndex
from dpcheck.pipelines.scope import Ctx
from dpcheck.pipelines.values import Evaluator, known_dataset
from dpcheck.sites.ir import IR, callee_name, tail_name, walk

FLOORS = frozenset({"int", "math.floor", "np.floor", "numpy.floor", "torch.floor"})
LOADER_TAILS = frozenset({"DataLoader", "DPDataLoader", "from_data_loader", "make_private",
                          "make_private_with_epsilon", "batch", "BatchMemoryManager"})
DATASET_TAILS = frozenset({"TensorDataset", "Subset", "ImageFolder", "load_dataset",
                           "ConcatDataset", "random_split"})
BATCH_METHODS = frozenset({"to", "cuda", "cpu", "float", "long", "view", "reshape", "squeeze",
                           "unsqueeze", "flatten", "double", "type", "permute", "contiguous",
                           "tolist", "numpy"})
DATA_ATTRIBUTES = frozenset({"data", "targets", "x", "y", "images", "labels", "features"})
SAMPLING_DRAWS = frozenset({"rand", "random", "uniform", "permutation", "randperm", "bernoulli",
                            "binomial", "choice", "random_sample"})
BERNOULLI = frozenset({"bernoulli", "binomial"})
UNIFORM = frozenset({"rand", "random", "uniform", "random_sample"})
#: Index ranges a comprehension filters by a sampling mask (``range(n)``, ``np.arange(n)``).
INDEX_RANGES = frozenset({"range", "arange"})
#: Calls turning a boolean mask into the indices of its True entries (``torch.where`` and
#: ``np.where`` only with the mask as their single argument).
MASK_INDICES = frozenset({"nonzero", "flatnonzero", "argwhere", "where"})
#: Tensor conversions that keep the value of their first argument (``tf.cast(n, tf.float32)``).
CASTS = frozenset({"cast", "convert_to_tensor", "constant"})
_DATASET_NAME = re.compile(r"(dataset|train_set|trainset|train_data|data_train)", re.I)


@dataclass(frozen=True)
class Dep:
    """What an expression depends on: the dataset size N (numerator), the realized batch B."""

    n: bool = False
    b: bool = False
    floor: bool = False
    unknown: str | None = None

    def __or__(self, other: Dep) -> Dep:
        return Dep(self.n or other.n, self.b or other.b, False, self.unknown or other.unknown)

    @property
    def kind(self) -> str:
        """``realized``, ``expected``, ``floor-expected``, ``constant`` or ``unknown``."""
        if self.unknown is not None or (self.n and self.b):
            return "unknown"
        if self.b:
            return "realized"
        if self.n:
            return "floor-expected" if self.floor else "expected"
        return "constant"


def _unknown(reason: str) -> Dep:
    return Dep(unknown=reason)


class DivisorClassifier:
    """Classifies divisor expressions and the origin of batch/dataset values."""

    def __init__(self, index: ProjectIndex) -> None:
        self.index = index

    # -- origins: what a value is (a batch, a dataset, a loader) --------------------------------
    def origin(self, ir: IR, ctx: Ctx, depth: int = 0) -> str:
        """``batch``, ``example``, ``dataset``, ``loader`` or ``unknown``."""
        if depth > 16:
            return "unknown"
        tag = ir[0]
        if tag == "r":
            if ir[1].endswith(".dataset"):
                return "dataset"
            binding = self.index.attribute(ir[1], ctx)
            found = self._binding_origin(binding, depth) if binding is not None else "unknown"
            base, _, attr = ir[1].rpartition(".")
            if found == "unknown" and base and attr in DATA_ATTRIBUTES:
                found = "dataset" if self.origin(["r", base], ctx, depth + 1) == "dataset" \
                    else "unknown"
            if found == "unknown" and self._sampled_population(ir[1], ctx):
                return "dataset"
            return found
        if tag == "i":
            if self._sample_index(ir[2], ctx, depth):
                return "batch"
            base = self.origin(ir[1], ctx, depth + 1)
            if base in ("batch", "example"):
                return base
            if base == "dataset" and ir[2] != ["slice"] and ir[2][0] != "n":
                return "batch"
            return "batch" if base == "dataset" and ir[2] == ["slice"] else "unknown"
        if tag == "a" and ir[2] == "dataset":
            return "dataset"
        if tag == "comp" and len(ir[3]) == 1 and not ir[4] and self._element_origin(
                ir[3][0], ctx, None, depth + 1) == "example":
            return "batch"
        if tag == "comp" and self._mask_kept(ir, ctx, depth):
            return "batch"
        if tag == "b":
            left = self.origin(ir[2], ctx, depth + 1)
            return left if left != "unknown" else self.origin(ir[3], ctx, depth + 1)
        if tag == "call":
            name = callee_name(ir) or ""
            tail = tail_name(name)
            if tail in LOADER_TAILS or tail.lower().endswith("_loader"):
                return "loader"
            if (tail in CASTS or name == "iter") and ir[2]:
                return self.origin(ir[2][0], ctx, depth + 1)
            if name == "next" and ir[2]:
                return _element_of(self.origin(ir[2][0], ctx, depth + 1))
            if tail in MASK_INDICES and self._mask_indices(ir, ctx, depth):
                return "batch"
            if tail in DATASET_TAILS:
                return "dataset"
            if tail in BATCH_METHODS:
                base = ir[1][1] if ir[1][0] == "a" else ["r", name.rsplit(".", 1)[0]]
                if "." in name or ir[1][0] == "a":
                    return self.origin(base, ctx, depth + 1)
            if known_dataset(ir, None) is not None:
                return "dataset"
            return self._returned_origin(ir, ctx, (), depth)
        return "unknown"

    def _returned_origin(self, call: IR, ctx: Ctx, index: tuple[int, ...], depth: int,
                         width: int | None = None) -> str:
        """The origin of what a project function returns (element ``index`` of its returned
        tuples, unpacked into ``width`` names): a loader from a helper however it is named.
        Every return must agree; a function met again while its returns are being followed
        (recursion) decides nothing."""
        target = self.index.function(callee_name(call) or "", ctx)
        if target is None or target.scope.endswith(".__init__"):
            return "unknown"
        key = ("returned-origin", target.path, target.scope, index, width, self.index.reach)
        return self.index.questions.ask(
            key, lambda: self._agreed_origin(target, index, width, depth), "unknown")

    def _agreed_origin(self, target: Ctx, index: tuple[int, ...], width: int | None,
                       depth: int) -> str:
        found = {self.origin(value, where, depth + 1)
                 for value, where, _ in self.index.returned_parts(target, index, width)}
        return found.pop() if len(found) == 1 else "unknown"

    def _sample_index(self, ir: IR, ctx: Ctx, depth: int) -> bool:
        """Whether a subscript index is a sampled mask or index set (``rand(n) < q``,
        ``bernoulli``, a slice of a permutation)."""
        if depth > 16:
            return False
        if ir[0] == "r":
            binding = self.index.attribute(ir[1], ctx)
            assigned = binding.assigned() if binding is not None else None
            return assigned is not None and self._sample_index(*assigned, depth + 1)
        if ir[0] == "i":
            return self._sample_index(ir[1], ctx, depth + 1)
        if ir[0] == "call" and ir[1][0] == "a":
            return self._sample_index(ir[1][1], ctx, depth + 1) or any(
                self._sample_index(a, ctx, depth + 1) for a in ir[2])
        if ir[0] == "call":
            base, _, tail = (callee_name(ir) or "").rpartition(".")
            if tail in SAMPLING_DRAWS:
                return True
            if base and self._sample_index(["r", base], ctx, depth + 1):
                return True
            return any(self._sample_index(a, ctx, depth + 1) for a in ir[2])
        if ir[0] == "cmp":
            return self._sample_index(ir[2], ctx, depth + 1)
        return False

    def _mask_indices(self, call: IR, ctx: Ctx, depth: int) -> bool:
        """Whether ``call`` lists the indices of a sampling mask: ``mask.nonzero()``,
        ``torch.nonzero(mask)``, ``torch.where(mask)``, ``np.flatnonzero(mask)``: one index per
        sampled example, so its size is the realized batch size."""
        args = call[2]
        if len(args) > 1 or call[3]:
            return False
        operand = args[0] if args else _method_base(call, callee_name(call) or "")
        return self._is_mask(operand, ctx, depth + 1)

    def _mask_kept(self, comp: IR, ctx: Ctx, depth: int) -> bool:
        """Whether a comprehension lists the indices a sampling mask keeps (``[i for i in
        range(n) if mask[i]]``): one per sampled example, so its length is the realized batch
        size."""
        element, names, iterables, _, conditions = comp[1:6]
        if len(names) != 1 or len(iterables) != 1 or len(conditions) != 1 \
                or element != ["r", names[0]] or iterables[0][0] != "call":
            return False
        test = conditions[0]
        return tail_name(callee_name(iterables[0])) in INDEX_RANGES and test[0] == "i" \
            and test[2] == element and self._is_mask(test[1], ctx, depth + 1)

    def _is_mask(self, ir: IR, ctx: Ctx, depth: int) -> bool:
        """Whether ``ir`` is a Bernoulli sampling mask (``torch.rand(n) < q``, ``rng.random(n) <=
        q``, ``np.random.random_sample(n) > 1 - q``, ``torch.bernoulli(...)``,
        ``np.random.binomial(1, q, n)``), possibly converted."""
        if depth > 16:
            return False
        if ir[0] == "r":
            binding = self.index.attribute(ir[1], ctx)
            assigned = binding.assigned() if binding is not None else None
            return assigned is not None and self._is_mask(*assigned, depth + 1)
        if ir[0] == "cmp":
            draw = ir[2]
            below = ir[1] in ("<", "<=") or (ir[1] in (">", ">=") and draw[0] == "call"
                                             and bool(draw[2]))
            return below and draw[0] == "call" and tail_name(callee_name(draw)) in UNIFORM
        if ir[0] != "call":
            return False
        name = callee_name(ir) or ""
        tail = tail_name(name)
        if tail in BERNOULLI:
            return True
        if (tail in BATCH_METHODS or tail == "bool") and ("." in name or ir[1][0] == "a"):
            return self._is_mask(_method_base(ir, name), ctx, depth + 1)
        return False

    def _appended_per_example(self, binding: Binding, depth: int) -> bool:
        """Whether the empty list ``binding`` binds gets exactly one ``append`` per iteration of
        a later loop over the sampled examples (unconditionally), so its length is the realized
        batch size."""
        scope = self.index.scope(binding.ctx)
        stmts: list[dict[str, Any]] = scope["stmts"] if scope else []
        appends = [s for s in stmts if s["k"] == "expr" and s["e"][0] == "call"
                   and s["e"][1] == ["r", f"{binding.name}.append"]]
        if len(appends) != 1 or appends[0]["loop"] < 0:
            return False
        header = stmts[appends[0]["loop"]]
        targets = header["t"] if isinstance(header["t"], list) else [header["t"]]
        first = targets[0] if targets and isinstance(targets[0], str) else None
        if header["k"] != "for" or header["line"] <= binding.line or first is None \
                or appends[0].get("br") != header.get("br"):
            return False
        inside = Ctx(binding.ctx.path, binding.ctx.scope, header["line"] + 1)
        return self.origin(["r", first], inside, depth + 1) == "example"

    def _sampled_population(self, name: str, ctx: Ctx, itself: bool = False) -> bool:
        """Whether ``len(name)`` (or, with ``itself``, ``name``) sizes a sampling draw (a mask or
        permutation over the index range) in the scope: then it is the dataset (size)."""
        scope = self.index.scope(ctx)
        if scope is None:
            return False
        sizes = (["call", ["r", "len"], [["r", name]], {}], ["i", ["r", f"{name}.shape"], ["n", 0]])
        if itself:
            sizes = (["never"], ["r", name])
        for stmt in scope["stmts"]:
            for node in walk(stmt["e"]):
                if node[0] != "call" or tail_name(callee_name(node)) not in \
                        SAMPLING_DRAWS:
                    continue
                size = node[2][0] if node[2] else None
                if size is not None and size[0] == "t" and size[1]:
                    size = size[1][0]
                if size is not None and (size[:3] == sizes[0][:3] or size == sizes[1]):
                    return True
        return False

    def _binding_origin(self, binding: Binding, depth: int) -> str:
        ir = binding.ir
        where = replace(binding.ctx, line=binding.line)
        if binding.kind == "loop" and ir is not None:
            return self._element_origin(ir, where, binding.index, depth)
        if binding.kind == "param":
            return self._param_origin(binding, depth)
        if binding.kind != "assign" or ir is None:
            return "unknown"
        if ir == ["t", []] and not binding.index:
            return "batch" if self._appended_per_example(binding, depth) else "unknown"
        if binding.index and ir[0] == "t":
            for position in binding.index:
                if ir[0] != "t" or position >= len(ir[1]):
                    return "unknown"
                ir = ir[1][position]
            return self.origin(ir, where, depth + 1)
        if binding.index and ir[0] == "call":
            tail = tail_name(callee_name(ir))
            if tail in ("make_private", "make_private_with_epsilon"):
                return "loader" if binding.index == (2,) else "unknown"
            if known_dataset(ir, binding.index):
                return "dataset"
            return self._returned_origin(ir, where, binding.index, depth,
                                         self.index.unpacked_width(binding))
        return self.origin(ir, where, depth + 1)

    def _element_origin(
        self, iterable: IR, ctx: Ctx, index: tuple[int, ...] | None, depth: int
    ) -> str:
        name = callee_name(iterable) if iterable[0] == "call" else None
        if name == "enumerate" and iterable[2]:
            if index and index[0] == 0:
                return "unknown"
            return self._element_origin(iterable[2][0], ctx, index[1:] if index else None, depth)
        if self._sample_index(iterable, ctx, depth):
            return "example"
        if name == "zip":
            parts = [self.origin(a, ctx, depth + 1) for a in iterable[2]]
            if index and index[0] < len(parts):
                return _element_of(parts[index[0]])
            return "unknown"
        return _element_of(self.origin(iterable, ctx, depth + 1))

    def _param_origin(self, binding: Binding, depth: int) -> str:
        """What the callers pass for a parameter, if they agree."""
        key = ("param-origin", binding.ctx.path, binding.ctx.scope, binding.name,
               self.index.reach)
        return self.index.questions.ask(key, lambda: self._callers_origin(binding, depth),
                                        "unknown")

    def _callers_origin(self, binding: Binding, depth: int) -> str:
        found = {self.origin(arg, where, depth + 1)
                 for where, arg in self.index.arguments(binding)}
        if len(found) == 1:
            return found.pop()
        if not found and _DATASET_NAME.search(binding.name):
            return "dataset"
        if not found and "loader" in binding.name.lower():
            return "loader"
        return "unknown"

    # -- divisors -------------------------------------------------------------------------------
    def classify(self, ir: IR, ctx: Ctx, depth: int = 0) -> Dep:
        """The data dependence of a divisor expression."""
        if depth > 24:
            return _unknown("expression too deep to follow")
        tag = ir[0]
        if tag == "n":
            return Dep()
        if tag in ("r", "i") or (tag == "a" and ir[2] in ("dataset",)):
            return self._name(ir, ctx, depth)
        if tag == "u":
            return self.classify(ir[2], ctx, depth + 1)
        if tag == "b":
            left = self.classify(ir[2], ctx, depth + 1)
            right = self.classify(ir[3], ctx, depth + 1)
            if ir[1] in ("/", "//"):
                right = replace(right, n=False)
            combined = left | right
            return replace(combined, floor=combined.n) if ir[1] == "//" else combined
        if tag == "call":
            return self._call(ir, ctx, depth)
        if tag == "a" and ir[2] == "shape":
            return _unknown("shape without index")
        if tag == "a" and ir[1][0] == "call":
            option = self.index.parsed_option(ir[1], ctx, ir[2])
            if option is not None and option.ir is not None:
                return self.classify(option.ir, replace(option.ctx, line=option.line), depth + 1)
        return _unknown(f"cannot follow expression of kind {tag!r}")

    def _size_of(self, ir: IR, ctx: Ctx, depth: int, what: str) -> Dep:
        origin = self.origin(ir, ctx, depth + 1)
        if origin == "batch":
            return Dep(b=True)
        if origin == "dataset":
            return Dep(n=True)
        if origin == "loader":
            return Dep()
        return _unknown(f"{what} of a value whose origin (batch or dataset) is unknown")

    def _call(self, ir: IR, ctx: Ctx, depth: int) -> Dep:
        name = callee_name(ir) or ""
        tail = tail_name(name)
        args = ir[2]
        if name == "len" and len(args) == 1:
            return self._size_of(args[0], ctx, depth, "len()")
        if tail == "size" and len(args) == 1 and args[0] == ["n", 0]:
            return self._size_of(_method_base(ir, name), ctx, depth, ".size(0)")
        if tail == "numel" and not args and ("." in name or ir[1][0] == "a"):
            return self._size_of(_method_base(ir, name), ctx, depth, ".numel()")
        if tail in ("sum", "count_nonzero") and not args:
            return Dep(b=True)
        if tail in CASTS and args:
            inner = self.classify(args[0], ctx, depth + 1)
            return replace(inner, floor=inner.n) if _integer_cast(ir) else inner
        if name in FLOORS and len(args) == 1:
            inner = self.classify(args[0], ctx, depth + 1)
            return replace(inner, floor=inner.n)
        if name in ("max", "min", "float", "torch.tensor") and args:
            result = Dep()
            for arg in args:
                result = result | self.classify(arg, ctx, depth + 1)
            return result
        if name in ("round", "math.ceil", "np.ceil"):
            inner = self.classify(args[0], ctx, depth + 1) if args else Dep()
            if inner.n:
                return _unknown(f"{name}() of an expected batch size is neither N*q nor floor(N*q)")
            return inner
        return _unknown(f"call to {name or 'an expression'}() is not followed")

    def _name(self, ir: IR, ctx: Ctx, depth: int) -> Dep:
        if ir[0] == "i":
            base = ir[1]
            if base[0] == "a" and base[2] == "shape" and ir[2] == ["n", 0]:
                return self._size_of(base[1], ctx, depth, ".shape[0]")
            if base[0] == "r" and base[1].endswith(".shape") and ir[2] == ["n", 0]:
                return self._size_of(["r", base[1][: -len(".shape")]], ctx, depth, ".shape[0]")
            shaped = _shape_operand(base)
            if shaped is not None and ir[2] == ["n", 0]:
                return self._size_of(shaped, ctx, depth, ".shape[0]")
            value = Evaluator(self.index).value(ir, ctx)
            return Dep() if value is not None else _unknown("subscript not resolved")
        if ir[0] == "a":
            return Dep(n=True)
        base, _, attr = ir[1].rpartition(".")
        if base and attr == "size":
            sized = self._size_of(["r", base], ctx, depth, ".size")
            if sized.unknown is None:
                return sized
        if self._sampled_population(ir[1], ctx, itself=True):
            return Dep(n=True)
        binding = self.index.attribute(ir[1], ctx)
        if binding is None:
            return _unknown(f"{ir[1]} is not bound to anything dpcheck can follow")
        where = replace(binding.ctx, line=binding.line)
        if binding.kind == "option":
            return self.classify(binding.ir, where, depth + 1) if binding.ir else _unknown(
                f"option {binding.name} has no default"
            )
        if binding.kind == "param":
            return self._param(binding, depth)
        if binding.kind == "assign" and binding.ir is not None:
            if binding.index:
                value = binding.ir
                for position in binding.index:
                    if value[0] != "t" or position >= len(value[1]):
                        return _unknown(f"{ir[1]} is unpacked from an expression not followed")
                    value = value[1][position]
                return self.classify(value, where, depth + 1)
            start = self.classify(binding.ir, where, depth + 1)
            added = self._added(binding, depth)
            return start if added is None else start | added
        return _unknown(f"{ir[1]} is a {binding.kind}, not a number")

    def _added(self, binding: Binding, depth: int) -> Dep | None:
        """What a running total adds up in the scope that starts it (``seen += len(x)`` over
        accumulated micro-batches): a total of realized batch sizes is realized. None when
        nothing is added to it."""
        scope = self.index.scope(binding.ctx)
        terms = [(Ctx(binding.ctx.path, binding.ctx.scope, stmt["line"]), stmt["e"])
                 for stmt in (scope["stmts"] if scope else [])
                 if stmt["k"] == "aug" and stmt["t"] == binding.name and stmt.get("op") == "+"]
        if not terms:
            return None
        result = Dep()
        for where, term in terms:
            result = result | self.classify(term, where, depth + 1)
        return result

    def _param(self, binding: Binding, depth: int) -> Dep:
        key = ("param-dependence", binding.ctx.path, binding.ctx.scope, binding.name,
               self.index.reach)
        return self.index.questions.ask(key, lambda: self._passed(binding, depth),
                                        _unknown(f"parameter {binding.name} is passed itself "
                                                 "through a cycle of calls"))

    def _passed(self, binding: Binding, depth: int) -> Dep:
        """The data dependence of what the callers pass for a parameter (and its default)."""
        results = [self.classify(arg, where, depth + 1)
                   for where, arg in self.index.arguments(binding)]
        if binding.ir is not None:
            results.append(self.classify(binding.ir, binding.ctx, depth + 1))
        if not results:
            return _unknown(f"parameter {binding.name} has no default and no call passes it")
        kinds = {r.kind for r in results}
        if len(kinds) == 1:
            return results[0]
        return _unknown(f"parameter {binding.name} receives values of kinds {sorted(kinds)}")


def _integer_cast(call: IR) -> bool:
    """Whether a tensor conversion casts to an integer dtype (``tf.cast(x, tf.int32)``), which
    truncates a non-negative value: a floor."""
    dtype = call[2][1] if len(call[2]) > 1 else call[3].get("dtype")
    return dtype is not None and dtype[0] == "r" and "int" in tail_name(dtype[1])


def _shape_operand(ir: IR) -> IR | None:
    """``x`` of a ``tf.shape(x)`` / ``np.shape(x)`` call (``tf.shape(input=x)`` too), else None."""
    if ir[0] != "call" or tail_name(callee_name(ir)) != "shape":
        return None
    operands = [*ir[2], *ir[3].values()]
    return operands[0] if len(operands) == 1 else None


def _element_of(origin: str) -> str:
    return {"loader": "batch", "batch": "example", "dataset": "example"}.get(origin, "unknown")


def _method_base(call: IR, name: str) -> IR:
    """The object a method is called on: ``x`` of ``x.size(0)``."""
    if call[1][0] == "a":
        return list(call[1][1])
    return ["r", name.rsplit(".", 1)[0]]
