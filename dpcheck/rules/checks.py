"""The rule functions DP101-DP106: ``(pipeline, project) -> findings``, pure.

Each check says why (evidence), anchored where the catalog says: the update (DP101), the sampler
(DP102), the accountant call (DP103), the noise parameter (DP104), the requirement line (DP105),
the undecided update (DP106).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from dpcheck.model import Finding, ParamValue, Pipeline, Severity, Span
from dpcheck.pipelines.params import batches_per_epoch
from dpcheck.pipelines.versions import resolve_opacus
from dpcheck.privacy.shuffle import sigma_threshold
from dpcheck.project import Project
from dpcheck.samplers import kind_of_pipeline

NORMALIZED = ("ASGM", "EASGM", "FEASGM")
RELATIVE_TOLERANCE = 1e-6
Check = Callable[[Pipeline, Project], Iterator[tuple[str, Span, str]]]


def _anchor(pipeline: Pipeline, role: str) -> Span | None:
    return next((e.span for e in pipeline.evidence if e.role == role), None)


def _users_side(pipeline: Pipeline, role: str) -> Span | None:
    """The first ``role`` evidence in the entry's own file, else the first one (the builder
    lists the user's hand-over before the library's site): a finding belongs where the user can
    act on it, not in library code the pipeline reaches."""
    spans = [e.span for e in pipeline.evidence if e.role == role]
    return next((s for s in spans if s.path == pipeline.path), spans[0] if spans else None)


def _assumes_sgm(pipeline: Pipeline) -> bool:
    return pipeline.accountant.assumes.startswith("SGM")


def _accountant_phrase(pipeline: Pipeline, project: Project) -> str:
    """Who accounts the pipeline: the accountant found, else the library's default one."""
    if pipeline.accountant.name != "none":
        return pipeline.accountant.name
    row = resolve_opacus(project, pipeline.path).row
    default = row.get("default_accountant") if row else None
    which = f" ({default})" if default else ""
    return (f"no accountant call was found, so {pipeline.library}'s default accountant{which} "
            "is assumed, and it")


def dp101(pipeline: Pipeline, project: Project) -> Iterator[tuple[str, Span, str]]:
    """A data-dependent normalization accounted as SGM."""
    if pipeline.mechanism not in NORMALIZED:
        return
    library_accounts = (pipeline.library or "").startswith("opacus")
    if not (_assumes_sgm(pipeline) or library_accounts):
        return
    span = _anchor(pipeline, "divisor") if pipeline.library is None else None
    span = span or _anchor(pipeline, "update") or Span(pipeline.path, pipeline.line)
    yield "DP101", span, (
        f"the update is {pipeline.mechanism} (the noisy sum is divided by a data-dependent batch "
        f"size) but {_accountant_phrase(pipeline, project)} accounts it as SGM")


def dp102(pipeline: Pipeline, project: Project) -> Iterator[tuple[str, Span, str]]:
    """Batches that are not Poisson (every fixed-size scheme, and balls-and-bins) accounted as
    Poisson subsampling; the message names the scheme (``dpcheck/data/samplers.json``). One
    batch per epoch is the whole dataset at every step: Poisson sampling with q = 1 draws the
    same batch, so nothing is mis-accounted."""
    kind = kind_of_pipeline(pipeline.sampler, pipeline.sampling)
    if kind is None or kind.dp102 is None or pipeline.accountant.assumes != "SGM+poisson" \
            or batches_per_epoch(pipeline.params) == 1:
        return
    span = _anchor(pipeline, "sampler") or Span(pipeline.path, pipeline.line)
    yield "DP102", span, (
        f"batch sampling: {kind.title}, but {pipeline.accountant.name} assumes Poisson subsampling")


def _differs(claimed: ParamValue | None, actual: ParamValue | None) -> bool:
    if claimed is None or actual is None or claimed.value is None or actual.value is None:
        return False
    if claimed.span is not None and claimed.span == actual.span:
        return False
    scale = max(abs(claimed.value), abs(actual.value))
    return scale > 0 and abs(claimed.value - actual.value) > RELATIVE_TOLERANCE * scale


