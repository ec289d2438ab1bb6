"""Reading a file only when it lies inside the project, and only when it is a regular file.

A scanned repository is untrusted input: a pull request can add ``passwd.py -> /etc/passwd``,
and a link is as easy to commit as a file. Every reader of project content (sources, dependency
files and their includes, the config, the baseline, the cache, a bundled library's version file,
a project virtualenv's metadata) goes through here, so no file outside the project is ever
opened through a symbolic link, and no device, FIFO or socket is ever opened at all (opening a
FIFO blocks; reading ``/dev/zero`` never ends). A refusal names the reason, never the target:
the path a report prints is the link's own.

Links that stay inside the project are followed; the target is what is read.

Writing follows the same rule: ``write_inside`` (the only way ``dpcheck scan --fix`` writes a
project file) writes only a regular file whose real path lies inside the project. And a read can
be answered from memory: within ``overlaid(files)`` the reads of those files return the given
bytes, so the fix stage re-analyses the project as a fix would leave it without writing anything.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

OUTSIDE = "symbolic link to a path outside the project; skipped (not read)"
OUTSIDE_DIRECTORY = "symbolic link to a directory outside the project; skipped (not followed)"
NOT_REGULAR = "not a regular file (a device, FIFO or socket); skipped (never opened)"
#: Why ``write_inside`` refuses, by the reason a read would be refused.
NOT_WRITTEN = {OUTSIDE: "symbolic link to a path outside the project; not written",
               NOT_REGULAR: "not a regular file (a device, FIFO or socket); not written"}
_CHUNK = 1 << 20
_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
)
_WRITE_FLAGS = os.O_WRONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0) \
    | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_NONBLOCK", 0)
#: Real path -> the bytes a read of it returns instead of the file's (see ``overlaid``).
_OVERLAY: ContextVar[Mapping[str, bytes]] = ContextVar("dpcheck_overlay", default={})


class ReadRefused(OSError):
    """A file dpcheck will not open; ``strerror`` is the reason (no content, no target)."""

    def __init__(self, reason: str) -> None:
        super().__init__(errno.EPERM, reason)


def is_inside(path: str | Path, root: Path) -> bool:
    """Whether the real path of ``path`` (every link followed) lies in ``root``'s real path."""
    real = Path(os.path.realpath(path))
    return real.is_relative_to(os.path.realpath(root))


def refusal(path: Path, root: Path) -> str | None:
    """Why ``path`` must not be read as part of the project at ``root``, or None when it may
    (a missing file may: the read says so). Follows links by name only; opens nothing."""
    return _refusal(os.path.realpath(path), os.path.realpath(root))


def _refusal(real: str, root_real: str) -> str | None:
    """``refusal`` of a path and root already resolved."""
    if not Path(real).is_relative_to(root_real):
        return OUTSIDE
    try:
        mode = os.stat(real).st_mode
    except OSError:
        return None
    return None if stat.S_ISREG(mode) or stat.S_ISDIR(mode) else NOT_REGULAR


def read_inside(path: Path, root: Path, limit: int | None = None) -> bytes:
    """The bytes of the regular file ``path``, whose real path must lie inside ``root``; at most
    ``limit + 1`` bytes when a limit is given (so a caller can tell a file is over it without
    reading a huge one whole). Raises ``ReadRefused`` for a link out of the project or a file
    that is not regular, and ``OSError`` when the file cannot be read."""
    return read_resolved(os.path.realpath(path), os.path.realpath(root), limit)


def read_resolved(real: str, root_real: str, limit: int | None = None) -> bytes:
    """``read_inside`` of a path and root already resolved (``os.path.realpath``): a scan that
    reads every file of a project resolves its root once, and each file once."""
    reason = _refusal(real, root_real)
    if reason is not None:
        raise ReadRefused(reason)
    overlay = _OVERLAY.get().get(real)
    if overlay is not None:
        return overlay if limit is None else overlay[: limit + 1]
    return read_regular(real, limit)


@contextmanager
def overlaid(files: Mapping[Path, bytes]) -> Iterator[None]:
    """Within the context, ``read_inside`` of each of ``files`` (matched by real path) returns
    the given bytes instead of the file's: the project as an edit would leave it, in memory."""
    token = _OVERLAY.set({**_OVERLAY.get(),
                          **{os.path.realpath(p): data for p, data in files.items()}})
    try:
        yield
    finally:
        _OVERLAY.reset(token)


def write_inside(path: Path, root: Path, data: bytes) -> None:
    """Replace the content of the regular file ``path``, whose real path must lie inside
    ``root``, by ``data``. Raises ``ReadRefused`` (its reason says why, never the target) for a
    link out of the project or a file that is not regular, and ``OSError`` when it cannot be
    written. The file keeps its inode, owner and mode."""
    reason = refusal(path, root)
    if reason is not None:
        raise ReadRefused(NOT_WRITTEN.get(reason, reason))
    try:
        fd = os.open(os.path.realpath(path), _WRITE_FLAGS)
    except OSError as exc:
        if exc.errno in (errno.ENXIO, errno.ELOOP):
            raise ReadRefused(NOT_WRITTEN[NOT_REGULAR if exc.errno == errno.ENXIO else OUTSIDE]) \
                from None
        raise
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ReadRefused(NOT_WRITTEN[NOT_REGULAR])
        os.set_blocking(fd, True)
        os.ftruncate(fd, 0)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)


def read_named(path: Path, root: Path, limit: int | None = None) -> bytes:
    """A file the user named on the command line (``--config``, ``--baseline``). Inside the
    project it is project content and must stay inside (``read_inside``); a path outside the
    project is the user's own choice and is read as named, if it is a regular file."""
    absolute = Path(os.path.abspath(path))
    parent = Path(os.path.realpath(absolute.parent))
    if parent.is_relative_to(os.path.realpath(root)):
        return read_inside(path, root, limit)
    return read_regular(os.path.realpath(path), limit)


def read_regular(real: str | Path, limit: int | None = None) -> bytes:
    """Open ``real`` without blocking and read it if it is a regular file; a last component that
    is a symbolic link is not followed (``ReadRefused``), so pass a path already resolved, or
    one that must not be a link."""
    try:
        fd = os.open(real, _OPEN_FLAGS)
    except OSError as exc:
        if exc.errno in (errno.ENXIO, errno.ELOOP):
            raise ReadRefused(NOT_REGULAR if exc.errno == errno.ENXIO else OUTSIDE) from None
        raise
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, "is a directory")
        if not stat.S_ISREG(mode):
            raise ReadRefused(NOT_REGULAR)
        os.set_blocking(fd, True)
        wanted = None if limit is None else limit + 1
        chunks: list[bytes] = []
        size = 0
        while wanted is None or size < wanted:
            chunk = os.read(fd, _CHUNK if wanted is None else min(_CHUNK, wanted - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)
