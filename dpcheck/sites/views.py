"""Typed views of a module summary (the cached JSON of ``dpcheck.sites.summary``).

The cache keeps short keys (``"k"``, ``"e"``, ``"br"``) to stay small; analysis code reads the
summary through these views, which are the stored dicts with their parts named and their
expressions typed (``dpcheck.sites.nodes``). ``module_view`` builds them once per summary.
"""

from __future__ import annotations

from typing import Any

from dpcheck.sites.nodes import Node, node, optional


class Statement(dict):  # type: ignore[type-arg]
    """One recorded statement of a scope.

    ``kind`` is ``assign``, ``aug`` (augmented assignment, operator ``op``), ``expr``,
    ``return``, ``for`` (``expr`` is the iterable, ``target`` the loop target), ``while``
    (``expr`` is the test) or ``with``. ``target`` is a dotted name, ``name[]`` for a
    subscript, a list for unpacking, or None. ``loop`` is the index in the scope's statements
    of the innermost enclosing loop header (-1: none) and ``loop_depth`` how many loops enclose
    it; ``arms`` the ``if`` arms it sits in as (if line, 0 body | 1 else) pairs; ``source`` the
    statement's text where it may be a DP site.
    """

    __slots__ = ()

    @property
    def kind(self) -> str:
        return str(self["k"])

    @property
    def target(self) -> Any:
        return self["t"]

    @property
    def expr(self) -> Node:
        return self["e"]  # type: ignore[no-any-return]

    @property
    def line(self) -> int:
        return int(self["line"])

    @property
    def column(self) -> int:
        return int(self["col"])

    @property
    def end(self) -> tuple[int, int]:
        end_line, end_column = self["end"]
        return end_line, end_column

    @property
    def loop(self) -> int:
        return int(self["loop"])

    @property
    def loop_depth(self) -> int:
        return int(self["ld"])

    @property
    def arms(self) -> list[tuple[int, int]]:
        return [(line, arm) for line, arm in self.get("br", ())]

    @property
    def source(self) -> str | None:
        return self.get("src")

    @property
    def op(self) -> str | None:
        return self.get("op")


class Param(tuple):  # type: ignore[type-arg]
    """A function parameter and its default expression (None: no default)."""

    __slots__ = ()

    def __new__(cls, name: str, default: Node | None) -> Param:
        return super().__new__(cls, (name, default))

    @property
    def name(self) -> str:
        return str(self[0])

    @property
    def default(self) -> Node | None:
        return self[1]  # type: ignore[no-any-return]


class Scope(dict):  # type: ignore[type-arg]
    """The module body, a function, a method or a class body: its statements in source order,
    its parameters, the class it belongs to (``owner``: a method's class, a class body's own
    name; None otherwise), its ``if`` tests by line, the names it declares ``global`` and, for a
    function, its decorators."""

    __slots__ = ()

    @property
    def line(self) -> int:
        return int(self["line"])

    @property
    def params(self) -> list[Param]:
        return self["params"]  # type: ignore[no-any-return]

    @property
    def statements(self) -> list[Statement]:
        return self["stmts"]  # type: ignore[no-any-return]

    @property
    def owner(self) -> str | None:
        return self.get("class")

    def if_test(self, line: int) -> Node | None:
        return self.get("ifs", {}).get(str(line))  # type: ignore[no-any-return]

    @property
    def if_lines(self) -> list[int]:
        return [int(line) for line in self.get("ifs", {})]

    @property
    def globals(self) -> list[str]:
        return list(self.get("globals", ()))

    @property
    def decorators(self) -> list[Node]:
        return self.get("decorators", [])  # type: ignore[no-any-return]


class Option(dict):  # type: ignore[type-arg]
    """A command-line option declaration (argparse ``add_argument``, click ``option``, absl
    ``DEFINE_*``): its destination name, flags, default expression and ``action``."""

    __slots__ = ()

    @property
    def dest(self) -> str:
        return str(self["dest"])

    @property
    def flags(self) -> list[str]:
        return list(self["flags"])

    @property
    def default(self) -> Node | None:
        return self["default"]  # type: ignore[no-any-return]

    @property
    def line(self) -> int:
        return int(self["line"])

    @property
    def action(self) -> str | None:
        return self.get("action")


class ModuleSummary(dict):  # type: ignore[type-arg]
    """One module: its imports (local name -> dotted target), classes (qualified name -> line
    and base names), options, scopes by qualified name, and whether it has a ``__main__``
    block."""

    __slots__ = ()

    @property
    def path(self) -> str:
        return str(self["path"])

    @property
    def imports(self) -> dict[str, str]:
        return self["imports"]  # type: ignore[no-any-return]

    @property
    def stars(self) -> list[str]:
        """The modules this one imports ``*`` from (``from .analysis import *``)."""
        return list(self.get("stars", ()))

    @property
    def classes(self) -> dict[str, dict[str, Any]]:
        return self["classes"]  # type: ignore[no-any-return]

    def bases(self, cls: str) -> list[str | None]:
        return list(self["classes"][cls]["bases"])

    @property
    def options(self) -> list[Option]:
        return self["argparse"]  # type: ignore[no-any-return]

    @property
    def scopes(self) -> dict[str, Scope]:
        return self["scopes"]  # type: ignore[no-any-return]

    @property
    def has_main(self) -> bool:
        return bool(self["has_main"])

    @property
    def unsupported(self) -> str | None:
        """Why dpcheck could not read the module (its summary then holds no sites); None when
        it could."""
        return self.get("unsupported")


def _statement(stored: dict[str, Any]) -> Statement:
    statement = Statement(stored)
    statement["e"] = node(stored["e"])
    return statement


def _scope(stored: dict[str, Any]) -> Scope:
    scope = Scope(stored)
    scope["params"] = [Param(name, optional(default)) for name, default in stored["params"]]
    scope["stmts"] = [_statement(s) for s in stored["stmts"]]
    scope["ifs"] = {line: node(test) for line, test in stored.get("ifs", {}).items()}
    scope["decorators"] = [node(decorator) for decorator in stored.get("decorators", ())]
    return scope


def _option(stored: dict[str, Any]) -> Option:
    option = Option(stored)
    option["default"] = optional(stored["default"])
    return option


def module_view(stored: dict[str, Any]) -> ModuleSummary:
    """The typed view of a stored summary (a new object; the stored one is left as it is)."""
    if isinstance(stored, ModuleSummary):
        return stored
    summary = ModuleSummary(stored)
    summary["scopes"] = {qual: _scope(scope) for qual, scope in stored["scopes"].items()}
    summary["argparse"] = [_option(option) for option in stored["argparse"]]
    return summary
