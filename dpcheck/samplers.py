"""The batch-sampler table (``dpcheck/data/samplers.json``): the kinds of batch formation
dpcheck tells apart and the library APIs, by import-qualified name, that produce each.

A kind says what the accountant's Poisson assumption misses and which bound applies
(``guarantee``, ``witness``; docs/theory.md#sampler-kinds), whether DP102 fires when it is accounted as Poisson and at which
severity (``dp102``), and whether the low-noise threshold of DP104 applies (``dp104``: the
changed example sits in exactly one batch per epoch). ``sampling`` is the coarse value of a
pipeline's ``sampling`` field: ``poisson``, ``shuffle`` (any fixed batch size) or
``balls-and-bins``. The table is validated on load: a malformed entry is a ``DpcheckError``
naming it, never a silent default.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

from dpcheck.errors import DpcheckError

GUARANTEES: frozenset[str] = frozenset({"poisson", "deterministic-batches", "subsets-without-replacement", "none"})
WITNESSES: frozenset[str] = frozenset({"none", "deterministic-batches", "max-statistic-fixed-size",
                                       "max-statistic-zero-others"})
SAMPLINGS: frozenset[str] = frozenset({"poisson", "shuffle", "balls-and-bins"})
ROLES: frozenset[str] = frozenset({"sampler", "loader", "permutation", "draw", "strategy", "wrapper",
                                  "batching"})
#: Roles that form no batches of their own, so name no kind: a permutation (its slicing decides),
#: a wrapper (it yields the batches of the loader it is given, its ``loader`` argument), a
#: batching wrapper (it has the kind of the sampler it wraps, its ``wraps`` argument).
KINDLESS: frozenset[str] = frozenset({"permutation", "wrapper", "batching"})
#: Roles that name the argument holding what they wrap (``wraps``).
WRAPPERS: frozenset[str] = frozenset({"wrapper", "batching"})
UNKNOWN = "unknown"


@dataclass(frozen=True)
class SamplerKind:
    """One kind of batch formation and what it means for the bound."""

    name: str
    title: str
    meaning: str
    sampling: str
    fixed_size: bool
    once_per_epoch: bool
    guarantee: str
    witness: str
    dp102: str | None
    dp104: bool


@dataclass(frozen=True)
class Switch:
    """A keyword (or positional argument) whose literal value selects the kind."""

    keyword: str
    position: int
    default: bool
    kinds: dict[bool | None, str]

    def kind(self, value: bool | None) -> str:
        """The kind for a resolved value (None: not resolved statically)."""
        return self.kinds[value]


@dataclass(frozen=True)
class Argument:
    """Where a call passes a value: a keyword, or the positional argument at ``position``
    when the call has at least ``min_args`` positional arguments (an overloaded signature
    such as ``randint(high, size)`` / ``randint(low, high, size)`` needs the count)."""

    keyword: str
    position: int
    min_args: int = 0

    def of(self, args: list[Any], kwargs: dict[str, Any]) -> Any:
        """The argument's expression in a call's (args, kwargs), or None."""
        if self.keyword in kwargs:
            return kwargs[self.keyword]
        if len(args) > self.position and len(args) >= self.min_args:
            return args[self.position]
        return None


@dataclass(frozen=True)
class SamplerApi:
    """A library API that forms batches (``role`` says how the code uses it)."""

    name: str
    role: str
    kind: str | None
    switch: Switch | None
    sampler_keywords: tuple[str, ...] = ()
    method: str | None = None
    population: Argument | None = None
    size: Argument | None = None
    #: A wrapper's argument holding what it wraps: the loader whose batches a wrapper yields,
    #: the sampler a batching wrapper cuts into batches.
    wraps: Argument | None = None

    def kind_for(self, value: bool | None | str) -> str:
        """The kind this call selects: ``value`` is the switch's resolved literal (None when
        it is not resolved), or the string ``"default"`` when the call does not pass it."""
        if self.switch is None:
            return self.kind or UNKNOWN
        return self.switch.kind(self.switch.default if value == "default" else value)  # type: ignore[arg-type]


@dataclass(frozen=True)
class SamplerTable:
    """The validated table."""

    kinds: dict[str, SamplerKind]
    apis: dict[str, SamplerApi]
    aliases: dict[str, str]
    generators: dict[str, str]

    def kind(self, name: str) -> SamplerKind:
        """The kind ``name``; a DpcheckError for a name the table does not hold."""
        if name not in self.kinds:
            raise DpcheckError(f"unknown sampler kind {name!r} (known: {', '.join(sorted(self.kinds))})")
        return self.kinds[name]

    def api(self, qualified: str) -> SamplerApi | None:
        """The API of an import-qualified name (an alias resolved first), or None."""
        return self.apis.get(self.aliases.get(qualified, qualified))

    def generator_type(self, qualified: str) -> str | None:
        """The type a call to ``qualified`` returns when it builds a random generator
        (``numpy.random.default_rng`` -> ``numpy.random.Generator``), or None."""
        return self.generators.get(qualified)


def _require(entry: dict[str, Any], key: str, kind: type, where: str) -> Any:
    if key not in entry or not isinstance(entry[key], kind) or (kind is int and isinstance(entry[key], bool)):
        raise DpcheckError(f"samplers.json: {where}: '{key}' must be a {kind.__name__}")
    return entry[key]


def _kind(name: str, entry: dict[str, Any]) -> SamplerKind:
    where = f"kind {name!r}"
    allowed = {"title", "meaning", "sampling", "fixed_size", "once_per_epoch", "guarantee", "witness", "dp102", "dp104"}
    extra = set(entry) - allowed
    if extra:
        raise DpcheckError(f"samplers.json: {where}: unknown keys {sorted(extra)}")
    sampling = _require(entry, "sampling", str, where)
    guarantee = _require(entry, "guarantee", str, where)
    witness = _require(entry, "witness", str, where)
    dp102 = entry.get("dp102")
    for value, allowed_values, key in ((sampling, SAMPLINGS, "sampling"), (guarantee, GUARANTEES, "guarantee"),
                                       (witness, WITNESSES, "witness")):
        if value not in allowed_values:
            raise DpcheckError(f"samplers.json: {where}: '{key}' must be one of {sorted(allowed_values)}, got {value!r}")
    if dp102 not in (None, "error", "warning", "info"):
        raise DpcheckError(f"samplers.json: {where}: 'dp102' must be null, error, warning or info, got {dp102!r}")
    return SamplerKind(name, _require(entry, "title", str, where), _require(entry, "meaning", str, where), sampling,
                       _require(entry, "fixed_size", bool, where), _require(entry, "once_per_epoch", bool, where),
                       guarantee, witness, dp102, _require(entry, "dp104", bool, where))


def _api(name: str, entry: dict[str, Any], kinds: dict[str, SamplerKind]) -> SamplerApi:
    where = f"api {name!r}"
    role = _require(entry, "role", str, where)
    if role not in ROLES:
        raise DpcheckError(f"samplers.json: {where}: 'role' must be one of {sorted(ROLES)}, got {role!r}")
    kind = entry.get("kind")
    if (kind is None) != (role in KINDLESS) or (kind is not None and kind not in kinds):
        raise DpcheckError(f"samplers.json: {where}: 'kind' must name a kind (a permutation or a wrapper has "
                           f"none, nor has a batching wrapper), got {kind!r}")
    if ("wraps" in entry) != (role in WRAPPERS):
        raise DpcheckError(f"samplers.json: {where}: a wrapper (and only a wrapper) names the argument it "
                           "'wraps' (a loader wrapper the loader whose batches it yields, a batching wrapper "
                           "the sampler it cuts)")
    switch = None
    if "switch" in entry:
        raw = entry["switch"]
        sub = f"{where} switch"
        values = _require(raw, "kinds", dict, sub)
        if set(values) != {"true", "false", "unresolved"} or any(
                v not in kinds and v != UNKNOWN for v in values.values()):
            raise DpcheckError(f"samplers.json: {sub}: 'kinds' must map 'true', 'false' and 'unresolved' to kinds")
        switch = Switch(_require(raw, "keyword", str, sub), _require(raw, "position", int, sub),
                        _require(raw, "default", bool, sub),
                        {True: values["true"], False: values["false"], None: values["unresolved"]})
    keywords = entry.get("sampler_keywords", [])
    if not isinstance(keywords, list) or not all(isinstance(k, str) for k in keywords):
        raise DpcheckError(f"samplers.json: {where}: 'sampler_keywords' must be a list of strings")
    method = entry.get("method")
    if (method is None) != (role != "strategy") or (method is not None and not isinstance(method, str)):
        raise DpcheckError(f"samplers.json: {where}: a strategy (and only a strategy) names the 'method' that "
                           "yields its batches")
    extra = set(entry) - {"role", "kind", "switch", "sampler_keywords", "method", "population", "size",
                          "wraps"}
    if extra:
        raise DpcheckError(f"samplers.json: {where}: unknown keys {sorted(extra)}")
    arguments = {}
    for key in ("population", "size", "wraps"):
        if key in entry:
            raw = _require(entry, key, dict, where)
            arguments[key] = Argument(_require(raw, "keyword", str, f"{where} {key}"),
                                      _require(raw, "position", int, f"{where} {key}"),
                                      raw.get("min_args", 0) if isinstance(raw.get("min_args", 0), int) else 0)
    return SamplerApi(name, role, kind, switch, tuple(keywords), method, arguments.get("population"),
                      arguments.get("size"), arguments.get("wraps"))


def parse_table(data: dict[str, Any]) -> SamplerTable:
    """The table from its JSON form, validated (``DpcheckError`` naming the bad entry)."""
    if data.get("schema") != 1:
        raise DpcheckError("samplers.json: 'schema' must be 1")
    kinds = {name: _kind(name, entry) for name, entry in _require(data, "kinds", dict, "top level").items()}
    apis = {name: _api(name, entry, kinds) for name, entry in _require(data, "apis", dict, "top level").items()}
    aliases = _require(data, "aliases", dict, "top level")
    for alias, target in aliases.items():
        if target not in apis:
            raise DpcheckError(f"samplers.json: alias {alias!r} points at {target!r}, which is not an api")
    generators = _require(data, "generators", dict, "top level")
    return SamplerTable(kinds, apis, dict(aliases), dict(generators))


@lru_cache(maxsize=1)
def sampler_table() -> SamplerTable:
    """The shipped table, loaded and validated once."""
    text = resources.files("dpcheck.data").joinpath("samplers.json").read_text("utf-8")
    return parse_table(json.loads(text))


def sampler_kind(name: str) -> SamplerKind:
    """A kind of the shipped table."""
    return sampler_table().kind(name)


def kind_of_pipeline(sampler: str, sampling: str) -> SamplerKind | None:
    """The kind of a pipeline's batches: its ``sampler``, else fixed-size batches of an
    undecided order when its coarse ``sampling`` says fixed-size ("shuffle"); None when
    unknown."""
    kinds = sampler_table().kinds
    if sampler in kinds:
        return kinds[sampler]
    return kinds["shuffled-or-sequential"] if sampling == "shuffle" else None
