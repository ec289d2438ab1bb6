"""The DP library API catalog: accountants, DP engine entry points and DP optimizers, as data.

The data lives in ``dpcheck/data/accountants.toml`` (accountant APIs, the accountant names they
report and the shapes of vendored copies) and ``dpcheck/data/dp_engines.toml`` (Opacus' engine
entry points, TF-Privacy's DP optimizers); both share one schema and are validated strictly:
an unknown key, a wrong type, an unknown role, accountant or assumption, a malformed pattern or
signature is a ``CatalogError`` naming the file and the key.

**Matching rule.** A library object is named by ``ProjectIndex.library_name``: the import path
the project reaches it by, followed by the attribute path on it (``acc.step`` after ``acc =
RDPAccountant()`` is ``opacus.accountants.RDPAccountant.step``; a factory's product is named
after the factory: ``create_accountant.step``). An entry's pattern is a dotted name whose first
component is the library's import root. One ``**`` may follow the root (never end the pattern):
it stands for any module path, because libraries re-export their objects at several depths
(``opacus.RDPAccountant``, ``opacus.accountants.RDPAccountant``,
``opacus.accountants.rdp.RDPAccountant``). Every other component must equal the corresponding
component of the name, counted from the end after ``**`` (a component may hold ``*``, matching
within that one component: ``DPKeras*Optimizer``). So the root and the name's last components
decide; a name that only *ends* like an entry (``jax_privacy.keras_api.make_private``, a
project's own ``make_private``) matches nothing. The first matching entry in file order wins.

**Vendored copies.** A ``[[copy]]`` describes a module of a library by what it defines: function
(or ``Class.method``) names with their leading parameters (``compute_rdp(q,
noise_multiplier|sigma, steps, orders)``; ``a|b`` accepts either name; ``self``/``cls`` are not
listed). A project module that defines all of them is a copy of that library module: its objects
that the catalog names (``knows``) are named ``<module>.<object>`` and matched like the library's.

**Roles** (what a matched call does; ``args`` say which argument carries which parameter as
``[position, keyword, ...]``, position -1 for keyword-only):

* ``constructor`` builds an accountant object; ``step`` is called once per training step (its
  count is the enclosing loop's); ``compose`` adds an event ``count`` times; ``event`` builds a
  DP event or mechanism object (its sampling decides the assumption); ``query`` reads epsilon;
  ``compute`` computes privacy directly from (q, sigma, steps) or (N, batch, sigma, epochs);
  ``calibration`` computes sigma from a target epsilon (its accountant given by ``choice``, by an
  accountant class passed as ``accountant_arg``, or by the engine it is called on).
* ``engine`` constructs a DP engine (its accountant chosen by ``choice``; ``engine-default``: the
  library release's default from the version table); ``entry`` hands training to the engine
  (``make_private``); ``attach`` is the 0.x engine's ``attach(optimizer)``; ``optimizer`` builds
  a DP optimizer.

An entry without an accountant (a ``query``, ``step`` or ``calibration`` on an object) reports
the accountant of the object it is called on: the catalog entry of that object's constructor.
``fallback = true`` marks a method name distinctive enough to be matched when the object it is
called on cannot be decided statically (see ``dpcheck.pipelines.apis``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from importlib import resources
from typing import Any

from dpcheck.catalog.validate import check_keys, listed, string, table
from dpcheck.errors import CatalogError
from dpcheck.model import Assumption
from dpcheck.sites.nodes import Call, Node
from dpcheck.toml import tomllib

SCHEMA = 1
ACCOUNTANT_ROLES = frozenset(
    {"constructor", "step", "compose", "event", "query", "compute", "calibration"})
ENGINE_ROLES = frozenset({"engine", "entry", "attach", "optimizer"})
#: The files of the shipped catalog and the roles each may hold.
FILES: Mapping[str, frozenset[str]] = {"accountants.toml": ACCOUNTANT_ROLES,
                                       "dp_engines.toml": ENGINE_ROLES}
#: Roles whose entries must say which accountant they report (directly or by ``choice``).
NAMING_ROLES = frozenset({"constructor", "compute", "event", "engine"})
#: The parameters an argument may carry.
PARAMETERS = frozenset(
    {"q", "sigma", "steps", "epochs", "N", "batch_size", "delta", "target_epsilon"})
#: ``choice.default``: the accountant the library release's version table names as default.
ENGINE_DEFAULT = "engine-default"

_TOP_KEYS = frozenset({"schema", "accountant", "api", "copy"})
_ACCOUNTANT_KEYS = frozenset({"family", "assumes", "title"})
_API_KEYS = frozenset({"match", "role", "accountant", "assumes", "args", "choice",
                       "accountant_arg", "fallback", "note"})
_CHOICE_KEYS = frozenset({"argument", "accountant", "assumes", "default", "default_assumes"})
_COPY_KEYS = frozenset({"module", "defines", "note"})
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_GLOB = re.compile(r"[A-Za-z_*][A-Za-z0-9_*]*")
_KEBAB = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*")
_SIGNATURE = re.compile(r"([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)\((.*)\)")


@dataclass(frozen=True)
class Pattern:
    """A qualified-name pattern (module docstring): ``head`` is the root and what precedes
    ``**``; ``tail`` the components matched from the end (all of them without ``**``)."""

    text: str
    head: tuple[str, ...]
    tail: tuple[str, ...]
    wild: bool

    def matches(self, parts: tuple[str, ...]) -> bool:
        """Whether the split qualified name ``parts`` matches."""
        if self.wild:
            fixed = len(self.head) + len(self.tail)
            if len(parts) < fixed:
                return False
            ends = parts[len(parts) - len(self.tail):] if self.tail else ()
            return _same(parts[:len(self.head)], self.head) and _same(ends, self.tail)
        return len(parts) == len(self.head) + len(self.tail) and _same(
            parts, (*self.head, *self.tail))

    def holds(self, parts: tuple[str, ...]) -> bool:
        """Whether ``parts`` names an object this pattern names, or one that contains such an
        object (the class of a method the pattern names)."""
        return any(Pattern(self.text, self.head, self.tail[:end], self.wild).matches(parts)
                   for end in range(len(self.tail), 0, -1))

    @property
    def last(self) -> str:
        return self.tail[-1]


def _same(parts: tuple[str, ...], pattern: tuple[str, ...]) -> bool:
    return len(parts) == len(pattern) and all(
        fnmatchcase(part, want) if "*" in want else part == want
        for part, want in zip(parts, pattern))


@dataclass(frozen=True)
class Argument:
    """Where a call carries a value: a keyword of ``keywords``, else the positional argument at
    ``position`` (-1: keyword-only)."""

    position: int
    keywords: tuple[str, ...]

    def read(self, call: Call) -> Node | None:
        return call.argument(self.position, *self.keywords)


@dataclass(frozen=True)
class Choice:
    """An argument that chooses the accountant and/or its assumption. The chosen key is a string
    literal's value, ``True``/``False``/``None`` for those constants, or the last component of
    the library name of an object given (``RdpAccountantConfig``)."""

    argument: Argument
    accountants: Mapping[str, str] = field(default_factory=dict)
    assumptions: Mapping[str, str] = field(default_factory=dict)
    default: str | None = None
    default_assumes: str | None = None

    def pick(self, key: str | None, given: bool) -> tuple[str | None, str | None]:
        """(accountant, assumption) for the key an argument gave (``given``: the argument is
        there; an absent one takes the defaults). An argument whose key is not listed (not a
        literal, a value the catalog does not know) decides neither."""
        if not given:
            return self.default, self.default_assumes
        if key is None:
            return None, None
        return self.accountants.get(key), self.assumptions.get(key)


@dataclass(frozen=True)
class Api:
    """One catalog entry (see the module docstring for the fields' meaning)."""

    patterns: tuple[Pattern, ...]
    role: str
    accountant: str | None = None
    assumes: str | None = None
    args: Mapping[str, Argument] = field(default_factory=dict)
    choice: Choice | None = None
    accountant_arg: Argument | None = None
    fallback: bool = False
    where: str = ""

    def read(self, call: Call) -> dict[str, Node]:
        """The parameters this call carries, by parameter name."""
        found = {name: argument.read(call) for name, argument in self.args.items()}
        return {name: value for name, value in found.items() if value is not None}


@dataclass(frozen=True)
class AccountantKind:
    """An accountant name an entry may report: its family (calls of one family are one
    accountant), its default assumption and a title."""

    name: str
    family: str
    assumes: str
    title: str


@dataclass(frozen=True)
class Signature:
    """A function or method a copy defines: its qualified name in the module and its leading
    parameters, each a set of accepted names."""

    qualname: str
    params: tuple[frozenset[str], ...]

    def fits(self, names: list[str]) -> bool:
        """Whether parameter ``names`` (``self``/``cls`` left out) start with these."""
        return len(names) >= len(self.params) and all(
            name in accepted for name, accepted in zip(names, self.params))


@dataclass(frozen=True)
class CopyShape:
    """A library module recognised in a project by the functions it defines."""

    module: str
    defines: tuple[Signature, ...]


@dataclass(frozen=True)
class ApiCatalog:
    """The loaded catalog with its lookups."""

    apis: tuple[Api, ...]
    accountants: Mapping[str, AccountantKind]
    copies: tuple[CopyShape, ...]

    @functools.cached_property
    def _by_last(self) -> dict[str, list[tuple[Pattern, Api]]]:
        index: dict[str, list[tuple[Pattern, Api]]] = {}
        for api in self.apis:
            for pattern in api.patterns:
                index.setdefault("*" if "*" in pattern.last else pattern.last, []).append(
                    (pattern, api))
        return index

    @functools.cached_property
    def tails(self) -> frozenset[str]:
        """The literal last components of the patterns (a cheap test before a name is looked
        up: a call whose last name part is none of these, and whose head is not imported, cannot
        be a catalog API)."""
        return frozenset(last for last in self._by_last if last != "*")

    @functools.cached_property
    def roots(self) -> frozenset[str]:
        """The library import roots the catalog knows."""
        return frozenset(p.head[0] for api in self.apis for p in api.patterns)

    def match(self, qualified: str | None, roles: frozenset[str]) -> Api | None:
        """The first entry of one of ``roles`` whose pattern matches the qualified name."""
        if not qualified:
            return None
        parts = tuple(qualified.split("."))
        candidates = [*self._by_last.get(parts[-1], ()), *self._by_last.get("*", ())]
        found = [(self.apis.index(api), api) for pattern, api in candidates
                 if api.role in roles and pattern.matches(parts)]
        return min(found, key=lambda item: item[0])[1] if found else None

    def knows(self, qualified: str) -> bool:
        """Whether the qualified name is an object some entry names, or contains one (a class
        whose method an entry names)."""
        parts = tuple(qualified.split("."))
        return any(pattern.holds(parts) for api in self.apis for pattern in api.patterns)

    def fallback(self, method: str, roots: frozenset[str], roles: frozenset[str]) -> Api | None:
        """The ``fallback`` entry of ``roles`` whose method name is ``method`` in a library whose
        root is in ``roots``."""
        return next((api for pattern, api in self._by_last.get(method, ())
                     if api.fallback and api.role in roles and pattern.head[0] in roots), None)

    def family(self, accountant: str) -> str:
        kind = self.accountants.get(accountant)
        return kind.family if kind is not None else accountant

    def default_assumption(self, accountant: str) -> str:
        kind = self.accountants.get(accountant)
        return kind.assumes if kind is not None else Assumption.UNKNOWN.value


def load_api_catalog(texts: Mapping[str, str] | None = None) -> ApiCatalog:
    """The catalog from ``texts`` (file name -> TOML text, names of ``FILES``), or the shipped
    one (read and validated once per process)."""
    if texts is None:
        return _shipped()
    return _parse(texts)


@functools.cache
def _shipped() -> ApiCatalog:
    folder = resources.files("dpcheck.data")
    texts = {}
    for name in FILES:
        try:
            texts[name] = folder.joinpath(name).read_text("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise CatalogError(f"{name}: cannot read the API catalog: {exc}") from exc
    return _parse(texts)


def _parse(texts: Mapping[str, str]) -> ApiCatalog:
    documents = {}
    for name, text in texts.items():
        if name not in FILES:
            raise CatalogError(f"{name}: not an API catalog file (expected one of "
                               f"{', '.join(FILES)})")
        try:
            documents[name] = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise CatalogError(f"{name}: invalid TOML: {exc}") from exc
    accountants: dict[str, AccountantKind] = {}
    for name, data in documents.items():
        check_keys(name, "", data, _TOP_KEYS, required=("schema",))
        if data["schema"] != SCHEMA:
            raise CatalogError(f"{name}: schema: {data['schema']!r} is not {SCHEMA}")
        for key, value in table(name, "accountant", data.get("accountant", {})).items():
            if key in accountants:
                raise CatalogError(f"{name}: accountant.{key}: defined twice")
            accountants[key] = _accountant(name, key, value)
    apis: list[Api] = []
    copies: list[CopyShape] = []
    for name, data in documents.items():
        parsed = listed(name, "api", data.get("api", []),
                        lambda f, k, v: _api(f, k, v, FILES[name], accountants))
        texts_seen: dict[str, str] = {}
        for index, api in enumerate(parsed):
            for pattern in api.patterns:
                first = texts_seen.setdefault(pattern.text, f"api[{index}]")
                if first != f"api[{index}]":
                    raise CatalogError(f"{name}: api[{index}].match: {pattern.text!r} is "
                                       f"already matched by {first}")
        apis.extend(parsed)
        copies.extend(listed(name, "copy", data.get("copy", []), _copy))
    return ApiCatalog(tuple(apis), accountants, tuple(copies))


def _accountant(file: str, key: str, value: Any) -> AccountantKind:
    where = f"accountant.{key}"
    if not _KEBAB.fullmatch(key):
        raise CatalogError(f"{file}: {where}: the name is not kebab-case")
    data = table(file, where, value)
    check_keys(file, f"{where}.", data, _ACCOUNTANT_KEYS, required=tuple(sorted(_ACCOUNTANT_KEYS)))
    return AccountantKind(key, string(file, f"{where}.family", data["family"]),
                          _assumption(file, f"{where}.assumes", data["assumes"]),
                          string(file, f"{where}.title", data["title"]))


def _assumption(file: str, key: str, value: Any) -> str:
    text = string(file, key, value)
    allowed = [a.value for a in Assumption]
    if text not in allowed:
        raise CatalogError(f"{file}: {key}: {text!r} is not one of {', '.join(allowed)}")
    return text


def _known_accountant(file: str, key: str, value: Any, accountants: Mapping[str, Any],
                      engine_default: bool = False) -> str:
    text = string(file, key, value)
    if text not in accountants and not (engine_default and text == ENGINE_DEFAULT):
        raise CatalogError(f"{file}: {key}: {text!r} is not an accountant of the catalog "
                           f"(known: {', '.join(sorted(accountants))})")
    return text


def _api(file: str, key: str, value: Any, roles: frozenset[str],
         accountants: Mapping[str, AccountantKind]) -> Api:
    data = table(file, key, value)
    check_keys(file, f"{key}.", data, _API_KEYS, required=("match", "role"))
    patterns = listed(file, f"{key}.match", data["match"], _pattern)
    if not patterns:
        raise CatalogError(f"{file}: {key}.match: must name at least one pattern")
    role = string(file, f"{key}.role", data["role"])
    if role not in roles:
        raise CatalogError(f"{file}: {key}.role: {role!r} is not one of {', '.join(sorted(roles))}")
    accountant = _known_accountant(file, f"{key}.accountant", data["accountant"], accountants) \
        if "accountant" in data else None
    assumes = _assumption(file, f"{key}.assumes", data["assumes"]) if "assumes" in data else None
    args = {name: _argument(file, f"{key}.args.{name}", spec)
            for name, spec in table(file, f"{key}.args", data.get("args", {})).items()}
    unknown = sorted(set(args) - PARAMETERS)
    if unknown:
        raise CatalogError(f"{file}: {key}.args.{unknown[0]}: not a parameter (allowed: "
                           f"{', '.join(sorted(PARAMETERS))})")
    choice = _choice(file, f"{key}.choice", data["choice"], accountants) \
        if "choice" in data else None
    accountant_arg = _argument(file, f"{key}.accountant_arg", data["accountant_arg"]) \
        if "accountant_arg" in data else None
    fallback = data.get("fallback", False)
    if not isinstance(fallback, bool):
        raise CatalogError(f"{file}: {key}.fallback: must be true or false")
    if "note" in data:
        string(file, f"{key}.note", data["note"])
    if role in NAMING_ROLES and accountant is None and (choice is None or not choice.accountants):
        raise CatalogError(f"{file}: {key}: a {role} entry must name its accountant "
                           "(accountant, or a choice of accountants)")
    return Api(patterns, role, accountant, assumes, args, choice, accountant_arg, fallback,
               f"{file}: {key}")


def _pattern(file: str, key: str, value: Any) -> Pattern:
    text = string(file, key, value)
    parts = text.split(".")
    if parts.count("**") > 1 or parts[0] == "**" or parts[-1] == "**" or len(parts) < 2:
        raise CatalogError(f"{file}: {key}: {text!r}: a pattern is a library root, at most one "
                           "'**' (not last) and the object's name")
    if not _NAME.fullmatch(parts[0]):
        raise CatalogError(f"{file}: {key}: {text!r}: the root {parts[0]!r} is not a name")
    for part in parts[1:]:
        if part != "**" and not _GLOB.fullmatch(part):
            raise CatalogError(f"{file}: {key}: {text!r}: {part!r} is not a name component")
    if "**" in parts:
        cut = parts.index("**")
        return Pattern(text, tuple(parts[:cut]), tuple(parts[cut + 1:]), True)
    return Pattern(text, (parts[0],), tuple(parts[1:]), False)


def _argument(file: str, key: str, value: Any) -> Argument:
    if not isinstance(value, list) or not value or not isinstance(value[0], int) \
            or isinstance(value[0], bool) or value[0] < -1:
        raise CatalogError(f"{file}: {key}: must be [position, keyword, ...] with a position "
                           ">= 0, or -1 for keyword-only")
    keywords = tuple(string(file, f"{key}[{i}]", word) for i, word in enumerate(value[1:], 1))
    if value[0] == -1 and not keywords:
        raise CatalogError(f"{file}: {key}: a keyword-only argument needs a keyword")
    return Argument(value[0], keywords)


def _choice(file: str, key: str, value: Any, accountants: Mapping[str, AccountantKind]) -> Choice:
    data = table(file, key, value)
    check_keys(file, f"{key}.", data, _CHOICE_KEYS, required=("argument",))
    picked = {k: _known_accountant(file, f"{key}.accountant.{k}", v, accountants)
              for k, v in table(file, f"{key}.accountant", data.get("accountant", {})).items()}
    assumed = {k: _assumption(file, f"{key}.assumes.{k}", v)
               for k, v in table(file, f"{key}.assumes", data.get("assumes", {})).items()}
    default = _known_accountant(file, f"{key}.default", data["default"], accountants, True) \
        if "default" in data else None
    default_assumes = _assumption(file, f"{key}.default_assumes", data["default_assumes"]) \
        if "default_assumes" in data else None
    return Choice(_argument(file, f"{key}.argument", data["argument"]), picked, assumed, default,
                  default_assumes)


def _copy(file: str, key: str, value: Any) -> CopyShape:
    data = table(file, key, value)
    check_keys(file, f"{key}.", data, _COPY_KEYS, required=("module", "defines"))
    module = string(file, f"{key}.module", data["module"])
    if not all(_NAME.fullmatch(part) for part in module.split(".")):
        raise CatalogError(f"{file}: {key}.module: {module!r} is not a dotted module name")
    defines = listed(file, f"{key}.defines", data["defines"], _signature)
    if not defines:
        raise CatalogError(f"{file}: {key}.defines: must list at least one function")
    if "note" in data:
        string(file, f"{key}.note", data["note"])
    return CopyShape(module, defines)


def _signature(file: str, key: str, value: Any) -> Signature:
    text = string(file, key, value)
    found = _SIGNATURE.fullmatch(text.replace(" ", ""))
    if found is None:
        raise CatalogError(f"{file}: {key}: {text!r} is not 'name(param, param|alias, ...)'")
    params = [p for p in found.group(2).split(",") if p] if found.group(2) else []
    accepted = []
    for param in params:
        names = param.split("|")
        if not all(_NAME.fullmatch(n) for n in names):
            raise CatalogError(f"{file}: {key}: {param!r} is not a parameter name")
        accepted.append(frozenset(names))
    return Signature(found.group(1), tuple(accepted))
