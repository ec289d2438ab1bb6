"""Which files a scan reads: Python sources, Jupyter notebooks and dependency files, git-aware.

Inside a git work tree the listing is git's own (tracked files plus untracked files that no
ignore rule hides); outside one, or in a folder git ignores (a site-packages inside a pyenv
checkout), it is a directory walk that skips what is never project code (hidden directories,
virtualenvs, ``site-packages``, ``node_modules``, ``__pycache__``, build outputs). Untracked
files in a git work tree get the same directory filter: a virtualenv someone forgot to ignore is
still not project code, while a tracked file is, wherever it lives.

Config globs (``include``/``exclude``) are gitignore-style patterns relative to the project root
(``tests/**``, ``**/vendor/*.py``, ``build``). ``exclude`` applies to every file, explicit ones
and dependency files included; a non-empty ``include`` restricts the Python files only, since
dependency files describe the project rather than being scanned code. Problems met on the way
(unreadable directories, broken symbolic links, symbolic link loops, paths outside the root)
are collected, never fatal.

Nothing outside the project is listed: a symbolic link (to a file or a directory) whose real
path leaves the project root is reported as skipped under its own path and never followed, and a
device, FIFO or socket carrying a Python or dependency-file name is reported and never opened
(``dpcheck.discover.confine`` holds the rule every reader applies). Links that stay inside are
followed once.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from dpcheck.discover.confine import NOT_REGULAR, OUTSIDE, OUTSIDE_DIRECTORY, is_inside
from dpcheck.errors import DpcheckError
from dpcheck.parse.notebook import NOTEBOOK_SUFFIX

if TYPE_CHECKING:
    import git

PYTHON_SUFFIX = ".py"
#: The files read as code: Python modules and Jupyter notebooks (their code cells).
SOURCE_SUFFIXES: tuple[str, ...] = (PYTHON_SUFFIX, NOTEBOOK_SUFFIX)
DEPENDENCY_FILE_NAMES: frozenset[str] = frozenset(
    {"pyproject.toml", "setup.py", "setup.cfg", "environment.yml", "environment.yaml", "Pipfile"}
)
SKIPPED_DIR_NAMES: frozenset[str] = frozenset(
    {"venv", "env", "site-packages", "node_modules", "__pycache__", "build", "dist"}
)
_VIRTUALENV_MARKERS: tuple[str, ...] = ("pyvenv.cfg", "conda-meta")

Problem = tuple[Path, str]


@dataclass(frozen=True)
class DiscoveredFiles:
    """The outcome of discovery. Paths are absolute; ``files`` and ``dependency_files`` sorted."""

    root: Path
    files: tuple[Path, ...]
    dependency_files: tuple[Path, ...]
    problems: tuple[Problem, ...]


def relative_path(path: Path, root: Path) -> str | None:
    """``path`` as the POSIX path relative to ``root`` that spans and reports use, or None when
    it lies outside ``root``."""
    try:
        return Path(os.path.abspath(path)).resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return None


def link_path(path: Path, root: Path) -> str:
    """The path a report gives a problem met at ``path``: relative to ``root`` (absolute when
    outside it) with the last component kept as named, so a symbolic link is named by its own
    path, never by its target's."""
    lexical = _absolute(path)
    try:
        return lexical.relative_to(root.resolve()).as_posix()
    except ValueError:
        return lexical.as_posix()


def is_dependency_file(relative: PurePosixPath) -> bool:
    """Whether a file (path relative to the root) declares dependencies: ``requirements*.txt``,
    a ``.txt`` inside a ``requirements/`` folder, pyproject, setup, environment or Pipfile."""
    name = relative.name
    if name in DEPENDENCY_FILE_NAMES:
        return True
    if not name.endswith(".txt"):
        return False
    return name.startswith("requirements") or relative.parent.name == "requirements"


def is_skipped_dir(path: Path) -> bool:
    """Whether a directory found by a walk is never project code (hidden, a virtualenv or conda
    environment, installed packages, caches, build outputs)."""
    name = path.name
    if name.startswith(".") or name in SKIPPED_DIR_NAMES or name.endswith(".egg-info"):
        return True
    return any((path / marker).exists() for marker in _VIRTUALENV_MARKERS)


def project_root(paths: Sequence[Path]) -> Path:
    """The root ``discover_files`` would use for ``paths``, without listing any file. Raises
    ``DpcheckError`` naming a path that does not exist."""
    return _project_root(_existing(paths))[1]


def _existing(paths: Sequence[Path]) -> list[Path]:
    given = list(paths) or [Path(".")]
    targets = [_absolute(p) for p in given]
    for name, target in zip(given, targets):
        if not target.exists():
            raise DpcheckError(f"{name}: no such file or directory")
    return targets


