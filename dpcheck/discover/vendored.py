"""DP libraries bundled inside the scanned project (a vendored copy or a fork installed with
``pip install -e ./opacus``), found as files and never imported.

A bundled library is a sub-folder of the project that holds a dependency file (``setup.py``,
``pyproject.toml``, ...) next to the library's importable package (``opacus/setup.py`` +
``opacus/opacus/__init__.py``). Its version is the ``__version__`` literal of the package's
``version.py`` or ``__init__.py``, read with ``ast``. Such a folder is the library, not user
code: its examples are no user pipelines and its dependency files are the library's own, not the
project's pins.

When the project *is* the library (its root holds the dependency file next to the package: a
scan of the library's own repository), the package folder alone is the bundled library: the
tutorials and research scripts beside it import the library as any user does, and are judged
as its users; the root's dependency files stay the project's.

The libraries looked for are the DP libraries whose installed source dpcheck reads
(``installed.IMPORT_NAMES``) and every library of the DP-library table
(``dpcheck/data/dp_libraries.json``): a library that exists only for differential privacy is
that library wherever its package is found, whether or not dpcheck reads its releases.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

from dpcheck.discover.confine import is_inside, read_inside
from packaging.utils import canonicalize_name

from dpcheck.discover.installed import IMPORT_NAMES, InstalledLibrary
from dpcheck.parse.source import MAX_FILE_BYTES
from dpcheck.pipelines.dp_libraries import dp_libraries

_VERSION_FILES = ("version.py", "__init__.py")


def find_bundled(root: Path, dependency_files: Iterable[Path]) -> tuple[InstalledLibrary, ...]:
    """Each DP library bundled in a folder of ``root`` that holds one of ``dependency_files``,
    with its version (None when no literal ``__version__`` is found) and ``distribution`` set to
    that folder, or to the package itself when the folder is the root (module docstring)."""
    # a sub-folder with its own dependency file is the more specific answer: the root comes last
    folders = sorted({f.parent for f in dependency_files},
                     key=lambda folder: (folder.resolve() == root.resolve(), str(folder)))
    found: dict[str, InstalledLibrary] = {}
    for folder in folders:
        at_root = folder.resolve() == root.resolve()
        for library, package in _packages().items():
            source = folder / package
            if library not in found and (source / "__init__.py").is_file() \
                    and is_inside(source, root):
                found[library] = InstalledLibrary(library, _version(source, root), source,
                                                  source if at_root else folder)
    return tuple(found.values())


def _packages() -> dict[str, str]:
    """Canonical library name -> the package folder (relative POSIX path) of every DP library
    looked for (module docstring)."""
    packages = dict(IMPORT_NAMES)
    for module in dp_libraries().libraries:
        package = module.replace(".", "/")
        if package not in packages.values():
            packages[canonicalize_name(module)] = package
    return packages


def _version(package: Path, root: Path) -> str | None:
    """The string assigned to ``__version__`` in the package's version file, or None. Only a
    regular file inside the project is read."""
    for name in _VERSION_FILES:
        path = package / name
        if not path.is_file():
            continue
        try:
            text = read_inside(path, root, MAX_FILE_BYTES).decode("utf-8", errors="replace")
            tree = ast.parse(text)
        except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        for node in tree.body:
            if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
                    and isinstance(node.value.value, str)
                    and any(isinstance(t, ast.Name) and t.id == "__version__"
                            for t in node.targets)):
                return node.value.value
    return None
