"""Project configuration: ``[tool.dpcheck]`` in the scanned project's pyproject.toml, or ``--config``.

Every key is validated with its expected type; an unknown key or a wrong type is a
``ConfigError`` naming the file and the key, so a typo never silently disables a rule.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from packaging.version import InvalidVersion, Version

from dpcheck.discover.confine import ReadRefused, read_named, refusal
from dpcheck.discover.libraries import DP_LIBRARIES, MAX_DEPENDENCY_FILE_BYTES, canonical_library
from dpcheck.errors import ConfigError
from dpcheck.model import PARAM_NAMES, ParamValue
from dpcheck.report import OUTPUT_FORMATS
from dpcheck.report.meta import valid_docs_url

from dpcheck.toml import tomllib

FAIL_ON_LEVELS: tuple[str, ...] = ("error", "warning", "info", "never")
MAX_CONFIG_BYTES = MAX_DEPENDENCY_FILE_BYTES
INTEGER_PARAMS = frozenset({"batch_size", "N", "epochs", "steps", "dim"})


@dataclass(frozen=True)
class Config:
    """Validated settings; field names mirror the TOML keys (dashes become underscores)."""

    source: str | None = None
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    include: tuple[str, ...] = ()
    fail_on: str | None = None
    per_file_ignores: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    params: Mapping[str, ParamValue] = field(default_factory=dict)
    dp_library_versions: Mapping[str, str] = field(default_factory=dict)
    strict: bool = False
    output_format: str | None = None
    docs_url: str | None = None


def _string_list(value: Any, key: str, where: str) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise ConfigError(f"{where}: `{key}` must be a string or a list of strings, got {value!r}")


def parse_param(name: str, raw: Any, origin: str) -> ParamValue:
    """Validate one ``--param``/config parameter: a known name and a finite positive number."""
    if name not in PARAM_NAMES:
        raise ConfigError(
            f"{origin}: unknown parameter `{name}` (expected one of: {', '.join(PARAM_NAMES)})"
        )
    if isinstance(raw, bool):
        raise ConfigError(f"{origin}: parameter `{name}` must be a number, got {raw!r}")
    try:
        value = float(raw)
    except (TypeError, ValueError):
        raise ConfigError(f"{origin}: parameter `{name}` must be a number, got {raw!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise ConfigError(f"{origin}: parameter `{name}` must be a positive number, got {raw!r}")
    if name in INTEGER_PARAMS:
        if value != int(value):
            raise ConfigError(f"{origin}: parameter `{name}` must be an integer, got {raw!r}")
        number: float | int = int(value)
    else:
        number = value
    if (name == "q" and number > 1) or (name == "delta" and number >= 1):
        bound = "in (0, 1]" if name == "q" else "in (0, 1)"
        raise ConfigError(f"{origin}: parameter `{name}` must be {bound}, got {raw!r}")
    return ParamValue(name, number, "override", None, f"{origin}: {name}={raw}")


def parse_cli_params(items: list[str]) -> dict[str, ParamValue]:
    """``--param KEY=VALUE`` items, validated."""
    params: dict[str, ParamValue] = {}
    for item in items:
        name, sep, raw = item.partition("=")
        if not sep or not name.strip():
            raise ConfigError(f"--param {item!r}: expected KEY=VALUE")
        params[name.strip()] = parse_param(name.strip(), raw.strip(), "--param")
    return params


_KEYS = {
    "select", "ignore", "exclude", "include", "fail-on", "per-file-ignores", "params",
    "dp-library-versions", "strict", "output-format", "docs-url",
}


def check_docs_url(url: str, where: str) -> str:
    """``url`` if it can be the base URL of the rule pages (absolute http(s)), else an error."""
    if not valid_docs_url(url):
        raise ConfigError(f"{where}: `docs-url` must be an absolute http(s) URL, got {url!r}")
    return url


def _library_versions(versions: Mapping[str, str], where: str) -> dict[str, str]:
    """``dp-library-versions`` keyed by canonical DP-library name; other names are errors."""
    result: dict[str, str] = {}
    for name, version in versions.items():
        canonical = canonical_library(name)
        if canonical is None:
            raise ConfigError(
                f"{where}: `dp-library-versions.{name}` is not a DP library "
                f"(known: {', '.join(sorted(DP_LIBRARIES))})"
            )
        try:
            Version(version)
        except InvalidVersion:
            raise ConfigError(
                f"{where}: `dp-library-versions.{name}` must be a release version such as \"1.4.0\", got {version!r}"
            ) from None
        result[canonical] = version
    return result


def config_from_table(table: Mapping[str, Any], where: str) -> Config:
    """Validate a ``[tool.dpcheck]`` table."""
    unknown = sorted(set(table) - _KEYS)
    if unknown:
        raise ConfigError(
            f"{where}: unknown key{'s' if len(unknown) > 1 else ''} "
            f"{', '.join(f'`{k}`' for k in unknown)} (valid: {', '.join(sorted(_KEYS))})"
        )
    fail_on = table.get("fail-on")
    if fail_on is not None and fail_on not in FAIL_ON_LEVELS:
        raise ConfigError(f"{where}: `fail-on` must be one of {', '.join(FAIL_ON_LEVELS)}, got {fail_on!r}")
    pfi = table.get("per-file-ignores", {})
    if not isinstance(pfi, dict):
        raise ConfigError(f"{where}: `per-file-ignores` must be a table of glob = [rules]")
    params = table.get("params", {})
    if not isinstance(params, dict):
        raise ConfigError(f"{where}: `params` must be a table of name = number")
    versions = table.get("dp-library-versions", {})
    if not isinstance(versions, dict) or not all(isinstance(v, str) for v in versions.values()):
        raise ConfigError(f"{where}: `dp-library-versions` must be a table of library = \"version\"")
    strict = table.get("strict", False)
    if not isinstance(strict, bool):
        raise ConfigError(f"{where}: `strict` must be true or false, got {strict!r}")
    output_format = table.get("output-format")
    if output_format is not None and output_format not in OUTPUT_FORMATS:
        raise ConfigError(
            f"{where}: `output-format` must be one of {', '.join(OUTPUT_FORMATS)}, got {output_format!r}"
        )
    docs_url = table.get("docs-url")
    if docs_url is not None:
        docs_url = check_docs_url(docs_url if isinstance(docs_url, str) else repr(docs_url), where)
    return Config(
        source=where,
        select=_string_list(table.get("select", []), "select", where),
        ignore=_string_list(table.get("ignore", []), "ignore", where),
        exclude=_string_list(table.get("exclude", []), "exclude", where),
        include=_string_list(table.get("include", []), "include", where),
        fail_on=fail_on,
        per_file_ignores={
            glob: _string_list(codes, f"per-file-ignores.{glob}", where) for glob, codes in pfi.items()
        },
        params={
            name: parse_param(name, raw, f"{where} [tool.dpcheck.params]")
            for name, raw in params.items()
        },
        dp_library_versions=_library_versions(versions, where),
        strict=strict,
        output_format=output_format,
        docs_url=docs_url,
    )


def load_config(explicit: Path | None, root: Path) -> Config:
    """The configuration in force: ``--config`` if given, else ``root/pyproject.toml`` if it has
    ``[tool.dpcheck]``, else defaults. A ``--config`` file may be a pyproject.toml or a file
    whose top level is the dpcheck table. Inside the project only a regular file that stays
    inside is read (``dpcheck.discover.confine.read_named``); a ``--config`` that leads out of
    it is an error."""
    path = explicit if explicit is not None else root / "pyproject.toml"
    if explicit is None and (not path.is_file() or refusal(path, root) is not None):
        return Config()  # discovery reports a pyproject.toml that leads out of the project
    try:
        raw = read_named(path, root, MAX_CONFIG_BYTES)
        if len(raw) > MAX_CONFIG_BYTES:
            raise ConfigError(f"{path}: configuration file over {MAX_CONFIG_BYTES} bytes; not read")
        data = tomllib.loads(raw.decode("utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{path}: configuration file not found") from None
    except ReadRefused as exc:
        raise ConfigError(f"{path}: {exc.strerror}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read configuration: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    tool = data.get("tool", {})
    if isinstance(tool, dict) and "dpcheck" in tool:
        table = tool["dpcheck"]
        where = f"{path} [tool.dpcheck]"
    elif explicit is not None and path.name != "pyproject.toml":
        table, where = data, str(path)
    else:
        if explicit is not None:
            raise ConfigError(f"{path}: no [tool.dpcheck] table")
        return Config()
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: must be a table")
    return config_from_table(table, where)
