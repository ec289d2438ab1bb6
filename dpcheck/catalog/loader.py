"""Load the rule catalog from its TOML files and validate it strictly.

Every problem (unreadable file, TOML syntax, unknown key, wrong type, bad severity, id that
does not match the file name, duplicate id or name, malformed example) is a CatalogError that
names the file and the key, so a broken catalog fails at load time and never half-works.
"""

from __future__ import annotations

import functools
import re
import sys
from collections.abc import Callable, Iterable
from importlib import resources
from pathlib import Path, PurePosixPath
from typing import Any

from dpcheck.catalog.rule import (
    EXAMPLE_MAIN_FILE,
    FIX_SAFETIES,
    Catalog,
    Example,
    Fix,
    FixExample,
    MinimalExample,
    Reference,
    Rule,
)
from dpcheck.catalog.validate import check_keys as _check_keys
from dpcheck.catalog.validate import listed as _list
from dpcheck.catalog.validate import string as _string
from dpcheck.catalog.validate import table as _table
from dpcheck.errors import CatalogError
from dpcheck.model import Severity

from dpcheck.toml import tomllib

if sys.version_info >= (3, 11):
    from importlib.resources.abc import Traversable
else:  # pragma: no cover - exercised on Python 3.10 only
    from importlib.abc import Traversable

RULE_ID = re.compile(r"DP\d{3}")
KEBAB = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*")

_REQUIRED_KEYS = (
    "id", "name", "severity", "summary", "what", "rationale", "fix", "minimal", "references",
    "examples",
)
_RULE_KEYS = frozenset((*_REQUIRED_KEYS, "tags", "configuration", "fixes"))
_MINIMAL_KEYS = ("flagged", "use-instead")
_REFERENCE_KEYS = frozenset(("title", "url"))
_EXAMPLE_KEYS = frozenset(("name", "code", "expect", "files", "pending"))
_FIX_KEYS = frozenset(("id", "title", "when", "safety", "examples"))
_FIX_EXAMPLE_KEYS = frozenset(("name", "path", "before", "after", "unfixed", "files"))


def load_catalog(directory: Path | Traversable | None = None) -> Catalog:
    """Load and validate the catalog in ``directory`` (default: the packaged rule catalog).

    ``directory`` may be any ``importlib.resources`` Traversable (a zipped package's folder
    too). The default load is cached for the life of the process; an explicit directory is
    always read afresh.
    """
    if directory is None:
        return _default_catalog()
    return _load(directory)


@functools.cache
def _default_catalog() -> Catalog:
    return _load(default_catalog_dir())


def default_catalog_dir() -> Traversable:
    """Where the shipped catalog lives.

    In a wheel, the build maps the top-level ``rules/`` folder to ``dpcheck/catalog/data``; in a
    source checkout or an editable install that folder does not exist and the repository's
    ``rules/`` next to the package is the catalog.
    """
    packaged = resources.files("dpcheck") / "catalog" / "data"
    if packaged.is_dir():
        return packaged
    source_tree = Path(__file__).resolve().parents[2] / "rules"
    if source_tree.is_dir():
        return source_tree
    raise CatalogError(
        f"rule catalog not found: neither {packaged} nor {source_tree} exists "
        "(is dpcheck installed correctly?)"
    )


def _load(directory: Traversable) -> Catalog:
    if not directory.is_dir():
        raise CatalogError(f"rule catalog directory {directory} does not exist")
    files = sorted(
        (f for f in directory.iterdir() if f.name.endswith(".toml") and f.is_file()),
        key=lambda f: f.name,
    )
    if not files:
        raise CatalogError(f"rule catalog directory {directory} holds no rule files (*.toml)")
    parsed = [(f, _parse_rule(f, _read_toml(f))) for f in files]
    _check_unique(parsed, "id", lambda r: r.id)
    _check_unique(parsed, "name", lambda r: r.name)
    _check_unique_fixes(parsed)
    for file, rule in parsed:
        stem = file.name.removesuffix(".toml")
        if stem != rule.id:
            raise CatalogError(
                f"{file}: id: {rule.id!r} does not match the file name {file.name!r}"
            )
    known = {rule.id for _, rule in parsed}
    for file, rule in parsed:
        _check_examples_against(file, rule, known)
    return Catalog(tuple(rule for _, rule in parsed))


