"""Framework vocabularies (``dpcheck/data/vocabulary.toml``): what data libraries mean by their
names, loaded and validated once, and how a call is matched against them.

A group lists library functions by import-qualified name (a library root and dotted patterns of
the name's last components, ``*`` standing for one component), the tensor methods it holds
(matched on values whose class dpcheck cannot decide: a tensor's class is rarely known
statically), the builtins it holds, for attribute groups, attribute names, and the methods of
objects a library made (``library_methods``: matched by where the object comes from,
``dpcheck.pipelines.library_objects``). A project's own function never matches: it is analysed
as project code.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

from dpcheck.errors import DpcheckError
from dpcheck.pipelines.scope import Ctx
from dpcheck.sites.nodes import Call
from dpcheck.toml import tomllib

GROUPS = ("keeps_examples", "data_attributes", "data_containers", "loader_attributes",
          "datasets", "loaders", "mask_indices", "counts", "floors", "tensor_factories",
          "sampling_draws", "bernoulli_draws", "uniform_draws", "index_ranges", "means",
          "divisions", "products", "normal_draws", "gaussian_draws", "bounds", "norm_clips",
          "selects_indices", "samples_count", "splits_lengths",
          "keeps_all_examples", "evaluation_callbacks", "option_parses", "dataclass_parses",
          "json_loaders", "yaml_loaders", "toml_loaders", "file_reads", "path_joins")
_KEYS = {"summary": str, "methods": list, "names": list, "builtins": list, "functions": dict,
         "library_methods": dict}


@dataclass(frozen=True)
class Group:
    """One vocabulary: library functions by root and pattern, methods, builtins, attributes."""

    name: str
    summary: str
    functions: dict[str, tuple[tuple[str, ...], ...]]
    methods: frozenset[str]
    builtins: frozenset[str]
    attributes: frozenset[str]
    #: Methods of objects a library made, by library root (``datasets``: ``select``).
    library_methods: dict[str, frozenset[str]]

    def has_library_function(self, qualified: str) -> bool:
        """Whether the import-qualified name ``qualified`` is one of the group's functions."""
        root, _, rest = qualified.partition(".")
        parts = tuple(rest.split(".")) if rest else ()
        return any(len(pattern) <= len(parts) and all(
            want in ("*", got) for want, got in zip(pattern, parts[len(parts) - len(pattern):]))
            for pattern in self.functions.get(root, ()))

    @property
    def tails(self) -> frozenset[str]:
        """The last names a call of the group can have (its functions', methods' and builtins'):
        the call index is searched by them, each call found then matched by ``calls_in``."""
        return self.methods | self.builtins | frozenset(
            pattern[-1] for patterns in self.functions.values() for pattern in patterns) \
            | frozenset().union(*self.library_methods.values())

    def has_library_method(self, library: str, method: str) -> bool:
        """Whether ``method`` called on an object the library ``library`` made is in the group."""
        return method in self.library_methods.get(library, frozenset())


@lru_cache(maxsize=1)
def vocabulary() -> dict[str, Group]:
    """The shipped vocabularies by group name (validated; a broken file is a ``DpcheckError``)."""
    text = resources.files("dpcheck.data").joinpath("vocabulary.toml").read_text("utf-8")
    return parse_vocabulary(tomllib.loads(text), "vocabulary.toml")


def parse_vocabulary(data: dict[str, Any], source: str) -> dict[str, Group]:
    """Validate and type a vocabulary document (every group of ``GROUPS``, no other)."""
    missing = [g for g in GROUPS if g not in data]
    unknown = [g for g in data if g not in GROUPS]
    if missing or unknown:
        raise DpcheckError(f"{source}: groups missing {missing} or unknown {unknown}")
    groups: dict[str, Group] = {}
    for name in GROUPS:
        entry = data[name]
        for key, value in entry.items():
            if key not in _KEYS or not isinstance(value, _KEYS[key]):
                raise DpcheckError(f"{source}: [{name}] {key} is unknown or not a "
                                   f"{_KEYS.get(key, object).__name__}")
        if not isinstance(entry.get("summary"), str):
            raise DpcheckError(f"{source}: [{name}] needs a summary")
        functions: dict[str, tuple[tuple[str, ...], ...]] = {}
        for root, patterns in entry.get("functions", {}).items():
            if not isinstance(patterns, list) or not all(isinstance(p, str) and p for p in patterns):
                raise DpcheckError(f"{source}: [{name}.functions] {root} must list names")
            functions[root] = tuple(tuple(p.split(".")) for p in patterns)
        lists = {}
        for key in ("methods", "builtins", "names"):
            values = entry.get(key, [])
            if not all(isinstance(v, str) and v.isidentifier() for v in values):
                raise DpcheckError(f"{source}: [{name}] {key} must list identifiers")
            lists[key] = frozenset(values)
        methods: dict[str, frozenset[str]] = {}
        for root, names in entry.get("library_methods", {}).items():
            if not isinstance(names, list) or not all(isinstance(n, str) and n.isidentifier()
                                                      for n in names):
                raise DpcheckError(f"{source}: [{name}.library_methods] {root} must list "
                                   "identifiers")
            methods[root] = frozenset(names)
        groups[name] = Group(name, entry["summary"], functions, lists["methods"],
                             lists["builtins"], lists["names"], methods)
    return groups


def calls_in(group: str, call: Call, ctx: Ctx, index: Any) -> bool:
    """Whether ``call`` (read at ``ctx``) is a call of the vocabulary ``group``: a library
    function of the group (by import-qualified name), a method of the group called on a value
    whose class is not decided or (``library_methods``) on an object the library made, or a
    builtin of the group. ``index`` is the ``ProjectIndex``."""
    vocab = vocabulary()[group]
    name = call.name
    if name is None:
        return False
    if name.startswith("?."):
        return call.method in vocab.methods
    qualified = index.library_name(name, ctx)
    if qualified is not None:
        library, _, _ = qualified.partition(".")
        return vocab.has_library_function(qualified) or (
            vocab.has_library_method(library, call.method) and not _imported(name, ctx, index))
    if "." not in name:
        return name in vocab.builtins and index.bind(name, ctx) is None
    return call.method in vocab.methods and index.function(name, ctx) is None


def _imported(name: str, ctx: Ctx, index: Any) -> bool:
    """Whether the dotted ``name`` starts with an imported module (``torch.nn.init.normal_``): a
    function of the module, not a method of an object the library made."""
    head, _, _ = name.partition(".")
    binding = index.bind(head, ctx)
    return binding is not None and binding.kind == "module"
