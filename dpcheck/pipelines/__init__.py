"""Pipelines: link the sites of each training entry point, classify its mechanism, sampling and
accountant, and resolve its parameters (see ``build``); the DP code no pipeline could take is
kept as ``UnlinkedCode`` (see ``markers``).

The linking machinery is imported on first use of these names, so a module that needs one light
part of the package (the rules read ``versions`` and ``params``) does not load all of it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dpcheck.pipelines.build import Linking, build_pipelines, link_project, mechanism

__all__ = ["Linking", "build_pipelines", "link_project", "mechanism"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from dpcheck.pipelines import build

        return getattr(build, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
