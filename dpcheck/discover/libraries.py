"""The DP libraries dpcheck reads pins of, by canonical name: what the configuration and the scan
need to know of dependency files without the requirement parser (``requirement``) loaded."""

from __future__ import annotations

from packaging.utils import canonicalize_name

DP_LIBRARIES: tuple[str, ...] = (
    "opacus",
    "tensorflow-privacy",
    "dp-accounting",
    "prv-accountant",
    "jax-privacy",
)
#: The largest dependency file read (a requirements file is a few kilobytes).
MAX_DEPENDENCY_FILE_BYTES = 1 << 20


def canonical_library(name: str) -> str | None:
    """The canonical (PEP 503) name of a DP library, or None if ``name`` is not one of them."""
    canonical = canonicalize_name(name)
    return canonical if canonical in DP_LIBRARIES else None
