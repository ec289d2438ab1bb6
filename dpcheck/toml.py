"""The TOML reader: ``tomllib`` from Python 3.11 on, its ``tomli`` backport before."""

import sys

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

__all__ = ["tomllib"]
