"""The DP-library table (``dpcheck/data/dp_libraries.json``): which libraries exist only for
differential privacy, and which of their APIs do steps of a DP-SGD update for the caller.

A call into a DP library (matched on its import-qualified name, ``ProjectIndex.library_name``)
is a DP marker: the code means to be private, whatever dpcheck makes of it. Not so for a
library's ``utilities``, modules that hold no DP code (Opacus' ``validators``: a model's
compatibility checks and fixes), a property of the library's entry. A *privatizer* is a
library API that clips per example, computes per-example gradients or adds Gaussian noise on the
caller's behalf (objax ``PrivateGradValues``, JAX Privacy's ``clipped_grad`` and privatizers,
TF-Privacy's ``GaussianSumQuery``, Opacus' ``DPOptimizer`` used without the engine, optax's
``differentially_private_aggregate``): the hand-written update analysis reads a call of one as
those steps, with the division the library applies (``divides``). A *combinator* is a library
API whose object runs a method of each object given to it (``optax.chain(dp, adamw).update``):
a privatizer given to one does its steps through it. The table is validated on load: a
malformed entry is a ``DpcheckError`` naming it, never a silent default.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

from dpcheck.errors import DpcheckError
from dpcheck.sites.nodes import Call, Node, Str

STEPS: frozenset[str] = frozenset({"per-sample", "clip", "noise"})
DIVISIONS: frozenset[str] = frozenset({"none", "realized", "argument", "argument-unless"})
_PRIVATIZER_KEYS = {"names", "provides", "divides", "what", "evidence", "argument", "unless"}
_EVIDENCE_KEYS = {"repository", "commit", "path", "line", "text"}
_COMBINATOR_KEYS = {"names", "method", "what", "evidence"}


@dataclass(frozen=True)
class Argument:
    """An argument of a privatizer call: by keyword, else at ``position`` (-1: keyword only)."""

    keyword: str
    position: int

    def of(self, call: Call) -> Node | None:
        return call.argument(self.position, self.keyword)


@dataclass(frozen=True)
class Privatizer:
    """A library API that does ``provides`` steps of the update and divides as ``divides``
    says (``argument``: by the value passed as ``argument``, unless ``unless`` is passed the
    string ``unless_value``)."""

    name: str
    provides: frozenset[str]
    divides: str
    what: str
    argument: Argument | None = None
    unless: Argument | None = None
    unless_value: str | None = None

    def divisor(self, call: Call) -> Node | None | str:
        """What a call of this privatizer divides by: ``"none"`` or ``"realized"``, the
        argument expression for ``argument`` (None when the call leaves it to its default,
        which for every table entry is no division), ``"none"`` when ``unless`` holds."""
        if self.divides in ("none", "realized"):
            return self.divides
        if self.unless is not None:
            switch = self.unless.of(call)
            if isinstance(switch, Str) and switch.value == self.unless_value:
                return "none"
        return self.argument.of(call) if self.argument is not None else None


@dataclass(frozen=True)
class DpLibraries:
    """The validated table: library import roots (with a title), privatizers by name, and
    combinators by name with the method they run on each object given to them."""

    libraries: dict[str, str]
    privatizers: dict[str, Privatizer]
    combinators: dict[str, str]
    #: Modules of a DP library that hold no DP code (model-compatibility checks and fixes):
    #: their names are not DP markers.
    utilities: frozenset[str] = frozenset()

    def parts_below(self, target: str) -> frozenset[str]:
        """The table's modules below an imported module ``target``: the DP-only parts of a
        general library its import reaches (``optax.contrib.dpsgd`` below ``optax``)."""
        return frozenset(module for module in self.libraries if module.startswith(f"{target}."))

    def library_of(self, qualified: str | None) -> str | None:
        """The title of the DP library an import-qualified name belongs to, or None (also for
        a name in one of the library's ``utilities``)."""
        module = self.module_of(qualified)
        return self.libraries[module] if module is not None else None

    def module_of(self, qualified: str | None) -> str | None:
        """The table's module (``opacus``, ``optax.contrib.dpsgd``) an import-qualified name
        belongs to, or None (also for a name in one of the library's ``utilities``)."""
        if not qualified or any(qualified == module or qualified.startswith(f"{module}.")
                                for module in self.utilities):
            return None
        for module in self.libraries:
            if qualified == module or qualified.startswith(f"{module}.") \
                    or qualified.startswith(f"{module}("):
                return module
        return None

    def privatizer(self, qualified: str | None) -> Privatizer | None:
        return self.privatizers.get(qualified) if qualified else None


def _fail(where: str, problem: str) -> DpcheckError:
    return DpcheckError(f"dpcheck/data/dp_libraries.json: {where}: {problem}")


def _argument(entry: dict[str, Any], key: str, where: str) -> Argument:
    spec = entry.get(key)
    if not isinstance(spec, dict) or not isinstance(spec.get("keyword"), str):
        raise _fail(where, f"'{key}' needs a 'keyword' string")
    position = spec.get("position", -1)
    if not isinstance(position, int):
        raise _fail(where, f"'{key}.position' must be an integer")
    return Argument(spec["keyword"], position)


def _privatizers(entry: Any, index: int) -> list[Privatizer]:
    where = f"privatizers[{index}]"
    if not isinstance(entry, dict) or set(entry) - _PRIVATIZER_KEYS:
        raise _fail(where, f"keys must be among {sorted(_PRIVATIZER_KEYS)}")
    names, provides, divides = entry.get("names"), entry.get("provides"), entry.get("divides")
    if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
        raise _fail(where, "'names' must be a non-empty list of import-qualified names")
    if not isinstance(provides, list) or not provides or set(provides) - STEPS:
        raise _fail(where, f"'provides' must list steps among {sorted(STEPS)}")
    if divides not in DIVISIONS:
        raise _fail(where, f"'divides' must be one of {sorted(DIVISIONS)}")
    if not isinstance(entry.get("what"), str):
        raise _fail(where, "'what' must say what the API does")
    evidence = entry.get("evidence")
    if not isinstance(evidence, list) or not evidence or not all(
            isinstance(e, dict) and set(e) == _EVIDENCE_KEYS and isinstance(e["line"], int)
            for e in evidence):
        raise _fail(where, f"'evidence' must list source lines with keys {sorted(_EVIDENCE_KEYS)}")
    argument = _argument(entry, "argument", where) if divides.startswith("argument") else None
    unless = unless_value = None
    if divides == "argument-unless":
        spec = entry.get("unless")
        if not isinstance(spec, dict) or not isinstance(spec.get("keyword"), str) \
                or not isinstance(spec.get("value"), str):
            raise _fail(where, "'unless' needs a 'keyword' and a string 'value'")
        unless, unless_value = Argument(spec["keyword"], -1), spec["value"]
    return [Privatizer(name, frozenset(provides), divides, entry["what"], argument, unless,
                       unless_value) for name in names]


def _combinators(entry: Any, index: int) -> dict[str, str]:
    where = f"combinators[{index}]"
    if not isinstance(entry, dict) or set(entry) != _COMBINATOR_KEYS:
        raise _fail(where, f"keys must be {sorted(_COMBINATOR_KEYS)}")
    names, method = entry["names"], entry["method"]
    if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
        raise _fail(where, "'names' must be a non-empty list of import-qualified names")
    if not isinstance(method, str) or not method.isidentifier() \
            or not isinstance(entry["what"], str):
        raise _fail(where, "'method' must be a method name and 'what' say what it does")
    evidence = entry["evidence"]
    if not isinstance(evidence, list) or not evidence or not all(
            isinstance(e, dict) and set(e) == _EVIDENCE_KEYS and isinstance(e["line"], int)
            for e in evidence):
        raise _fail(where, f"'evidence' must list source lines with keys {sorted(_EVIDENCE_KEYS)}")
    return {name: method for name in names}


def parse_table(data: Any) -> DpLibraries:
    """The validated table from its parsed JSON (``DpcheckError`` naming a bad entry)."""
    if not isinstance(data, dict) or data.get("schema") != 1:
        raise _fail("top level", "expected an object with \"schema\": 1")
    libraries: dict[str, str] = {}
    utilities: set[str] = set()
    for index, entry in enumerate(data.get("libraries", [])):
        if not isinstance(entry, dict) or not {"module", "title"} <= set(entry) <= {
                "module", "title", "utilities"} \
                or not all(isinstance(entry[k], str) and entry[k] for k in ("module", "title")):
            raise _fail(f"libraries[{index}]", "needs a 'module' and a 'title' string (and "
                        "optionally 'utilities'), nothing else")
        helpers = entry.get("utilities", [])
        if not isinstance(helpers, list) or not all(
                isinstance(h, str) and h.startswith(f"{entry['module']}.") for h in helpers):
            raise _fail(f"libraries[{index}]", "'utilities' must list modules inside "
                        f"{entry['module']!r}")
        libraries[entry["module"]] = entry["title"]
        utilities.update(helpers)
    privatizers: dict[str, Privatizer] = {}
    for index, entry in enumerate(data.get("privatizers", [])):
        for privatizer in _privatizers(entry, index):
            if privatizer.name in privatizers:
                raise _fail(f"privatizers[{index}]", f"{privatizer.name} is listed twice")
            privatizers[privatizer.name] = privatizer
    combinators: dict[str, str] = {}
    for index, entry in enumerate(data.get("combinators", [])):
        combinators.update(_combinators(entry, index))
    return DpLibraries(libraries, privatizers, combinators, frozenset(utilities))


@lru_cache(maxsize=1)
def dp_libraries() -> DpLibraries:
    """The shipped table (read and validated once per process)."""
    text = resources.files("dpcheck.data").joinpath("dp_libraries.json").read_text("utf-8")
    return parse_table(json.loads(text))