def _read_toml(file: Traversable) -> dict[str, Any]:
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CatalogError(f"{file}: cannot read rule file: {exc}") from exc
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise CatalogError(f"{file}: invalid TOML: {exc}") from exc


def _check_unique(
    parsed: Iterable[tuple[Traversable, Rule]], key: str, value: Callable[[Rule], str]
) -> None:
    seen: dict[str, Traversable] = {}
    for file, rule in parsed:
        first = seen.setdefault(value(rule), file)
        if first is not file:
            raise CatalogError(
                f"{file}: {key}: duplicate {key} {value(rule)!r} (already defined in {first})"
            )


def _check_unique_fixes(parsed: Iterable[tuple[Traversable, Rule]]) -> None:
    """A fix id names one fix module, so it is unique across the catalog."""
    seen: dict[str, Traversable] = {}
    for file, rule in parsed:
        for index, fix in enumerate(rule.fixes):
            if fix.id in seen:
                raise CatalogError(f"{file}: fixes[{index}].id: duplicate fix id {fix.id!r} "
                                   f"(already defined in {seen[fix.id]})")
            seen[fix.id] = file


def _parse_rule(file: Traversable, data: dict[str, Any]) -> Rule:
    _check_keys(file, "", data, _RULE_KEYS, required=_REQUIRED_KEYS)
    rule_id = _string(file, "id", data["id"])
    if not RULE_ID.fullmatch(rule_id):
        raise CatalogError(f"{file}: id: {rule_id!r} is not of the form DP followed by 3 digits")
    name = _string(file, "name", data["name"])
    if not KEBAB.fullmatch(name):
        raise CatalogError(f"{file}: name: {name!r} is not kebab-case (e.g. 'unparsable-file')")
    severity = _string(file, "severity", data["severity"])
    if severity not in {s.value for s in Severity}:
        raise CatalogError(
            f"{file}: severity: {severity!r} is not one of {', '.join(s.value for s in Severity)}"
        )
    summary = _string(file, "summary", data["summary"])
    if "\n" in summary.strip():
        raise CatalogError(f"{file}: summary: must be a single line")
    references = _list(file, "references", data["references"], _parse_reference)
    tags = _list(file, "tags", data.get("tags", []), _string)
    examples = _list(file, "examples", data["examples"], _parse_example)
    what = _string(file, "what", data["what"]).strip()
    if what == summary.strip():
        raise CatalogError(f"{file}: what: repeats the summary; say what the rule checks beyond it")
    configuration = data.get("configuration", "")
    if not isinstance(configuration, str):
        raise CatalogError(f"{file}: configuration: must be a string (Markdown)")
    return Rule(
        id=rule_id,
        name=name,
        severity=Severity(severity),
        summary=summary.strip(),
        rationale=_string(file, "rationale", data["rationale"]).strip(),
        fix=_string(file, "fix", data["fix"]).strip(),
        references=references,
        tags=tags,
        examples=examples,
        what=what,
        configuration=configuration.strip(),
        minimal=_parse_minimal(file, data["minimal"]),
        fixes=_list(file, "fixes", data.get("fixes", []), _parse_fix),
    )


