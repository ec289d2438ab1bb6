"""The scan: discover -> analyse files (parallel, cached) -> pipelines -> rules -> suppressions.

This module only orchestrates; every stage lives in its own package. Data flows one way, and a
problem in one file (unparsable, undecodable, over its budgets, an analyser bug) never stops the
others: each file's analysis, each pipeline's linking and rules, and each finding's bound are
isolated, and an unexpected exception in one becomes an internal scan error of that file.
Files are read only inside the project (``dpcheck.discover.confine``).
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dpcheck.catalog import Catalog, known_codes_hint, load_catalog, rule_ids, select_rules
from dpcheck.config import Config, load_config
from dpcheck.errors import ConfigError
from dpcheck.discover.commit_pins import history_fingerprint
from dpcheck.discover.confine import ReadRefused, read_resolved
from dpcheck.discover.files import discover_files, link_path, project_root
from dpcheck.discover.installed import find_installed
from dpcheck.discover.pins import Pin
from dpcheck.discover.libraries import DP_LIBRARIES
from dpcheck.errors import internal_message
from dpcheck.linked import Linked, LinkInputs
from dpcheck.model import Finding, ParamValue, Pipeline, ScanError, ScanResult, Span
from dpcheck.parse.analyzer import Analyzer
from dpcheck.parse.budget import FILE_TIME_BUDGET
from dpcheck.parse.cache import CACHE_SETTINGS, AnalysisCache
from dpcheck.parse.notebook import display_text
from dpcheck.parse.source import MAX_FILE_BYTES, blob_id
from dpcheck.progress import ProgressCallback
from dpcheck.project import Project
from dpcheck.suppress import ALWAYS_REPORTED, Suppression, apply_suppressions

if TYPE_CHECKING:
    from dpcheck.discover.facts import ProjectFacts

CACHE_DIRNAME = ".dpcheck_cache"
OUTSIDE_CACHE = "symbolic link; the analysis cache is not used (dpcheck writes nothing through it)"


@dataclass(frozen=True)
class ScanOptions:
    """What the user asked for (CLI flags); merged with the project config by ``settle``."""

    paths: Sequence[Path] = (Path("."),)
    select: Sequence[str] = ()
    ignore: Sequence[str] = ()
    params: Mapping[str, ParamValue] = field(default_factory=dict)
    config_path: Path | None = None
    jobs: int | None = None
    use_cache: bool = True
    cache_dir: Path | None = None
    strict: bool = False
    file_time_budget: float | None = FILE_TIME_BUDGET
    #: Project files (POSIX paths relative to the root) whose import neighbourhood alone is
    #: linked, with every finding of it reported: the re-analysis of an edit (a fix's
    #: verification) links only what the edited files can change, as a named-file scan does.
    linked_around: tuple[str, ...] = ()


@dataclass(frozen=True)
class Settings:
    """Options and config merged: the single source of truth for one scan."""

    options: ScanOptions
    config: Config
    root: Path
    catalog: Catalog
    active_rules: frozenset[str]
    params: Mapping[str, ParamValue]
    strict: bool
    per_file_ignores: Mapping[str, frozenset[str]] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()


def settle(options: ScanOptions) -> Settings:
    """Validate the paths, load the config of the scanned project and merge it with the flags
    (flags win). Raises ``DpcheckError`` (from discovery or config) for a missing path or a bad
    config; a ``per-file-ignores`` code that names no rule is a warning, an error when strict."""
    root = project_root(options.paths)
    config = load_config(options.config_path, root)
    catalog = load_catalog()
    active = select_rules(
        catalog,
        list(options.select) or list(config.select),
        [*config.ignore, *options.ignore],
    )
    strict = options.strict or config.strict
    per_file, warnings = _per_file_ignores(config, catalog, strict)
    return Settings(
        options=options,
        config=config,
        root=root,
        catalog=catalog,
        active_rules=active,
        params={**config.params, **options.params},
        strict=strict,
        per_file_ignores=per_file,
        warnings=warnings,
    )


def _per_file_ignores(
    config: Config, catalog: Catalog, strict: bool
) -> tuple[dict[str, frozenset[str]], tuple[str, ...]]:
    """``per-file-ignores`` as rule ids per glob, and a warning per code that names no rule."""
    resolved: dict[str, frozenset[str]] = {}
    problems: list[str] = []
    for glob, codes in config.per_file_ignores.items():
        resolved[glob] = frozenset(i for code in codes for i in rule_ids(catalog, code))
        problems += [
            f"{config.source}: `per-file-ignores` for {glob!r}: {code!r} names no rule and "
            f"ignores nothing ({known_codes_hint(catalog)})"
            for code in codes
            if not rule_ids(catalog, code)
        ]
    if strict and problems:
        raise ConfigError("; ".join(problems) + " (an error with --strict)")
    return resolved, tuple(problems)


def _read(path: Path, root: Path) -> bytes | OSError:
    """A project file's bytes (at most ``MAX_FILE_BYTES + 1``: more makes it too large anyway),
    or why it was not read (``ReadRefused`` for a link out of the project or a special file)."""
    return _read_resolved(os.path.realpath(path), os.path.realpath(root))


def _read_resolved(real: str, root_real: str) -> bytes | OSError:
    """``_read`` of a path and root already resolved."""
    try:
        return read_resolved(real, root_real, MAX_FILE_BYTES)
    except OSError as exc:
        return exc


def _read_error(rel: str, error: OSError) -> ScanError:
    if isinstance(error, ReadRefused):
        return ScanError(rel, str(error.strerror))
    return ScanError(rel, f"cannot read file: {error.strerror or error}")


def default_cache_dir(options: ScanOptions, root: Path) -> Path | None:
    """The cache directory a scan of ``root`` uses: ``--cache-dir`` as given, else
    ``ROOT/.dpcheck_cache`` unless that is a symbolic link (a checkout must not make dpcheck
    write elsewhere); None when the cache is off or refused."""
    if not options.use_cache:
        return None
    if options.cache_dir is not None:
        return options.cache_dir
    default = root / CACHE_DIRNAME
    return None if default.is_symlink() else default


def _relative(path: Path, root: Path) -> str:
    """The report path of ``path``: relative to the root (a link inside the project named by
    its target, the file read), else the path as named (never a link's target outside)."""
    return _located(path, root, os.path.realpath(root))[0]


def _located(path: Path, root: Path, root_real: str) -> tuple[str, str]:
    """The report path of ``path`` (``_relative``) and its real path, resolving it once: a scan
    places and reads every file of the project by these."""
    real = os.path.realpath(path)
    if Path(real).is_relative_to(root_real):
        return Path(real).relative_to(root_real).as_posix(), real
    return link_path(path, root), real


def _facts_with_overrides(facts: ProjectFacts, versions: Mapping[str, str], where: str) -> ProjectFacts:
    """Config ``dp-library-versions`` replace the pins read from dependency files."""
    if not versions:
        return facts
    overridden = {
        lib: Pin(lib, f"=={ver}", ver, Span(where, 1), f"{lib}=={ver} (dp-library-versions)")
        for lib, ver in versions.items()
    }
    kept = tuple(p for p in facts.pins if p.library not in overridden)
    return replace(facts, pins=kept + tuple(overridden.values()))


def _per_file_ignored(finding: Finding, per_file_ignores: Mapping[str, frozenset[str]]) -> bool:
    return any(
        finding.rule in rules and fnmatch.fnmatchcase(finding.span.path, glob)
        for glob, rules in per_file_ignores.items()
    )


def _context_key(
    settings: Settings,
    paths: Sequence[str],
    dependency_files: Sequence[Path],
    reported: frozenset[str] | None,
) -> str:
    """A digest of every input of the linking stage but the files' contents: the paths, the
    dependency files, the DP libraries installed, the parameter overrides and version pins, the
    Opacus history clone used to place commit pins, and the reported subset (the code itself
    is part of the cache namespace)."""
    root = settings.root
    digest = hashlib.sha256()

    def add(text: str) -> None:
        digest.update(text.encode("utf-8", "surrogatepass"))  # file names need not be UTF-8

    for rel in sorted(paths):
        add(f"path:{rel}\n")
    for path in dependency_files:
        data = _read(path, root)
        blob = blob_id(data) if isinstance(data, bytes) else f"unreadable:{data}"
        add(f"dep:{_relative(path, root)}:{blob}\n")
    for library in sorted(DP_LIBRARIES):
        add(f"lib:{library}:{find_installed(root, library)}\n")
    for name, value in sorted(settings.params.items()):
        add(f"param:{name}:{value.value}\n")
    for library, version in sorted(settings.config.dp_library_versions.items()):
        add(f"pin:{library}:{version}\n")
    add(f"opacus-history:{history_fingerprint()}\n")
    add(f"reported:{sorted(reported) if reported is not None else None}\n")
    add(f"linked-around:{sorted(settings.options.linked_around)}")
    return digest.hexdigest()


def _link(
    settings: Settings,
    analyzer: Analyzer,
    dependency_files: Sequence[Path],
    reported: frozenset[str] | None,
    load_source: Callable[[str], str | None],
) -> tuple[Linked, frozenset[str], dict[str, str]]:
    """Facts -> project view -> pipelines -> rule findings, DP code that formed no pipeline ->
    DP107, file rules; and the files linking read. An internal error is reported, never raised:
    one pipeline's linking or rules cost that pipeline only, and a failure of the whole stage
    keeps the per-file results. The data files linking read come with their content keys."""
    from dpcheck.discover.facts import collect_facts
    from dpcheck.pipelines import link_project
    from dpcheck.rules import check_files, check_unlinked, evaluate, once_per_site

    config = settings.config
    facts = collect_facts(settings.root, dependency_files)
    facts = _facts_with_overrides(facts, config.dp_library_versions, config.source or "config")
    errors = [ScanError(_relative(p, settings.root), msg) for p, msg in facts.problems]
    project = Project(
        root=settings.root,
        facts=facts,
        paths=tuple(sorted(analyzer.contents)),
        overrides=settings.params,
        candidates=frozenset(p for p, a in analyzer.analyses.items() if a.candidate),
        _load=analyzer.summary,
        _sources=load_source,
        reported=reported,
    )
    try:
        linking = link_project(project)
        findings: list[Finding] = list(check_unlinked(linking.unlinked, project))
    except Exception as exc:  # noqa: BLE001 - keep per-file results even if linking fails
        message = internal_message("linking pipelines", exc)
        errors.append(ScanError(".", message, internal=True))
        linking, findings = None, []
    errors.extend(ScanError(path, message, internal=True) for path, message in project.failures)
    pipelines = linking.pipelines if linking is not None else []
    for pipeline in pipelines:
        try:
            findings.extend(evaluate([pipeline], project))
        except Exception as exc:  # noqa: BLE001 - one pipeline's rule bug costs that pipeline
            stage = f"applying the rules to pipeline {pipeline.entry}"
            errors.append(ScanError(pipeline.path, internal_message(stage, exc), internal=True))
    shown = tuple(p for p in pipelines if project.is_reported(p.path))
    read = project.files_read()
    per_file = check_files(analyzer.analyses.values(), project.is_reported, project.source_line)
    data = {rel: _content_key(settings.root, rel) for rel in project.data_read()}
    return Linked(shown, tuple(once_per_site(findings)), tuple(per_file), tuple(errors)), read, data


def _content_key(root: Path, rel: str) -> str:
    """The content key of the project data file ``rel`` (a configuration file linking read):
    its blob id, or why it is not read (missing, refused), so that adding it counts as a change."""
    data = _read(root / rel, root)
    return blob_id(data) if isinstance(data, bytes) else f"unreadable:{type(data).__name__}"


def _relinked(
    entry: dict[str, Any], changed: frozenset[str], analyzer: Analyzer,
    is_reported: Callable[[str], bool], load_source: Callable[[str], str | None],
) -> Linked:
    """A cached linking result for a project whose ``changed`` files linking never read: the
    same pipelines and rule findings, the file rules run again on the changed files."""
    from dpcheck.rules import check_files

    def source_line(rel: str, line: int) -> str:
        lines = (load_source(rel) or "").splitlines()
        return lines[line - 1] if 0 < line <= len(lines) else ""

    cached = Linked.from_json(entry["linked"])
    kept = tuple(f for f in cached.per_file if f.span.path not in changed)
    fresh = check_files([analyzer.analyses[rel] for rel in sorted(changed)], is_reported, source_line)
    return replace(cached, per_file=(*kept, *fresh))


def _with_bounds(
    findings: Sequence[Finding],
    pipelines: Sequence[Pipeline],
    stored: dict[str, Any],
    cache: AnalysisCache,
    errors: list[ScanError],
) -> list[Finding]:
    """Findings with their corrected bounds, reusing those ``stored`` with the project's cache
    entry (by fingerprint) and storing the new ones there; a finding new to the entry takes its
    bound from the cache's bounds by parameter set where it can. The bound engine is imported
    only when an entry lacks a finding, and the numeric engine only when a bound is computed, so
    a cached scan pays nothing for them. A bound that fails (a dpcheck bug) leaves its finding
    without one, adds an internal error to ``errors`` and is not stored."""
    missing = [f for f in findings if _bound_key(f) not in stored]
    failed: dict[str, Finding] = {}
    if missing:
        from dpcheck.bounds.attach import attach_bounds

        for finding in missing:
            try:
                bounded = attach_bounds([finding], pipelines, cache.bound_effects)[0]
                stored[_bound_key(finding)] = bounded.to_json()
            except Exception as exc:  # noqa: BLE001 - the finding is kept, without its bound
                failed[_bound_key(finding)] = finding
                stage = f"bounding {finding.rule} at line {finding.span.line}"
                errors.append(ScanError(finding.span.path, internal_message(stage, exc), True))
    return [
        failed.get(_bound_key(f)) or Finding.from_json(stored[_bound_key(f)]) for f in findings
    ]


def _bound_key(finding: Finding) -> str:
    return f"{finding.fingerprint}:{finding.span.line}:{finding.span.column}"


def run(settings: Settings, progress: ProgressCallback | None = None) -> ScanResult:
    """Scan with settled settings and return everything found; ``progress``, if given, hears
    ``("analysing files", done, total)`` as files are analysed."""
    options, config, root = settings.options, settings.config, settings.root
    discovered = discover_files(options.paths, include=config.include, exclude=config.exclude)
    if all(p.is_file() for p in options.paths):
        # pre-commit passes a few files: resolve pipelines across the whole project, report on those
        project_files = discover_files([root], include=config.include, exclude=config.exclude)
        reported: frozenset[str] | None = frozenset(_relative(p, root) for p in discovered.files)
    else:
        project_files, reported = discovered, None

    def is_reported(rel: str) -> bool:
        return reported is None or rel in reported

    result = ScanResult()
    result.errors.extend(ScanError(link_path(p, root), msg) for p, msg in discovered.problems)
    contents: dict[str, bytes] = {}
    root_real = os.path.realpath(root)
    for path in project_files.files:
        rel, real = _located(path, root, root_real)
        data = _read_resolved(real, root_real)
        if isinstance(data, OSError):
            result.errors.append(_read_error(rel, data))
        else:
            contents[rel] = data

    def load_source(rel: str) -> str | None:
        data = contents.get(rel)
        return None if data is None else display_text(rel, data)

    cache_dir = default_cache_dir(options, root)
    if options.use_cache and cache_dir is None:
        result.errors.append(ScanError(CACHE_DIRNAME, OUTSIDE_CACHE))
    cache = AnalysisCache(cache_dir, CACHE_SETTINGS)
    jobs = options.jobs or os.cpu_count() or 1
    analyzer = Analyzer(cache, jobs, contents, options.file_time_budget)
    around = reported if reported is not None else \
        (frozenset(options.linked_around) & contents.keys()) or None
    if around is not None:
        from dpcheck.sites.modules import import_neighbourhood

        analyzer.restrict(import_neighbourhood(sorted(around), contents, analyzer.imports))
    analyses = analyzer.run(progress)

    inputs = LinkInputs(
        _context_key(settings, sorted(analyzer.keys), project_files.dependency_files, reported),
        dict(analyzer.keys),
        frozenset(p for p, a in analyses.items() if a.candidate),
    )
    entry = cache.project(inputs.key)
    if entry is not None and not _data_unchanged(entry, root):
        entry = None
    fresh = entry is None
    if entry is None:
        entry = _reusable(cache, inputs, analyzer, root, is_reported, load_source)
    if entry is None:
        linked, read, data = _link(settings, analyzer, project_files.dependency_files, reported,
                                   load_source)
        entry = {"linked": linked.to_json(), "bounds": {},
                 "inputs": replace(inputs, read=read, data=data).to_json()}
    else:
        linked = Linked.from_json(entry["linked"])
    result.errors.extend(linked.errors)

    for analysis in analyses.values():
        if analysis.internal_error:
            result.errors.append(ScanError(analysis.path, analysis.internal_error, internal=True))
    findings = [
        f
        for f in linked.all_findings
        if f.rule in settings.active_rules and not _per_file_ignored(f, settings.per_file_ignores)
    ]
    suppressions: dict[str, Sequence[Suppression]] = {
        p: a.suppressions for p, a in analyses.items() if a.suppressions
    }
    outcome = apply_suppressions(
        findings,
        suppressions,
        settings.active_rules,
        lambda code: rule_ids(settings.catalog, code),
    )
    result.pipelines = sorted(linked.pipelines, key=lambda p: (p.path, p.line, p.entry))
    known_bounds = len(entry["bounds"])
    bounded = _with_bounds(outcome.kept, linked.pipelines, entry["bounds"], cache, result.errors)
    result.findings = sorted(bounded, key=Finding.sort_key)
    changed = fresh or len(entry["bounds"]) != known_bounds  # an unchanged entry is not rewritten
    cacheable = all(a.cacheable for a in analyses.values())  # a time-budget skip depends on the load
    if changed and cacheable:
        cache.put_project(inputs.key, entry, inputs.context)
    cache.save()
    linked_key = LinkInputs.from_json(entry["inputs"]).linked_key
    result.cache_key = linked_key if cache_dir is not None and cacheable else None
    result.suppressed = outcome.suppressed
    result.suppression_issues = [
        i
        for i in outcome.issues
        if is_reported(i.span.path) and (settings.strict or i.kind in ALWAYS_REPORTED)
    ]
    # every file the report speaks for: the scanned source files that were read and any
    # dependency file (requirements.txt, environment.yml ...) that carries a finding
    scanned = {rel for rel in contents if is_reported(rel)}
    result.files_scanned = len(scanned | {f.span.path for f in result.findings})
    result.warnings = [*settings.warnings, *_nothing_scanned(result, options.paths, config)]
    result.cells = {p: a.layout for p, a in analyses.items() if a.layout is not None}
    result.errors = sorted(dict.fromkeys(result.errors), key=lambda e: (e.path, e.message))
    return result


def _reusable(
    cache: AnalysisCache, inputs: LinkInputs, analyzer: Analyzer, root: Path,
    is_reported: Callable[[str], bool], load_source: Callable[[str], str | None],
) -> dict[str, Any] | None:
    """A new cache entry made from the most recent cached linking that still holds for
    ``inputs`` (``LinkInputs.changed_unread``, its data files unchanged), or None."""
    for entry in cache.recent_projects(inputs.context):
        stored = LinkInputs.from_json(entry["inputs"])
        changed = stored.changed_unread(inputs)
        if changed is not None and _data_unchanged(entry, root):
            linked = _relinked(entry, changed, analyzer, is_reported, load_source)
            return {"linked": linked.to_json(), "bounds": dict(entry["bounds"]),
                    "inputs": replace(inputs, read=stored.read, data=stored.data).to_json()}
    return None


def _data_unchanged(entry: dict[str, Any], root: Path) -> bool:
    """Whether the data files a cached linking read (``LinkInputs.data``) are unchanged."""
    return LinkInputs.from_json(entry["inputs"]).data_unchanged(lambda rel: _content_key(root, rel))


def _nothing_scanned(result: ScanResult, paths: Sequence[Path], config: Config) -> list[str]:
    """A warning when the scan looked at no file at all: a "no findings" would be empty."""
    if result.files_scanned or result.errors:
        return []
    where = " ".join(str(p) for p in paths) or "."
    globs = " (check `include`/`exclude` in the configuration)" if config.include or config.exclude else ""
    return [f"nothing was scanned: no Python file found in {where}{globs}"]


def scan(options: ScanOptions) -> ScanResult:
    """Settle the options and run the scan (the programmatic entry point)."""
    return run(settle(options))
