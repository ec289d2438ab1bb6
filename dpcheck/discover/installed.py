"""Where an installed DP library's source is, found as files (the library is never imported).

Looked for first in the project's own virtualenvs (``.venv``, ``venv``, ``env`` and any folder
directly under the root holding a ``pyvenv.cfg``), then in the running interpreter's
site-packages: the project's environment says what the project runs; dpcheck's own is the
fallback. The version comes from the distribution's ``METADATA`` (``PKG-INFO`` for egg-info);
an editable install is followed to its source folder through ``direct_url.json``.
"""

from __future__ import annotations

import json
import os
import sysconfig
from dataclasses import dataclass
from email.parser import HeaderParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

from packaging.utils import canonicalize_name

from dpcheck.discover.confine import is_inside, read_inside, read_regular
from dpcheck.discover.libraries import canonical_library
from dpcheck.errors import DpcheckError

IMPORT_NAMES: dict[str, str] = {
    "opacus": "opacus",
    "tensorflow-privacy": "tensorflow_privacy",
    "dp-accounting": "dp_accounting",
    "prv-accountant": "prv_accountant",
    "jax-privacy": "jax_privacy",
}
_VENV_NAMES = (".venv", "venv", "env")
_MAX_METADATA_BYTES = 1 << 20
_SITE_PATTERNS = ("lib/python*/site-packages", "lib64/python*/site-packages", "Lib/site-packages")


@dataclass(frozen=True)
class InstalledLibrary:
    """An installed DP library: canonical name, version (None if its metadata is missing), the
    folder of its importable package and, for a copy bundled inside the scanned project, the
    folder of that bundled distribution (None otherwise)."""

    library: str
    version: str | None
    path: Path
    distribution: Path | None = None


def find_installed(root: Path, library: str) -> InstalledLibrary | None:
    """The installed source of ``library`` (any spelling of a DP library's name) for the project
    at ``root``, or None if it is installed nowhere dpcheck looks. Raises ``DpcheckError`` for a
    name that is not a DP library."""
    canonical = canonical_library(library)
    if canonical is None:
        raise DpcheckError(f"{library!r} is not a DP library (known: {', '.join(IMPORT_NAMES)})")
    package = IMPORT_NAMES[canonical]
    for site in site_packages_dirs(root):
        info = _distribution_info(site, canonical)
        confine = root if is_inside(site, root) else None
        version = _version(info, confine) if info else None
        location = site / package if (site / package).is_dir() \
            else _editable_source(info, package, confine)
        if location is not None:
            return InstalledLibrary(canonical, version, location)
    return None


def site_packages_dirs(root: Path) -> list[Path]:
    """The site-packages folders searched, in order: project virtualenvs, then the interpreter's.
    A project virtualenv's folder that leads out of the project (a link) is not searched."""
    venvs = [root / name for name in _VENV_NAMES]
    if root.is_dir():
        venvs += sorted(d for d in root.iterdir() if (d / "pyvenv.cfg").is_file())
    found = [
        site
        for venv in venvs
        for pattern in _SITE_PATTERNS
        for site in sorted(venv.glob(pattern))
        if is_inside(site, root)
    ]
    paths = sysconfig.get_paths()
    found += [Path(paths["purelib"]), Path(paths["platlib"])]
    return [site for site in dict.fromkeys(found) if site.is_dir()]


def _distribution_info(site: Path, canonical: str) -> Path | None:
    """The ``*.dist-info`` (preferred) or ``*.egg-info`` entry of a distribution in ``site``."""
    for suffix in (".dist-info", ".egg-info"):
        for info in sorted(site.glob(f"*{suffix}")):
            if canonicalize_name(info.name.split("-", 1)[0].removesuffix(suffix)) == canonical:
                return info
    return None


def _metadata_text(path: Path, confine: Path | None) -> str | None:
    """A distribution's metadata file, if it is a regular file; in a project virtualenv
    (``confine`` is the project root) only when it stays inside the project."""
    try:
        data = read_inside(path, confine, _MAX_METADATA_BYTES) if confine is not None \
            else read_regular(os.path.realpath(path), _MAX_METADATA_BYTES)
    except OSError:
        return None
    return data.decode("utf-8", errors="replace")


def _version(info: Path, confine: Path | None) -> str | None:
    """The ``Version`` header of the distribution's metadata file."""
    candidates = [info / "METADATA", info / "PKG-INFO"] if info.is_dir() else [info]
    for metadata in candidates:
        if metadata.is_file():
            text = _metadata_text(metadata, confine)
            return None if text is None else HeaderParser().parsestr(text).get("Version")
    return None


def _editable_source(info: Path | None, package: str, confine: Path | None) -> Path | None:
    """The package folder of an editable install, from the ``file://`` URL that pip records in
    ``direct_url.json`` (the package sits in that folder or its ``src/``)."""
    direct_url = info / "direct_url.json" if info and info.is_dir() else None
    if direct_url is None or not direct_url.is_file():
        return None
    try:
        url = json.loads(_metadata_text(direct_url, confine) or "{}").get("url", "")
    except (ValueError, AttributeError):
        return None
    parts = urlsplit(url)
    if parts.scheme != "file":
        return None
    base = Path(unquote(parts.path))
    return next((p for p in (base / package, base / "src" / package) if p.is_dir()), None)
