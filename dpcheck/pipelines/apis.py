"""Which DP library API a call is: its import-qualified name looked up in the API catalog.

``api_of`` names the callee with ``ProjectIndex.library_name`` (aliases, re-exports, instances,
inherited methods, vendored copies) and looks that name up in the catalog
(``dpcheck.catalog.apis``, whose docstring states the matching rule). A project's own function
or class, whatever it is called, has no library name and is no library API: its code is analysed
as project code.

**The one fallback.** Where the object a method is called on cannot be decided statically — a
parameter no call site passes anything for, or a name bound nowhere the summaries see — a method
whose catalog entry is marked ``fallback`` (a name distinctive to one library, such as Opacus'
``make_private``) is taken for that library's API, and only in a file that imports that library.
An object that *is* decided (a project instance, another library's module, different objects
from different callers) never falls back.
"""

from __future__ import annotations

from dpcheck.catalog.apis import Api
from dpcheck.pipelines.index import ProjectIndex
from dpcheck.pipelines.scope import Ctx
from dpcheck.sites.nodes import Attr, Call, Name


def api_of(index: ProjectIndex, call: object, ctx: Ctx, roles: frozenset[str]) -> Api | None:
    """The catalog entry of one of ``roles`` that ``call`` (read at ``ctx``) is, if any."""
    if not isinstance(call, Call):
        return None
    constructed = built_by(call)
    name = call.name if constructed is None else constructed.name
    if not name or name.startswith("?."):
        return None
    catalog = index.api_catalog
    summary = index.summary(ctx.path)
    if call.method not in catalog.tails and not _aliased(index, name, ctx):
        return None
    qualified = index.library_name(name, ctx)
    if constructed is not None:
        qualified = f"{qualified}.{call.method}" if qualified is not None else None
        name = f"?.{call.method}"
    api = catalog.match(qualified, roles)
    if api is not None:
        return api
    if qualified is not None or "." not in name or summary is None:
        return None
    base, _, _ = name.rpartition(".")
    roots = frozenset(_root(target) for target in summary.imports.values())
    fallback = catalog.fallback(call.method, roots, roles)
    return fallback if fallback is not None and undecided(index, base, ctx) else None


def _aliased(index: ProjectIndex, name: str, ctx: Ctx) -> bool:
    """Whether the head of ``name`` is imported from a library the catalog knows or from a
    project module (which may be a vendored copy): a name that may be a catalog API under
    another name (``from prv_accountant import Accountant as PRVAccountant``). Any other call
    whose last name part is no catalog name cannot be a catalog API."""
    summary = index.summary(ctx.path)
    head, _, _ = name.partition(".")
    target = summary.imports.get(head) if summary is not None else None
    if target is None:
        return False
    return _root(target) in index.api_catalog.roots \
        or index.module_path(ctx.path, target) is not None


def _root(target: str) -> str:
    """The top-level package of an import target (``torch`` of ``torch.nn``; a relative
    target's first name)."""
    root, _, _ = target.lstrip(".").partition(".")
    return root


def built_by(call: Call) -> Call | None:
    """The constructor call a method is called on directly (``PrivacyEngine(...).attach(opt)``:
    the ``PrivacyEngine(...)`` call), else None."""
    callee = call.callee
    if isinstance(callee, Attr) and isinstance(callee.base, Call) \
            and isinstance(callee.base.callee, Name):
        return callee.base
    return None


def undecided(index: ProjectIndex, dotted: str, ctx: Ctx) -> bool:
    """Whether what ``dotted`` denotes at ``ctx`` cannot be decided at all: a name bound
    nowhere, or a parameter that no call site passes anything for."""
    binding = index.attribute(dotted, ctx)
    if binding is None:
        head, _, _ = dotted.partition(".")
        return index.bind(head, ctx) is None or dotted.startswith("self.")
    return binding.kind == "param" and binding.ir is None and not index.arguments(binding)
