"""Where a pipeline rule anchors its finding: the evidence of a role, on the user's side."""

from __future__ import annotations

from dpcheck.model import Pipeline, Role, Span


def anchor(pipeline: Pipeline, role: Role) -> Span | None:
    """The span of the first ``role`` evidence of the pipeline."""
    return next((e.span for e in pipeline.evidence if e.role == role), None)


def users_side(pipeline: Pipeline, role: Role) -> Span | None:
    """The first ``role`` evidence in the entry's own file, else the first one (the builder
    lists the user's hand-over before the library's site): a finding belongs where the user can
    act on it, not in library code the pipeline reaches."""
    spans = [e.span for e in pipeline.evidence if e.role == role]
    return next((s for s in spans if s.path == pipeline.path), spans[0] if spans else None)


def entry(pipeline: Pipeline) -> Span:
    """The pipeline's own line: the anchor of last resort."""
    return Span(pipeline.path, pipeline.line)
