"""Run the registered rules: pipeline rules over classified pipelines, file rules over each
file's own analysis, unlinked-code rules over the DP code no pipeline took. Pure: inputs in,
findings out, only for files the scan reports on.

A finding takes its id and severity from the catalog, its span and message from the rule's hit,
and the pipeline's other sites as evidence.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence

from dpcheck.model import Finding, Pipeline, Role, UnlinkedCode
from dpcheck.parse.analysis import FileAnalysis
from dpcheck.project import Project
from dpcheck.rules.registry import Registry, registry
from dpcheck.rules.rule import Hit, PipelineRule


def evaluate(pipelines: Sequence[Pipeline], project: Project,
             rules: Registry | None = None) -> list[Finding]:
    """Every pipeline-rule finding of ``pipelines`` in a file ``project`` reports on, one per
    rule, place and pipeline, sorted by path, line and rule."""
    rules = rules or registry()
    found: dict[tuple[str, str, int, str | None], Finding] = {}
    for pipeline in pipelines:
        for finding in _findings_of(pipeline, project, rules):
            if project.is_reported(finding.span.path):
                key = (finding.rule, finding.span.path, finding.span.line, finding.pipeline)
                found.setdefault(key, finding)
    return sorted(found.values(), key=Finding.sort_key)


def once_per_site(findings: Iterable[Finding], rules: Registry | None = None) -> list[Finding]:
    """``findings`` with each site fact kept once: a finding of a ``site_fact`` rule (the
    unpinned requirement of a helper two scripts import) with the same severity, place and
    message as an earlier one says nothing new, and is left out; the kept one is the first
    entry's. Findings of other rules are per pipeline (each with its entry's parameters and
    bound), and findings that differ in what they say are all kept."""
    rules = rules or registry()
    facts = {rule.id for rule in rules.pipeline_rules if rule.site_fact}
    seen: set[tuple[str, str, str, int, int, str]] = set()
    kept: list[Finding] = []
    for finding in findings:
        key = (finding.rule, finding.severity.value, finding.span.path, finding.span.line,
               finding.span.column, finding.message)
        if finding.rule not in facts or key not in seen:
            seen.add(key)
            kept.append(finding)
    return kept


def check_files(analyses: Iterable[FileAnalysis], is_reported: Callable[[str], bool],
                source_line: Callable[[str, int], str],
                rules: Registry | None = None) -> list[Finding]:
    """Every file-rule finding (DP001) of the reported files among ``analyses``: a file's own
    analysis and its text decide them, nothing else of the project."""
    rules = rules or registry()
    return [
        Finding(rule=rule.id, severity=rules.severity(rule.id), span=hit.span,
                message=hit.message(),
                context=source_line(hit.span.path, hit.span.line).strip()
                or hit.fallback_context())
        for analysis in analyses if is_reported(analysis.path)
        for rule in rules.file_rules
        for hit in rule.check(analysis)
    ]


def check_unlinked(unlinked: Sequence[UnlinkedCode], project: Project,
                   rules: Registry | None = None) -> list[Finding]:
    """Every unlinked-code finding (DP107) in the reported files, with the markers it rests
    on as evidence."""
    rules = rules or registry()
    found = [
        Finding(rule=rule.id, severity=rules.severity(rule.id), span=hit.span,
                message=hit.message(), evidence=hit.evidence(),
                context=project.source_line(hit.span.path, hit.span.line).strip())
        for rule in rules.unlinked_rules
        for hit in rule.check(tuple(unlinked), project)
        if project.is_reported(hit.span.path)
    ]
    return sorted(found, key=Finding.sort_key)


def _hits(rules: Iterable[PipelineRule], pipeline: Pipeline,
          project: Project) -> list[tuple[PipelineRule, Hit]]:
    return [(rule, hit) for rule in rules for hit in rule.check(pipeline, project)]


def _findings_of(pipeline: Pipeline, project: Project, rules: Registry) -> Iterator[Finding]:
    """The findings of one pipeline; fallback rules only when no other rule fired."""
    fired = _hits((r for r in rules.pipeline_rules if not r.fallback), pipeline, project)
    if not fired:
        fired = _hits((r for r in rules.pipeline_rules if r.fallback), pipeline, project)
    for rule, hit in fired:
        yield Finding(
            rule=rule.id, severity=hit.severity(rules.severity(rule.id)), span=hit.span,
            message=hit.message(), pipeline=pipeline.entry,
            # the other sites; the library evidence stays even on the finding's own line: it
            # says how the release was decided, which DP105's short message leaves out
            evidence=tuple(e for e in pipeline.evidence
                           if e.span != hit.span or e.role == Role.LIBRARY),
            context=project.source_line(hit.span.path, hit.span.line).strip(),
        )
