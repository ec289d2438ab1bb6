"""conda ``environment.yml`` (the ``dependencies`` list and its ``pip:`` sub-list), and the
package list ``conda list --export`` writes (one ``name=version=build`` match spec a line, under a
``# platform:`` header), whatever the file is named: ``is_package_list`` tells it by its content.

Conda entries are match specs, ``[channel::]name[ constraint][=build]``: ``opacus=1.4.0`` (one
``=``) is read as ``==1.4.0``, as is ``opacus 1.4.0``; ``==``/``>=`` constraints as PEP 440.
Entries of the ``pip:`` sub-list are requirements-file lines (``-r`` relative to the environment
file included). YAML is read with PyYAML's node composer, which keeps line numbers.
"""

from __future__ import annotations

import re
from typing import Any

from dpcheck.discover.requirement import (
    Pin,
    PinsResult,
    Source,
    canonical_library,
    combine,
    constraint_specifier,
)
from dpcheck.discover.requirements_txt import requirement_line

_PLATFORM = re.compile(r"^#\s*platform:\s*\S+")
_EXPORTED = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.\-]*=[^=\s]+=[^=\s]+$")
_MATCH_SPEC = re.compile(r"^(?:[^\s:]+::)?(?P<name>[A-Za-z0-9_][A-Za-z0-9_.\-]*)\s*(?P<rest>.*)$")


def read_environment(source: Source) -> PinsResult:
    """Pins of a conda environment file."""
    try:
        import yaml
    except ImportError:
        return source.problem("PyYAML is not installed; conda environment files cannot be read")
    try:
        document = yaml.compose(source.text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        return source.problem(f"invalid YAML: {exc}")
    if document is None:
        return PinsResult()
    if not isinstance(document, yaml.MappingNode):
        return source.problem("expected a mapping at the top level")
    dependencies = _value(document, "dependencies")
    if dependencies is None:
        return PinsResult()
    if not isinstance(dependencies, yaml.SequenceNode):
        return source.problem("'dependencies' is not a list", dependencies.start_mark.line + 1)
    results: list[PinsResult] = []
    for entry in dependencies.value:
        if isinstance(entry, yaml.ScalarNode):
            results.append(_match_spec_pins(entry.value, source, entry.start_mark.line + 1))
        elif isinstance(entry, yaml.MappingNode):
            pip = _value(entry, "pip")
            if isinstance(pip, yaml.SequenceNode):
                results.extend(
                    requirement_line(item.value, source, item.start_mark.line + 1)
                    for item in pip.value
                    if isinstance(item, yaml.ScalarNode)
                )
    return combine(results)


def is_package_list(text: str) -> bool:
    """Whether a text file is a conda package list rather than pip requirements: it carries
    conda's ``# platform:`` header, or every entry is a ``name=version=build`` spec (two single
    ``=``, which no pip requirement has)."""
    entries = [line.strip() for line in text.splitlines()
               if line.strip() and not line.lstrip().startswith("#")]
    return any(_PLATFORM.match(line) for line in text.splitlines()) or (
        bool(entries) and all(_EXPORTED.match(entry) for entry in entries))


def read_package_list(source: Source) -> PinsResult:
    """Pins of a conda package list, one match spec a line (comments and blanks skipped)."""
    return combine(_match_spec_pins(text, source, number)
                   for number, text in enumerate(source.lines, start=1)
                   if text.strip() and not text.lstrip().startswith(("#", "@")))


def _value(mapping: Any, key: str) -> Any:
    """The value node of ``key`` in a YAML mapping node."""
    return next((v for k, v in mapping.value if getattr(k, "value", None) == key), None)


def _match_spec_pins(spec: str, source: Source, line: int) -> PinsResult:
    """The pin of one conda match spec; a build string after the version is dropped."""
    match = _MATCH_SPEC.match(spec.strip())
    library = canonical_library(match.group("name")) if match else None
    if match is None or library is None:
        return PinsResult()
    constraint = match.group("rest").strip()
    constraint = constraint[2:] if constraint.startswith("==") else constraint.removeprefix("=")
    if constraint[:1].isdigit():
        constraint = re.split(r"[=\s]", constraint, maxsplit=1)[0]
    try:
        specifier, version = constraint_specifier(constraint)
    except ValueError as exc:
        return source.problem(f"{spec.strip()!r}: {exc}", line)
    return PinsResult((Pin(library, specifier, version, source.span(line), spec.strip()),))
