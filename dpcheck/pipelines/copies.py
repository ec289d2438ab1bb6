"""Vendored copies of DP libraries: a project module recognised as a library module by what it
defines (``dpcheck.catalog.apis``: the ``[[copy]]`` shapes of the accountant catalog).

A project that copies TF-Privacy's ``rdp_accountant.py`` (or Opacus' RDP analysis, the 2016
moments accountant, the GDP accountant) calls the copy's ``compute_rdp`` exactly as users of the
library call the library's. A module that defines every function a shape lists, with those
leading parameters, is that library module: the objects of it the catalog names are named
``<library module>.<object>`` by ``ProjectIndex.library_name`` and matched like the library's.
Its other functions (a project's ``get_sigma`` search added to the copy) stay project code.
"""

from __future__ import annotations

from dpcheck.catalog.apis import ApiCatalog, Signature, load_api_catalog
from dpcheck.sites.views import ModuleSummary


class CopiesMixin:
    """Copy recognition of ``ProjectIndex`` (see the module docstring)."""

    @property
    def api_catalog(self) -> ApiCatalog:
        """The DP library API catalog (shipped data, loaded once per process)."""
        return load_api_catalog()

    def _copied_module(self, path: str) -> str | None:
        """The library module the project file ``path`` is a copy of, else None (computed once
        per file)."""
        summary = self.summary(path)  # type: ignore[attr-defined]
        if summary is None:
            return None
        for shape in self.api_catalog.copies:
            if all(_defines(summary, signature) for signature in shape.defines):
                return shape.module
        return None

    def copied_name(self, path: str, qualname: str) -> str | None:
        """The library name of the object ``qualname`` of the project file ``path`` when that
        file is a copy of a library module and the catalog names the object (or a method of
        it); None otherwise."""
        module = self.copied_module(path)  # type: ignore[attr-defined]
        if module is None:
            return None
        name = f"{module}.{qualname}"
        return name if self.api_catalog.knows(name) else None


def _defines(summary: ModuleSummary, signature: Signature) -> bool:
    """Whether the module defines the function (or method) with those leading parameters."""
    scope = summary.scopes.get(signature.qualname)
    if scope is None or signature.qualname in summary.classes:
        return False
    names = [param.name for param in scope.params]
    if scope.owner and next(iter(names), None) in ("self", "cls"):
        names = names[1:]
    return signature.fits(names)
