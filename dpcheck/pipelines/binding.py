"""What a name is bound to (``Binding``): the answer of name resolution (``names``)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from dpcheck.pipelines.scope import Ctx
from dpcheck.sites.ir import IR


@dataclass(frozen=True)
class Binding:
    """What a name is bound to. ``kind`` is one of ``assign``, ``loop``, ``param``, ``option``,
    ``module`` (an imported module or an object imported from one; ``library`` when it is not a
    project file, ``name`` then being its import-qualified name), ``function``, ``class`` or
    ``global`` (a module name that several functions assign under ``global``: which value a
    reader sees is not decided).

    ``ir`` is the bound expression (the assigned value, the loop iterable, the parameter default,
    the option default); ``index`` the tuple-unpacking position (None if not unpacked); ``ctx``
    where ``ir`` must itself be read; ``line`` the line of the binding (for provenance).
    """

    kind: str
    ir: IR | None
    ctx: Ctx
    line: int
    index: tuple[int, ...] | None = None
    name: str = ""
    library: bool = False

    def assigned(self) -> tuple[IR, Ctx] | None:
        """The expression of a plain (not unpacked) assignment and where to read it, else None."""
        if self.kind != "assign" or self.ir is None or self.index:
            return None
        return self.ir, replace(self.ctx, line=self.line)
