"""Which project file an import names, and which project files a set of files is linked to.

An import is resolved the way the module would be found when the project runs from its own
folders: a relative import from the importer's package, an absolute one beside the importer and
then in each folder above it (a sub-project's root is on its own ``sys.path``), and at each of
those levels in its ``src/`` folder (a package in a ``src`` layout is installed, so it is
imported by its package name from anywhere: ``src/dp_transformers`` as ``dp_transformers``).
Imports that name no project file are library imports.

``import_neighbourhood`` is what a scan of a few named files (a pre-commit hook) links: the
named files, the project files that import them (entry scripts reach the named module through
them), and the project files those import (where parameters and helpers are defined). The scan
of the whole project links every file; the neighbourhood gives the same pipelines for the
named files as long as an entry script is at most ``REVERSE_HOPS`` imports away from them.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable, Mapping

#: How many imports away from a named file an importing entry script is still found.
REVERSE_HOPS = 2
#: How many files the imports of the linked files add at most (nearest first): a training
#: script that imports a package importing everything does not pull in the whole tree.
MAX_FORWARD_FILES = 64


def resolve_module(importer: str, dotted: str, paths: frozenset[str]) -> tuple[str, str] | None:
    """The project file (of ``paths``) a dotted import target read in ``importer`` lives in,
    and the remaining attribute path; None for a module outside the project."""
    level = len(dotted) - len(dotted.lstrip("."))
    parts = dotted.lstrip(".").split(".") if dotted.strip(".") else []
    here = posixpath.dirname(importer)
    if level:
        for _ in range(level - 1):
            here = posixpath.dirname(here)
        bases = [here]
    else:
        bases = [here]
        while here:
            here = posixpath.dirname(here)
            bases.append(here)
    if not level:
        bases = [folder for base in bases for folder in (base, posixpath.join(base, "src"))]
    for base in bases:
        for cut in range(len(parts), 0, -1):
            stem = posixpath.join(base, *parts[:cut]) if base else posixpath.join(*parts[:cut])
            rest = ".".join(parts[cut:])
            for candidate in (f"{stem}.py", f"{stem}/__init__.py"):
                if candidate in paths:
                    return candidate, rest
    return None


def import_neighbourhood(
    named: Iterable[str],
    contents: Mapping[str, bytes],
    imports_of: Callable[[str], Iterable[str]],
) -> frozenset[str]:
    """The project files a scan of the ``named`` files links (module docstring). ``contents``
    are every project file's bytes (a cheap text search picks which files may import a named
    one, and only those are parsed); ``imports_of(path)`` gives the dotted targets a file
    imports."""
    paths = frozenset(contents)
    linked = {path for path in named if path in paths}
    frontier = set(linked)
    for _ in range(REVERSE_HOPS):
        frontier = {importer for target in frontier
                    for importer in _importers(target, contents, imports_of, paths)} - linked
        linked |= frontier
    frontier = set(linked)
    added = 0
    while frontier and added < MAX_FORWARD_FILES:
        found = sorted({located[0] for path in frontier for dotted in imports_of(path)
                        if (located := resolve_module(path, dotted, paths)) is not None} - linked)
        found = found[:MAX_FORWARD_FILES - added]
        added += len(found)
        linked.update(found)
        frontier = set(found)
    return frozenset(linked)


def _importers(
    target: str,
    contents: Mapping[str, bytes],
    imports_of: Callable[[str], Iterable[str]],
    paths: frozenset[str],
) -> set[str]:
    """The project files that import ``target`` (or, notebooks, ``%run`` it): those whose text
    names its module in an import statement, confirmed by resolving their imports."""
    stem = posixpath.basename(posixpath.dirname(target)) if target.endswith("/__init__.py") \
        else posixpath.basename(target).removesuffix(".py")
    if not stem:
        return set()
    word = stem.encode()
    mention = re.compile(rb"(?:\b(?:import|from)\b|%run\b)(?:[^\n()]|\([^)]*\))*\b"
                         + re.escape(word) + rb"\b")
    # a substring test first: it rules out most files before the regular expression runs
    return {path for path, data in contents.items()
            if path != target and word in data and mention.search(data) is not None
            and any((resolve_module(path, dotted, paths) or ("", ""))[0] == target
                    for dotted in imports_of(path))}
