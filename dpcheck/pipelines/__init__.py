"""Pipelines: link the sites of each training entry point, classify its mechanism, sampling and
accountant, and resolve its parameters (see ``build``)."""

from dpcheck.pipelines.build import build_pipelines, mechanism

__all__ = ["build_pipelines", "mechanism"]
