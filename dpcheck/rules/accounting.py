"""What a pipeline's privacy claim rests on: who accounts it, and whether as SGM."""

from __future__ import annotations

from dpcheck.model import Pipeline
from dpcheck.pipelines.versions import resolve_opacus
from dpcheck.project import Project


def library_accounts(pipeline: Pipeline) -> bool:
    """Whether the pipeline's DP library (Opacus) reports an epsilon of its own, as SGM."""
    return (pipeline.library or "").startswith("opacus")


def accounted_as_sgm(pipeline: Pipeline) -> bool:
    """Whether the reported epsilon assumes the SGM: an accountant that says so, or the DP
    library's own accounting."""
    return pipeline.accountant.assumes.sgm or library_accounts(pipeline)


def accountant_phrase(pipeline: Pipeline, project: Project) -> str:
    """Who accounts the pipeline: the accountant found, else the library's default one."""
    if pipeline.accountant.name != "none":
        return pipeline.accountant.name
    row = resolve_opacus(project, pipeline.path).row
    default = row.get("default_accountant") if row else None
    which = f" ({default})" if default else ""
    return (f"no accountant call was found, so {pipeline.library}'s default accountant{which} "
            "is assumed, and it")