def _parse_minimal(file: Traversable, value: Any) -> MinimalExample:
    """The minimal pair: ``flagged`` marks one line ``# flagged``, ``use-instead`` none (which
    rule they must report is checked with the other examples)."""
    table = _table(file, "minimal", value)
    _check_keys(file, "minimal.", table, frozenset(_MINIMAL_KEYS), required=_MINIMAL_KEYS)
    flagged = _parse_example(file, "minimal.flagged", table["flagged"])
    use_instead = _parse_example(file, "minimal.use-instead", table["use-instead"])
    if len(flagged.marked_lines()) != 1:
        raise CatalogError(
            f"{file}: minimal.flagged: mark exactly one line with a `# flagged` comment "
            f"(found {len(flagged.marked_lines())})"
        )
    if use_instead.marked_lines():
        raise CatalogError(f"{file}: minimal.use-instead: has a `# flagged` line; it must pass")
    return MinimalExample(flagged, use_instead)


def _parse_fix(file: Traversable, key: str, value: Any) -> Fix:
    """A fix: kebab-case id, a one-line title, when it is offered, its safety, and examples of
    which at least one shows it applied."""
    table = _table(file, key, value)
    _check_keys(file, f"{key}.", table, _FIX_KEYS, required=tuple(sorted(_FIX_KEYS)))
    fix_id = _string(file, f"{key}.id", table["id"])
    if not KEBAB.fullmatch(fix_id):
        raise CatalogError(f"{file}: {key}.id: {fix_id!r} is not kebab-case (e.g. 'pin-dp-library')")
    title = _string(file, f"{key}.title", table["title"]).strip()
    if "\n" in title:
        raise CatalogError(f"{file}: {key}.title: must be a single line")
    safety = _string(file, f"{key}.safety", table["safety"])
    if safety not in FIX_SAFETIES:
        raise CatalogError(f"{file}: {key}.safety: {safety!r} is not one of {', '.join(FIX_SAFETIES)}")
    examples = _list(file, f"{key}.examples", table["examples"], _parse_fix_example)
    if not any(e.after is not None for e in examples):
        raise CatalogError(f"{file}: {key}.examples: no example shows the fix applied (give one "
                           "an `after`)")
    return Fix(id=fix_id, title=title, when=_string(file, f"{key}.when", table["when"]).strip(),
               safety=safety, examples=examples)


def _parse_fix_example(file: Traversable, key: str, value: Any) -> FixExample:
    """A fix example: the edited file's ``before`` and either its ``after`` or, when the fix must
    not apply, ``unfixed`` (part of the reason given); the other ``files`` of the project."""
    table = _table(file, key, value)
    _check_keys(file, f"{key}.", table, _FIX_EXAMPLE_KEYS, required=("before",))
    path = table.get("path", EXAMPLE_MAIN_FILE)
    if path != EXAMPLE_MAIN_FILE:
        path = _example_path(file, f"{key}.path", _string(file, f"{key}.path", path))
    before = _text(file, f"{key}.before", table["before"])
    if ("after" in table) == ("unfixed" in table):
        raise CatalogError(f"{file}: {key}: give exactly one of `after` (the fixed file) and "
                           "`unfixed` (why no fix applies)")
    after = _text(file, f"{key}.after", table["after"]) if "after" in table else None
    if after == before:
        raise CatalogError(f"{file}: {key}.after: equals `before`; a fix must change the file")
    unfixed = _string(file, f"{key}.unfixed", table["unfixed"]).strip() \
        if "unfixed" in table else None
    files_table = _table(file, f"{key}.files", table.get("files", {}))
    files = tuple(
        (_example_path(file, f"{key}.files", name) if name != EXAMPLE_MAIN_FILE else name,
         _text(file, f"{key}.files.{name}", text))
        for name, text in sorted(files_table.items())
    )
    names = [path, *(name for name, _ in files)]
    if path in names[1:]:
        raise CatalogError(f"{file}: {key}.files: {path!r} is the edited file; give it as "
                           "`before`")
    if EXAMPLE_MAIN_FILE not in names:
        raise CatalogError(f"{file}: {key}.files: the project has no {EXAMPLE_MAIN_FILE}")
    return FixExample(name=_string(file, f"{key}.name", table.get("name", key)), before=before,
                      after=after, unfixed=unfixed, path=path, files=files)