def discover_files(
    paths: Sequence[Path], include: Sequence[str] = (), exclude: Sequence[str] = ()
) -> DiscoveredFiles:
    """List the files to scan under ``paths`` (the current directory when empty): Python files,
    notebooks (``files``) and dependency files.

    The root is the git work-tree top when the first path lies in a git work tree, else the
    deepest folder holding every path (for one path: itself if a directory, else its parent).
    Files named explicitly are always listed (subject to the config globs). Raises
    ``DpcheckError`` naming a path that does not exist.
    """
    targets = _existing(paths)
    repo, root = _project_root(targets)

    problems: list[Problem] = []
    found: set[Path] = set()
    dependencies: set[Path] = set()
    for target in targets:
        is_dir = target.is_dir()
        if is_dir:
            target = target.resolve()
        if not target.is_relative_to(root):
            problems.append((target, f"outside the project root {root}; not scanned"))
            continue
        if is_dir:
            use_git = repo is not None and not _ignored(repo, root, target)
            listed = (
                _git_listing(repo, root, target, problems)
                if use_git
                else _walk(target, root, problems)
            )
        elif problem := _file_problem(target, root):
            problems.append((target, problem))
            listed = []
        else:
            listed = [target]
        above = _dependency_files_above(root, target if is_dir else target.parent, problems)
        dependencies.update(above)
        for path in listed:
            if _wanted(path.name) and is_dependency_file(PurePosixPath(path.relative_to(root))):
                dependencies.add(path)
                if path.suffix == PYTHON_SUFFIX:
                    found.add(path)
            elif path.suffix in SOURCE_SUFFIXES or path == target:
                found.add(path)

    excluded = _matcher(exclude) if exclude else _match_nothing
    included = _matcher(include) if include else _match_everything
    relative = {p: _relative_to_root(p, root) for p in found | dependencies}
    files = sorted(p for p in found if included(relative[p]) and not excluded(relative[p]))
    dependency_files = sorted(
        p for p in dependencies if p.is_file() and not excluded(relative[p])
    )
    unique = tuple(dict.fromkeys(problems))
    return DiscoveredFiles(root, tuple(files), tuple(dependency_files), unique)


def _project_root(targets: Sequence[Path]) -> tuple[git.Repo | None, Path]:
    """The git repository holding the first target (if any) and the project root."""
    folders = [(t if t.is_dir() else t.parent).resolve() for t in targets]
    repo = _work_tree(folders[0])
    if repo is not None:
        return repo, Path(str(repo.working_tree_dir)).resolve()
    return None, Path(os.path.commonpath(folders))


def _absolute(path: Path) -> Path:
    """An absolute, normalised path whose directories are resolved but whose last component is
    kept as named, so an explicitly named symbolic link stays where the user put it."""
    absolute = Path(os.path.abspath(path))
    return absolute.parent.resolve() / absolute.name if absolute.name else absolute


def _relative_to_root(path: Path, root: Path) -> str:
    return path.relative_to(root).as_posix()


