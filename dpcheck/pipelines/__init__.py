"""Pipelines: link the sites of each training entry point, classify its mechanism, sampling and
accountant, and resolve its parameters (see ``build``); the DP code no pipeline could take is
kept as ``UnlinkedCode`` (see ``markers``)."""

from dpcheck.pipelines.build import Linking, build_pipelines, link_project, mechanism

__all__ = ["Linking", "build_pipelines", "link_project", "mechanism"]