def dp103(pipeline: Pipeline, project: Project) -> Iterator[tuple[str, Span, str]]:
    """The accountant's q or step count differs from the code's."""
    accountant = pipeline.accountant
    if accountant.span is None:
        return
    parts = []
    anchor: Span | None = None
    for name, claimed in (("q", accountant.q), ("steps", accountant.steps)):
        actual = pipeline.params.get(name)
        if _differs(claimed, actual):
            parts.append(f"{name} = {claimed.value:g} given to the accountant, "  # type: ignore
                         f"{actual.value:g} in the code")  # type: ignore[union-attr]
            anchor = anchor or _anchor(pipeline, f"accountant:{name}")
    if parts:
        yield "DP103", anchor or accountant.span, "; ".join(parts)


def dp104(pipeline: Pipeline, project: Project) -> Iterator[tuple[str, Span, str]]:
    """Sampling that puts every example in one batch per epoch (shuffled, sequential, buffered,
    balls-and-bins) with sigma below 1/sqrt(2 ln M), M the batches per epoch (floor(N/b) with
    ``drop_last``, else ceil(N/b))."""
    kind = kind_of_pipeline(pipeline.sampler, pipeline.sampling)
    if kind is None or not kind.dp104:
        return
    sigma = pipeline.params.get("sigma")
    rounds = batches_per_epoch(pipeline.params)
    if sigma is None or sigma.value is None or rounds is None or rounds < 2:
        return
    threshold = sigma_threshold(rounds)
    if sigma.value < threshold:
        span = _users_side(pipeline, "noise") or sigma.span or Span(pipeline.path, pipeline.line)
        yield "DP104", span, (
            f"noise multiplier {sigma.value:g} < 1/sqrt(2 ln M) = {threshold:.3f} with M = "
            f"{rounds} batches per epoch ({kind.title}): no favourable privacy guarantee exists")


def dp105(pipeline: Pipeline, project: Project) -> Iterator[tuple[str, Span, str]]:
    """The DP library release is not pinned to one update rule."""
    if not (pipeline.library or "").startswith("opacus"):
        return
    resolution = resolve_opacus(project, pipeline.path)
    if resolution.pinned:
        return
    span = resolution.span or _anchor(pipeline, "library") or Span(pipeline.path, pipeline.line)
    # the library evidence says how the pipeline's release was decided (e.g. by the API line)
    why = next((e.note for e in pipeline.evidence if e.role == "library"), resolution.reason)
    if pipeline.release is not None:
        yield "DP105", span, f"{why}; still, which release runs is not reproducible"
    else:
        yield "DP105", span, f"{why}: the update rule cannot be known"


def dp106(pipeline: Pipeline, project: Project) -> Iterator[tuple[str, Span, str]]:
    """An SGM-accounted pipeline whose update rule or sampling could not be decided. Only
    evaluated when no other rule fired on the pipeline: those already say what is wrong."""
    undecided = [part for part, kind in (("update rule", pipeline.mechanism),
                                         ("sampling", pipeline.sampling)) if kind == "unknown"]
    library_accounts = (pipeline.library or "").startswith("opacus")
    if not undecided or not (_assumes_sgm(pipeline) or library_accounts):
        return
    reason = next((e for e in pipeline.evidence
                   if e.role == "update" and e.note.startswith("mechanism unknown")), None)
    span = (reason.span if reason else None) or _anchor(pipeline, "update") \
        or Span(pipeline.path, pipeline.line)
    accountant = pipeline.accountant.name if pipeline.accountant.name != "none" else (
        "the library's default accountant")
    why = f" ({reason.note.removeprefix('mechanism unknown: ')})" if reason else ""
    yield "DP106", span, (
        f"dpcheck could not decide the {' or the '.join(undecided)} of this pipeline{why}; "
        f"{accountant} accounts it as SGM with Poisson sampling, which is unverified")


CHECKS: tuple[Check, ...] = (dp101, dp102, dp103, dp104, dp105)
#: Checks evaluated only when none of ``CHECKS`` fired on a pipeline.
FALLBACK_CHECKS: tuple[Check, ...] = (dp106,)


def findings_of(pipeline: Pipeline, project: Project,
                severity: Callable[[str], Severity]) -> Iterator[Finding]:
    """Every finding of one pipeline, with the other sites as evidence."""
    fired = [hit for check in CHECKS for hit in check(pipeline, project)]
    if not fired:
        fired = [hit for check in FALLBACK_CHECKS for hit in check(pipeline, project)]
    for rule, span, message in fired:
        evidence = tuple(e for e in pipeline.evidence if e.span != span)
        yield Finding(
            rule=rule, severity=severity(rule), span=span, message=message,
            pipeline=pipeline.entry, evidence=evidence,
            context=project.source_line(span.path, span.line).strip(),
        )