def _work_tree(directory: Path) -> git.Repo | None:
    """The git repository whose work tree holds ``directory``, or None; also None when git
    ignores ``directory`` (a virtualenv or site-packages inside a checkout is no part of it).
    gitpython is imported only when a ``.git`` is found above ``directory``: a scan outside git
    never pays for it."""
    if not any((folder / ".git").exists() for folder in (directory, *directory.parents)):
        return None
    import git

    try:
        repo = git.Repo(directory, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        return None
    if repo.bare or repo.working_tree_dir is None:
        return None
    return None if _ignored(repo, Path(str(repo.working_tree_dir)).resolve(), directory) else repo


def _ignored(repo: git.Repo, root: Path, directory: Path) -> bool:
    """Whether git's ignore rules exclude ``directory`` (or a folder above it)."""
    import git

    relative = directory.relative_to(root).as_posix()
    if relative == ".":
        return False
    try:
        repo.git.check_ignore("-q", "--", relative)
    except git.GitCommandError:
        return False
    return True


def _git_listing(
    repo: git.Repo, root: Path, directory: Path, problems: list[Problem]
) -> list[Path]:
    """Source and dependency files under ``directory`` that git knows (tracked) or would add
    (untracked, not ignored); untracked ones pass the walk's directory filter below
    ``directory``. Tracked files deleted from the work tree are left out; broken links are
    reported."""
    relative = directory.relative_to(root).as_posix()
    pathspecs = [] if relative == "." else ["--", f":(literal){relative}"]

    def list_files(*flags: str) -> list[str]:
        output = repo.git.ls_files(*flags, "-z", *pathspecs)
        return [name for name in output.split("\0") if _wanted(name.rpartition("/")[2])]

    tracked = [root / name for name in list_files("--cached")]
    top = "" if relative == "." else relative

    @functools.lru_cache(maxsize=None)
    def skipped(folder: str) -> bool:
        """Whether ``folder`` (relative to the root) or a folder between it and ``directory`` is
        one the walk skips; answered once per folder, since files share their folders."""
        if folder == top or not folder:
            return False
        return is_skipped_dir(root / folder) or skipped(folder.rpartition("/")[0])

    untracked = [
        root / name
        for name in list_files("--others", "--exclude-standard")
        if not skipped(name.rpartition("/")[0])
    ]
    listed: list[Path] = []
    for path in tracked + untracked:
        try:
            regular = stat.S_ISREG(os.lstat(path).st_mode)
        except OSError:
            regular = False
        if regular:  # the common case, decided by one system call
            listed.append(path)
        elif problem := _file_problem(path, root):
            problems.append((path, problem))
        elif path.is_file():
            listed.append(path)
    return listed


def _walk(top: Path, root: Path, problems: list[Problem]) -> list[Path]:
    """Source and dependency files below ``top`` outside skipped directories, in name order.

    A symbolic link to a directory inside ``top`` is not followed (that directory is listed
    under its own path); one to a directory elsewhere in the project ``root`` is followed once;
    one leading out of the project is reported and not followed. A directory whose real path is
    one of its own ancestors' is a loop; it, broken links and links out of the project are
    reported.
    """
    files: list[Path] = []
    top_real = Path(os.path.realpath(top))
    root_real = Path(os.path.realpath(root))
    followed: set[Path] = set()

    def visit(directory: Path, real_directory: Path, ancestors: frozenset[Path]) -> None:
        try:
            with os.scandir(directory) as scan:
                entries = sorted(scan, key=lambda e: e.name)
        except OSError as exc:
            problems.append((directory, f"cannot read directory: {exc.strerror or exc}"))
            return
        for entry in entries:
            path = Path(entry.path)
            if not _is_dir(entry):
                special = entry.is_symlink() or not entry.is_file(follow_symlinks=False)
                problem = _file_problem(path, root, read=_wanted(entry.name)) if special else None
                if problem:
                    problems.append((path, problem))
                elif _wanted(entry.name) and entry.is_file():
                    files.append(path)
                continue
            link = entry.is_symlink()
            real = Path(os.path.realpath(path)) if link else real_directory / entry.name
            if real in ancestors:
                problems.append((path, "symbolic link loop: points back to a parent directory"))
                continue
            if is_skipped_dir(path):
                continue
            if link and not real.is_relative_to(root_real):
                problems.append((path, OUTSIDE_DIRECTORY))
                continue
            if link:
                if real.is_relative_to(top_real) or real in followed:
                    continue
                followed.add(real)
            visit(path, real, ancestors | {real})

    visit(top, top_real, frozenset({top_real}))
    return files


def _is_dir(entry: os.DirEntry[str]) -> bool:
    """Whether an entry is a directory or a link to one; a link loop is not."""
    try:
        return entry.is_dir()
    except OSError:
        return False


def _wanted(name: str) -> bool:
    """A cheap name test passed by every source or dependency file (and a few other files)."""
    return name.endswith((*SOURCE_SUFFIXES, ".txt")) or name in DEPENDENCY_FILE_NAMES


def _file_problem(path: Path, root: Path, read: bool = True) -> str | None:
    """Why a listed file is not read, else None: a symbolic link that is broken or loops, and,
    for a file that would be ``read``, a link leading out of the project or something that is
    not a regular file (a device, FIFO or socket is never opened)."""
    try:
        mode = path.stat().st_mode
    except OSError as exc:
        if not path.is_symlink():
            return None
        if exc.errno == errno.ELOOP:
            return "symbolic link loop"
        return "broken symbolic link: its target does not exist"
    if not read:
        return None
    if path.is_symlink() and not is_inside(path, root):
        return OUTSIDE
    return None if stat.S_ISREG(mode) or stat.S_ISDIR(mode) else NOT_REGULAR


def _dependency_files_above(root: Path, directory: Path, problems: list[Problem]) -> list[Path]:
    """Dependency files directly inside each directory from ``root`` down to ``directory``: the
    project a scanned subfolder belongs to declares its dependencies there. Unreadable
    directories are skipped here; the walk reports them, as it does links out of the project
    (reported here too, once overall)."""
    relative = directory.relative_to(root)
    found: list[Path] = []
    for folder in [root / parent for parent in reversed(relative.parents)] + [directory]:
        with contextlib.suppress(OSError), os.scandir(folder) as scan:
            for entry in scan:
                if not is_dependency_file(PurePosixPath(entry.name)):
                    continue
                path = Path(entry.path)
                problem = _file_problem(path, root)
                if problem:
                    problems.append((path, problem))
                elif entry.is_file():
                    found.append(path)
    return found


def _matcher(patterns: Sequence[str]) -> Callable[[str], bool]:
    """A predicate telling whether a root-relative POSIX path matches any gitignore-style glob
    (pathspec is imported only for a configuration that has globs)."""
    import pathspec

    return pathspec.GitIgnoreSpec.from_lines(patterns).match_file


def _match_nothing(relative: str) -> bool:
    """The matcher of no glob."""
    return False


def _match_everything(relative: str) -> bool:
    """The matcher of ``*``: every path."""
    return True
