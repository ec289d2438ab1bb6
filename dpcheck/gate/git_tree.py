"""Reading a git ref's tree from git objects: the project as it was, without a checkout.

The files a scan can read (Python sources, notebooks and dependency files) are written from their blobs
into a scratch folder with the same layout, and that folder is made a git repository whose index
holds every exported file, so discovery lists them as tracked files exactly as it would in the
real work tree at that ref. Nothing in the user's repository changes: no checkout, no stash, no
index update.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from dpcheck.discover.files import SOURCE_SUFFIXES, is_dependency_file
from dpcheck.errors import DpcheckError
from dpcheck.parse.source import MAX_FILE_BYTES

if TYPE_CHECKING:
    import git

_REGULAR_FILE_MODES = frozenset({0o100644, 0o100755})
_MAX_OTHER_TXT_BYTES = 1 << 20
#: Configuration files a script may load as its hyper-parameters
#: (``dpcheck.pipelines.config_files``).
_CONFIG_SUFFIXES = frozenset({".json", ".yaml", ".yml", ".toml"})


@dataclass(frozen=True)
class RefCommit:
    """A git ref resolved to a commit of the repository whose work tree is the scan root."""

    ref: str
    commit: git.Commit

    @property
    def short(self) -> str:
        return self.commit.hexsha[:12]


def resolve_ref(root: Path, ref: str) -> RefCommit:
    """Resolve ``ref`` (branch, tag, sha, ``HEAD~2``...) in the git work tree at ``root``.

    Raises ``DpcheckError`` when ``root`` is not the top of a git work tree or ``ref`` names no
    commit (with a hint for shallow CI clones, the usual cause of a missing base branch)."""
    import git  # gitpython only for --new-since: a plain scan never loads it

    try:
        repo = git.Repo(root, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        raise DpcheckError(
            f"--new-since {ref}: {root} is not in a git work tree; comparing with a ref needs git"
        ) from None
    if repo.working_tree_dir is None or Path(repo.working_tree_dir).resolve() != root.resolve():
        raise DpcheckError(f"--new-since {ref}: the scan root {root} is not a git work tree's top")
    try:
        sha = repo.git.rev_parse("--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}")
    except git.GitCommandError:
        raise DpcheckError(
            f"--new-since {ref}: not a commit in {root}; in a shallow CI clone, fetch the base "
            "first (e.g. actions/checkout with fetch-depth: 0)"
        ) from None
    return RefCommit(ref, repo.commit(sha))


def is_exported(path: PurePosixPath, size: int) -> bool:
    """Whether a blob at ``path`` can matter to a scan: every Python file and notebook, every
    dependency file, other small ``.txt`` files (a requirements file may include any of them
    with ``-r``) and small configuration files (a script may load its hyper-parameters from
    one). Nothing inside a ``.git`` folder (git refuses such paths, a crafted tree may
    not): the scratch copy is itself a git repository, whose own files a tree must not write."""
    if any(part.lower() == ".git" for part in path.parts):
        return False
    if path.suffix in SOURCE_SUFFIXES or is_dependency_file(path):
        return True
    return (path.suffix == ".txt" or path.suffix in _CONFIG_SUFFIXES) \
        and size <= _MAX_OTHER_TXT_BYTES


def export_tree(target: RefCommit, dest: Path) -> int:
    """Write the scannable regular files of ``target``'s tree under ``dest`` (which must exist),
    index them in a fresh repository there, and return how many were written. Symbolic links and
    submodules are not exported; a blob over the scan's size cap is written cut just past it
    (the scan reports it too large either way)."""
    import git  # gitpython only for --new-since: a plain scan never loads it

    written: list[str] = []
    for item in target.commit.tree.traverse():
        if not isinstance(item, git.Blob) or item.mode not in _REGULAR_FILE_MODES:
            continue
        relative = PurePosixPath(item.path)
        if not is_exported(relative, item.size):
            continue
        path = dest.joinpath(*relative.parts)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(item.data_stream.read(MAX_FILE_BYTES + 1))  # more is too large anyway
        written.append(item.path)
    scratch = git.Repo.init(dest)
    if written:
        scratch.git.add("--all", "--force", "--", ".")
    scratch.close()
    return len(written)