def _parse_reference(file: Traversable, key: str, value: Any) -> Reference:
    table = _table(file, key, value)
    _check_keys(file, f"{key}.", table, _REFERENCE_KEYS, required=tuple(_REFERENCE_KEYS))
    url = _string(file, f"{key}.url", table["url"])
    if not url.startswith(("https://", "http://")):
        raise CatalogError(f"{file}: {key}.url: {url!r} is not an http(s) URL")
    return Reference(title=_string(file, f"{key}.title", table["title"]), url=url)


def _parse_example(file: Traversable, key: str, value: Any) -> Example:
    table = _table(file, key, value)
    _check_keys(file, f"{key}.", table, _EXAMPLE_KEYS, required=("code", "expect"))
    code = _text(file, f"{key}.code", table["code"])
    expect = _list(file, f"{key}.expect", table["expect"], _string)
    for index, rule_id in enumerate(expect):
        if not RULE_ID.fullmatch(rule_id):
            raise CatalogError(f"{file}: {key}.expect[{index}]: {rule_id!r} is not a rule id")
    if len(set(expect)) != len(expect):
        raise CatalogError(f"{file}: {key}.expect: lists a rule id twice")
    files_table = _table(file, f"{key}.files", table.get("files", {}))
    files = tuple(
        (_example_path(file, f"{key}.files", path), _text(file, f"{key}.files.{path}", text))
        for path, text in sorted(files_table.items())
    )
    pending = table.get("pending", False)
    if not isinstance(pending, bool):
        raise CatalogError(f"{file}: {key}.pending: must be true or false")
    return Example(
        name=_string(file, f"{key}.name", table.get("name", key)),
        code=code,
        expect=tuple(sorted(expect)),
        files=files,
        pending=pending,
    )


def _example_path(file: Traversable, key: str, path: str) -> str:
    """An example's extra file must stay inside its project and not replace ``example.py``."""
    pure = PurePosixPath(path)
    if (
        not path
        or pure.is_absolute()
        or "\\" in path
        or ".." in pure.parts
        or str(pure) != path
        or path == EXAMPLE_MAIN_FILE
    ):
        raise CatalogError(
            f"{file}: {key}: {path!r} must be a relative POSIX path inside the example project "
            f"(without '..') other than {EXAMPLE_MAIN_FILE}"
        )
    return path


def _check_examples_against(file: Traversable, rule: Rule, known: set[str]) -> None:
    """Examples may only expect rules that exist, and must show the rule firing and passing."""
    named = [(f"examples[{index}]", example) for index, example in enumerate(rule.examples)]
    if rule.minimal is not None:
        named += [("minimal.flagged", rule.minimal.flagged),
                  ("minimal.use-instead", rule.minimal.use_instead)]
    for key, example in named:
        unknown = sorted(set(example.expect) - known)
        if unknown:
            raise CatalogError(f"{file}: {key}.expect: unknown rule id(s) {', '.join(unknown)}")
    if rule.minimal is not None:
        if not rule.minimal.flagged.fires(rule.id):
            raise CatalogError(f"{file}: minimal.flagged.expect: must list {rule.id}")
        if rule.minimal.use_instead.fires(rule.id):
            raise CatalogError(f"{file}: minimal.use-instead.expect: must not list {rule.id}")
    if not rule.failing_examples:
        raise CatalogError(f"{file}: examples: no example expects {rule.id} (add a failing one)")
    if not rule.passing_examples:
        raise CatalogError(f"{file}: examples: every example expects {rule.id} (add a passing one)")


def _text(file: Traversable, key: str, value: Any) -> str:
    """A file's content: any string, empty included."""
    if not isinstance(value, str):
        raise CatalogError(f"{file}: {key}: must be a string (a file's text)")
    return value
