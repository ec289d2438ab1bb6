"""Build a real ``Project`` from files written to a temporary folder: real parsing, real
``summarize_source`` summaries, real dependency-file discovery (no engine, no cache)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from textwrap import dedent

from dpcheck.discover.facts import collect_facts
from dpcheck.model import ParamValue, Pipeline
from dpcheck.pipelines import build_pipelines
from dpcheck.project import Project
from dpcheck.sites import summarize_source

DEPENDENCY_FILES = ("requirements.txt", "pyproject.toml", "environment.yml", "setup.cfg",
                    "setup.py")


def make_project(
    root: Path,
    files: Mapping[str, str],
    overrides: Mapping[str, ParamValue] | None = None,
    reported: frozenset[str] | None = None,
) -> Project:
    """Write ``files`` (relative path -> text, dedented) under ``root`` and view them as a project."""
    sources: dict[str, str] = {}
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(dedent(text).lstrip("\n"), encoding="utf-8")
        if relative.endswith(".py"):
            sources[relative] = path.read_text(encoding="utf-8")
    dependency_files = [root / name for name in files if Path(name).name in DEPENDENCY_FILES]
    facts = collect_facts(root, dependency_files)

    def load(relative: str) -> dict | None:
        summary = summarize_source(sources[relative], relative)
        return None if "unsupported" in summary else summary

    return Project(
        root=root,
        facts=facts,
        paths=tuple(sorted(sources)),
        overrides=dict(overrides or {}),
        candidates=frozenset(sources),
        _load=load,
        _sources=sources.get,
        reported=reported,
    )


def pipelines_of(root: Path, files: Mapping[str, str], **kwargs: object) -> list[Pipeline]:
    """The pipelines dpcheck builds for the project made of ``files``."""
    return build_pipelines(make_project(root, files, **kwargs))  # type: ignore[arg-type]
