"""Functions a command-line framework runs: the decorators of ``dpcheck/data/entry_points.json``.

A script that declares ``@hydra.main(...) def train(cfg)``, ``@click.command() def main(...)``
or ``@app.command() def fit(...)`` (``app = typer.Typer()``) runs that function when the script
runs, although no call to it is written: the function is reached from the script like
``main()``. Decorators are matched by import-qualified name (``ProjectIndex.library_name``),
never by their last part. The table is validated on load: a malformed entry is a
``DpcheckError`` naming it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import lru_cache
from importlib import resources
from typing import Any

from dpcheck.errors import DpcheckError
from dpcheck.pipelines.index import ProjectIndex
from dpcheck.pipelines.scope import Ctx
from dpcheck.sites.nodes import Call, Name, Node


def parse_table(data: Any) -> frozenset[str]:
    """The decorator names of the table (``DpcheckError`` naming a bad entry)."""
    if not isinstance(data, dict) or data.get("schema") != 1 \
            or not isinstance(data.get("decorators"), list):
        raise DpcheckError("dpcheck/data/entry_points.json: expected \"schema\": 1 and a "
                           "\"decorators\" list")
    names: set[str] = set()
    for index, entry in enumerate(data["decorators"]):
        if not isinstance(entry, dict) or set(entry) != {"name", "what"} \
                or not all(isinstance(v, str) and v for v in entry.values()):
            raise DpcheckError(f"dpcheck/data/entry_points.json: decorators[{index}]: needs "
                               "exactly a 'name' and a 'what' string")
        names.add(entry["name"])
    return frozenset(names)


@lru_cache(maxsize=1)
def entry_decorators() -> frozenset[str]:
    """The shipped table (read and validated once per process)."""
    text = resources.files("dpcheck.data").joinpath("entry_points.json").read_text("utf-8")
    return parse_table(json.loads(text))


def decorated_entries(index: ProjectIndex, path: str) -> Iterator[Ctx]:
    """The module-level functions of ``path`` that a framework decorator makes entries."""
    summary = index.summary(path)
    if summary is None:
        return
    module = Ctx(path, "<module>")
    for qual, scope in summary.scopes.items():
        if "." in qual or qual == "<module>" or scope.owner is not None:
            continue
        if any(_decorator_name(index, decorator, module) in entry_decorators()
               for decorator in scope.decorators):
            yield Ctx(path, qual)


def _decorator_name(index: ProjectIndex, decorator: Node, module: Ctx) -> str | None:
    """The import-qualified name of what a decorator calls (``@f`` or ``@f(...)``)."""
    callee = decorator.callee if isinstance(decorator, Call) else decorator
    return index.library_name(callee.dotted, module) if isinstance(callee, Name) else None
