"""Classify a DP library's own source (e.g. Opacus at one release) with the user-code classifiers.

``classify_library(files)`` reads per-file summaries (``dpcheck.sites``; the library is never
imported) and decides, with the same divisor classifier that decides user pipelines, how the
library normalizes the noisy gradient sum: every division of a gradient or noise tensor
(``p.grad /= k``, ``noise /= batch_size``, ``return summed_grad / batch_size``), every rescale
``p.grad *= a / b`` and every ``expected_batch_size`` / ``avg_batch_size`` the library computes.
Library idioms the user-code classifier does not follow are followed here:

* a divisor unpacked from a method's returned tuple (Opacus 0.x: ``clip_values, batch_size =
  self.clipper.pre_step()``) is read from that method's ``return`` at the same position, and an
  attribute it returns (``self._aggr_batch_size``) from the class's writes to that attribute;
* the leading axis of a per-sample gradient (``next(g.shape[0] for g in grad_samples)``) is the
  realized batch;
* a divisor that reads the library's expected batch size (``self.expected_batch_size``) takes the
  kind of the library's own computation of it; that computation, when the classifier cannot
  resolve its operands, is read as a product rate x size (``sample_rate * sample_size``),
  floored or not.

It also reads the public entry point's defaults (Poisson on by default, default accountant),
whether a Poisson sampler ships with the library and, from the ``if`` tests the summaries keep,
which of the divisions still run with ``loss_reduction="sum"`` (the ``normalization_sum``
cell). ``dpcheck history`` calls it once per git tag with summaries from its blob cache, so each
distinct file version is parsed once.

One module over 500 lines on purpose: it adapts every user-code classifier to the idioms of a
library's own source in one place, so the history table has one reader.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from dpcheck.model import Evidence, Span
from dpcheck.pipelines.divisor import DivisorClassifier
from dpcheck.pipelines.index import ProjectIndex
from dpcheck.pipelines.scope import Ctx
from dpcheck.sites import summarize_source
from dpcheck.pipelines.vocabulary import calls_in
from dpcheck.sites.ir import IR, tail_name
from dpcheck.sites.nodes import (
    BinOp,
    Call,
    Compare,
    Const,
    Name,
    Node,
    Num,
    Opaque,
    Seq,
    Str,
    Subscript,
    UnaryOp,
    node,
)
from dpcheck.sites.views import Scope, Statement

SummarySource = Callable[[str], "dict[str, Any] | None"]
"""Path -> that file's ``dpcheck.sites`` summary (None when the file is absent)."""

SKIPPED = re.compile(r"(^|/)(tests?|examples|benchmarks|tutorials|docs?|website)/"
                     r"|(^|/)test_[^/]*\.py$|_test\.py$")
CODES = {"realized": "A", "expected": "EA", "floor-expected": "FEA"}
MECHANISMS = {"A": "ASGM", "EA": "EASGM", "FEA": "FEASGM"}
EXPECTED_NAMES = ("expected_batch_size", "avg_batch_size")
ACCOUNTANTS = {"rdp": "opacus-rdp", "prv": "opacus-prv", "gdp": "opacus-gdp"}
SAMPLERS = ("UniformWithReplacementSampler", "DPDataLoader")
POISSON_FLAGS = (("make_private", "poisson_sampling"), ("__init__", "poisson"))
_MAX_DEPTH = 8


@dataclass(frozen=True)
class LibraryRow:
    """One release's behaviour in the version table's vocabulary (``normalization_mean`` and
    ``normalization_sum`` are A, EA, FEA, none or unknown), with the evidence (path:line of the
    library source) it rests on, the outcomes a user flag selects (``variants``) and, for each
    cell left unknown, why (``reasons``: cell -> reason)."""

    normalization_mean: str
    normalization_sum: str
    poisson_builtin: bool
    poisson_default: bool | None
    default_accountant: str | None
    mechanism: str
    evidence: tuple[Evidence, ...] = field(default_factory=tuple)
    variants: tuple[dict[str, str], ...] = ()
    reasons: tuple[tuple[str, str], ...] = ()


def is_library_path(path: str) -> bool:
    """A Python file of the library itself (its tests, examples and docs are callers)."""
    return path.endswith(".py") and not SKIPPED.search(path)


class _Files:
    """The minimal project view ``ProjectIndex`` needs, over summaries of library files."""

    def __init__(self, paths: Collection[str], source: SummarySource) -> None:
        self.paths = tuple(sorted(p for p in paths if is_library_path(p)))
        self._summaries: dict[str, dict[str, Any] | None] = {}
        self._source = source

    def summary(self, path: str) -> dict[str, Any] | None:
        if path not in self._summaries:
            self._summaries[path] = self._source(path)
        return self._summaries[path]

    def candidate_paths(self) -> tuple[str, ...]:
        return self.paths


@dataclass(frozen=True)
class _Reading:
    """A divisor's kind and the evidence chain that led to it."""

    kind: str
    evidence: tuple[Evidence, ...] = ()
    reason: str | None = None


class _Reader:
    """Classifies the library's gradient divisors, following the library idioms above."""

    def __init__(self, project: _Files) -> None:
        self.project = project
        self.index = ProjectIndex(project)  # type: ignore[arg-type]
        self.divisors = DivisorClassifier(self.index)
        self._expected: _Reading | None = None
        self._calls: dict[str, list[tuple[Ctx, Call]]] | None = None
        self._arguments: dict[tuple[str, str, str], _Reading | None] = {}

    def scopes_of(self, path: str) -> dict[str, Scope]:
        summary = self.index.summary(path)
        return summary.scopes if summary is not None else {}

    def statements(self) -> Iterator[tuple[Ctx, Statement]]:
        for path in self.project.paths:
            for qual, scope in self.scopes_of(path).items():
                for stmt in scope.statements:
                    yield Ctx(path, qual, stmt.line), stmt

    def scopes(self, tail: str) -> Iterator[tuple[str, str, Scope]]:
        """(path, qualname, scope) of every function or method named ``tail``."""
        for path in self.project.paths:
            for qual, scope in self.scopes_of(path).items():
                if tail_name(qual) == tail:
                    yield path, qual, scope

    def expected(self) -> _Reading:
        """The kind of the library's own expected-batch-size computation (the last one read)."""
        if self._expected is None:
            readings = [self.read(stmt.expr, ctx, 0, stmt) for ctx, stmt in self.statements()
                        if stmt.kind == "assign" and tail_name(stmt.target) in EXPECTED_NAMES]
            known = [r for r in readings if r.kind in ("expected", "floor-expected")]
            self._expected = known[-1] if known else _Reading(
                "unknown", reason="no computation of the expected batch size found")
        return self._expected

    def read(self, ir: IR, ctx: Ctx, depth: int, stmt: Statement | None = None) -> _Reading:
        """The kind of divisor ``ir`` read at ``ctx`` (``stmt``, if given, is its evidence)."""
        ir = node(ir)
        here = () if stmt is None else (_evidence("divisor", ctx, stmt),)
        if stmt is not None and tail_name(stmt.target) not in EXPECTED_NAMES \
                and _reads_expected(ir):
            found = self.expected()
            return _Reading(found.kind, here + found.evidence, found.reason)
        dep = self.divisors.classify(ir, ctx)
        if dep.kind != "unknown":
            return _Reading(dep.kind, here)
        if depth < _MAX_DEPTH:
            followed = self._local(ir, ctx, depth) or self._product(ir, ctx) or _per_sample_size(ir)
            if followed is not None:
                return _Reading(followed.kind, here + followed.evidence, followed.reason)
        return _Reading("unknown", here, dep.unknown)

    def _product(self, ir: IR, ctx: Ctx) -> _Reading | None:
        """``rate * size`` (optionally under a floor): the expected batch size N*q, read from its
        operands' names when the classifier cannot resolve them (library attributes)."""
        expr = node(ir)
        floor = isinstance(expr, Call) and len(expr.args) == 1 \
            and calls_in("floors", expr, ctx, self.index)
        inner = expr.argument(0) if floor and isinstance(expr, Call) else expr
        if not isinstance(inner, BinOp) or isinstance(inner, Compare) or inner.op != "*":
            return None
        names = sorted(n.last for n in (inner.left, inner.right) if isinstance(n, Name))
        if len(names) != 2:
            return None
        rate, size = names
        if rate.endswith("rate") and size.endswith("size"):
            return _Reading("floor-expected" if floor else "expected")
        return None

    def _local(self, ir: IR, ctx: Ctx, depth: int) -> _Reading | None:
        """A local name the classifier could not follow: its last assignment's expression, or,
        unpacked from ``obj.method()``, ``method``'s returned tuple element at its position."""
        ir = node(ir)
        if not isinstance(ir, Name) or "." in ir.dotted:
            return None
        scope = self.index.scope(ctx)
        binding = _last_binding(scope, ir.dotted, ctx.line) if scope is not None else None
        if binding is None:
            return self._argument(ir.dotted, ctx, scope, depth)
        position, expr, line = binding
        if position is None:
            return self.read(expr, Ctx(ctx.path, ctx.scope, line), depth + 1)
        if not isinstance(expr, Call) or not isinstance(expr.callee, Name):
            return None
        for path, qual, scope in self.scopes(expr.callee.last):
            for stmt in scope.statements:
                returned = stmt.expr
                if stmt.kind == "return" and isinstance(returned, Seq) \
                        and len(returned.items) > position:
                    element = returned.items[position]
                    reading = self._element(element, Ctx(path, qual, stmt.line), depth + 1)
                    if reading.kind != "unknown":
                        return reading
        return None

    def _argument(self, name: str, ctx: Ctx, scope: Scope | None, depth: int
                  ) -> _Reading | None:
        """A parameter: the arguments every call of this function passes for it (by position
        or keyword), when all that can be read agree (Opacus 0.x ``_scale_summed_grad``)."""
        params = [p.name for p in scope.params] if scope is not None else []
        key = (ctx.path, ctx.scope, name)
        if name not in params or key in self._arguments:
            return self._arguments.get(key)
        self._arguments[key] = None  # a call cycle reads as unresolved
        method = tail_name(ctx.scope)
        position = params.index(name) - (1 if params[:1] == ["self"] else 0)
        readings = []
        for call_ctx, site in self.calls().get(method, []):
            passed = site.kwargs.get(name) or (
                site.args[position] if position < len(site.args) else None)
            if passed is not None:
                readings.append(self.read(passed, call_ctx, depth + 1))
        known = [r for r in readings if r.kind != "unknown"]
        if known and len({r.kind for r in known}) == 1:
            first, *_ = known
            self._arguments[key] = first
        return self._arguments[key]

    def calls(self) -> dict[str, list[tuple[Ctx, Call]]]:
        """Every call in the library by the callee's last name (built once)."""
        if self._calls is None:
            self._calls = {}
            for ctx, stmt in self.statements():
                for part in stmt.expr.walk():
                    if isinstance(part, Call) and (callee := part.name) is not None:
                        self._calls.setdefault(tail_name(callee), []).append((ctx, part))
        return self._calls

    def _element(self, ir: Node, ctx: Ctx, depth: int) -> _Reading:
        """A returned value: a local name is read in place; ``self.attr`` from the class's
        writes to it (literal resets such as ``= 0`` are not the divisor's source)."""
        if not isinstance(ir, Name) or not ir.dotted.startswith("self."):
            return self.read(ir, ctx, depth)
        enclosing, _, _ = ctx.scope.rpartition(".")
        cls = enclosing or ctx.scope
        readings = [
            self.read(stmt.expr, Ctx(ctx.path, qual, stmt.line), depth + 1, stmt)
            for qual, scope in self.scopes_of(ctx.path).items() if qual.startswith(f"{cls}.")
            for stmt in scope.statements
            if stmt.target == ir.dotted and stmt.kind in ("assign", "aug")
            and not isinstance(stmt.expr, Num)
        ]
        useful = [r for r in readings if r.kind != "constant"]
        if useful and len({r.kind for r in useful}) == 1:
            first, *_ = useful
            return first
        return _Reading("unknown", reason=f"{ir.dotted} is written with divisors of mixed kinds")



def _reads_expected(ir: Node) -> bool:
    """Whether a divisor reads the library's expected batch size (a name or attribute)."""
    return any(isinstance(n, Name) and n.last in EXPECTED_NAMES for n in ir.walk())


def _evidence(role: str, ctx: Ctx, stmt: Statement) -> Evidence:
    text = (stmt.source or "").splitlines()
    target = stmt.target if isinstance(stmt.target, str) \
        else ", ".join(map(str, stmt.target or ()))
    first_line = next(iter(text), None)
    note = first_line.strip() if first_line is not None else f"{target} = ..."
    return Evidence(role, Span(ctx.path, stmt.line), note)


def _last_binding(scope: Scope, name: str, line: int) -> tuple[int | None, Node, int] | None:
    """(tuple position or None, expression, line) of the last assignment to ``name`` before
    ``line`` in ``scope``."""
    found = None
    for stmt in scope.statements:
        target = stmt.target
        if stmt.line >= line or stmt.kind != "assign":
            continue
        if target == name:
            found = (None, stmt.expr, stmt.line)
        elif isinstance(target, list) and name in target:
            found = (target.index(name), stmt.expr, stmt.line)
    return found


def _per_sample_size(ir: Node) -> _Reading | None:
    """``next(g.shape[0] for g in ...grad_samples...)``: the leading axis of a per-sample
    gradient is the realized batch (Opacus 0.x counts its batch this way)."""
    nodes = list(ir.walk())
    leading = any(isinstance(n, Subscript) and isinstance(n.value, Name)
                  and n.value.dotted.endswith(".shape")
                  and isinstance(n.index, Num) and n.index.value == 0 for n in nodes)
    per_sample = any(isinstance(n, Name) and "grad_sample" in n.dotted for n in nodes)
    return _Reading("realized") if leading and per_sample else None


def _grad_divisors(stmt: Statement) -> Iterator[Node]:
    """Divisors applied to a gradient or noise tensor in one statement."""
    target = stmt.target if isinstance(stmt.target, str) else ""
    expr = stmt.expr
    touches = "grad" in target or "noise" in target
    if stmt.kind == "aug" and stmt.op == "/" and touches:
        yield expr
    if not isinstance(expr, BinOp) or isinstance(expr, Compare) or expr.op != "/":
        return
    if stmt.kind == "aug" and stmt.op == "*" and touches:
        yield expr.right
    if stmt.kind == "return" and isinstance(expr.left, Name) and "grad" in expr.left.dotted:
        yield expr.right


def _default(reader: _Reader, function: str, param: str) -> tuple[Node, Evidence] | None:
    """The literal default of ``param`` of the first function named ``function``."""
    for path, qual, scope in reader.scopes(function):
        for name, default in scope.params:
            if name == param and default is not None:
                shown = repr(default.value) if isinstance(default, (Const, Str, Num)) else "..."
                note = f"def {qual}(..., {name}={shown})"
                return default, Evidence("", Span(path, scope.line), note)
    return None


def _relabel(evidence: Evidence, role: str) -> Evidence:
    return Evidence(role, evidence.span, evidence.note)


def _samplers(reader: _Reader) -> list[Evidence]:
    return [Evidence("poisson:sampler", Span(path, info["line"]), f"class {name}")
            for path in reader.project.paths
            if (summary := reader.index.summary(path)) is not None
            for name, info in summary.classes.items() if name in SAMPLERS]


def _unparsable(reader: _Reader) -> list[str]:
    return [f"{path} does not parse ({summary.unsupported})" for path in reader.project.paths
            if (summary := reader.index.summary(path)) is not None
            and summary.unsupported is not None]


def _summarizer(texts: Mapping[str, str]) -> SummarySource:
    def summary(path: str) -> dict[str, Any] | None:
        text = texts.get(path)
        return None if text is None else summarize_source(text, path)
    return summary


def classify_library(files: Mapping[str, str] | Collection[str],
                     summaries: SummarySource | None = None) -> LibraryRow:
    """The behaviour of the DP library made of ``files``: path -> source text, or just the
    paths when ``summaries`` supplies each file's summary (``dpcheck history`` passes cached
    summaries so that a file version shared by many tags is parsed once)."""
    if summaries is None:
        summaries = _summarizer(files if isinstance(files, Mapping) else {})
    reader = _Reader(_Files(list(files), summaries))
    divisions = [(ctx, stmt, reader.read(divisor, ctx, 0, stmt))
                 for ctx, stmt in reader.statements() for divisor in _grad_divisors(stmt)]
    readings = [r for _, _, r in divisions]
    data = [r for r in readings if r.kind in CODES]
    evidence: list[Evidence] = []
    for reading in data:
        evidence.extend(e for e in (_relabel(x, "normalization:mean") for x in reading.evidence)
                        if e not in evidence)
    # a divisor by the expected batch size only exists for the Poisson path (a realized one
    # beside it is the path without the flag, a variant); the last one read decides
    expected = [r for r in data if r.kind != "realized"]
    code = CODES[(expected or data)[-1].kind] if data else "unknown"
    reasons: list[tuple[str, str]] = []
    broken = _unparsable(reader)
    if not data:
        why = next((r.reason for r in readings if r.reason), "no division of a gradient found")
        reasons.append(("normalization_mean", "; ".join([why, *broken])))
    flag = next(((param, *found) for function, param in POISSON_FLAGS
                 if (found := _default(reader, function, param)) is not None), None)
    samplers = _samplers(reader)
    evidence.extend(samplers)
    flag_param, flag_default, flag_evidence = flag if flag is not None else (None, None, None)
    poisson_default = isinstance(flag_default, Const) and flag_default.value is True
    if flag_evidence is not None:
        evidence.append(_relabel(flag_evidence, "poisson:default"))
    builtin = bool(samplers) or flag is not None
    mechanism = MECHANISMS.get(code, "unknown") if builtin else "not supported"
    if mechanism == "unknown":
        reasons.append(("mechanism", "the normalization is unknown"))
    sum_code, why = _sum_normalization(
        reader, [(c, s, r) for c, s, r in divisions if r.kind in CODES], evidence)
    if sum_code == "unknown":
        reasons.append(("normalization_sum", "; ".join([why, *broken])))
    return LibraryRow(
        normalization_mean=code,
        normalization_sum=sum_code,
        poisson_builtin=builtin,
        poisson_default=poisson_default,
        default_accountant=_accountant(reader, evidence),
        mechanism=mechanism,
        evidence=tuple(evidence),
        variants=_variants(flag_param, poisson_default, {r.kind for r in data}),
        reasons=tuple(reasons),
    )


def _accountant(reader: _Reader, evidence: list[Evidence]) -> str | None:
    found = _default(reader, "__init__", "accountant")
    default, shown = found if found is not None else (None, None)
    if isinstance(default, Str) and default.value in ACCOUNTANTS and shown is not None:
        evidence.append(_relabel(shown, "accountant"))
        return ACCOUNTANTS[default.value]
    # engines without an accountant choice report through their RDP analysis module
    for path, qual, scope in reader.scopes("compute_rdp"):
        evidence.append(Evidence("accountant", Span(path, scope.line), f"def {qual}"))
        return "opacus-rdp"
    return None


def _sum_normalization(reader: _Reader,
                       divisions: list[tuple[Ctx, Statement, _Reading]],
                       evidence: list[Evidence]) -> tuple[str, str]:
    """The normalization with ``loss_reduction="sum"``, read from the branches: of the
    divisions that decide ``normalization_mean`` (by the batch size, realized or expected), those
    that still run in that mode (not inside an ``if`` arm that requires ``"mean"``, such as
    ``if self.loss_reduction == "mean": p.grad /= ...``) decide it; ``none`` when every one is
    gated so. ``unknown`` (with the reason) without the option, without a division to read, or
    when the divisions left differ in kind."""
    if not any(_default(reader, f, "loss_reduction") for f in ("__init__", "make_private",
                                                               "attach")):
        return "unknown", "no loss_reduction option found"
    if not divisions:
        return "unknown", "no gradient division found to read the sum branch from"
    left: list[_Reading] = []
    for ctx, stmt, reading in divisions:
        gate = _mean_gate(reader.scopes_of(ctx.path).get(ctx.scope), stmt)
        if gate is None:
            left.append(reading)
            continue
        found = Evidence("normalization:sum", Span(ctx.path, gate),
                         f'divides only when loss_reduction == "mean" (line {stmt.line})')
        if found.span not in {e.span for e in evidence if e.role == "normalization:sum"}:
            evidence.append(found)
    kinds = {r.kind for r in left}
    if not kinds:
        return "none", ""
    evidence.extend(_relabel(e, "normalization:sum") for r in left for e in r.evidence[:1])
    if len(kinds) == 1:
        return CODES[kinds.pop()], ""
    return "unknown", f"the divisions left with loss_reduction=\"sum\" differ: {sorted(kinds)}"


def _mean_gate(scope: Scope | None, stmt: Statement) -> int | None:
    """The line of an ``if`` whose arm holding ``stmt`` runs only when loss_reduction is
    ``"mean"`` (not ``"sum"``), else None."""
    for line, arm in stmt.arms:
        if _excludes_sum(scope.if_test(line) if scope is not None else None, arm == 0):
            return int(line)
    return None


def _excludes_sum(test: Node | None, holds: bool) -> bool:
    """Whether ``test`` evaluating to ``holds`` implies loss_reduction != "sum": a comparison
    of a ``loss_reduction`` name with "mean" or "sum", through ``not``, a true ``and`` (any
    conjunct) and a false ``or`` (any disjunct)."""
    if test is None:
        return False
    if isinstance(test, UnaryOp) and test.op == "not":
        return _excludes_sum(test.operand, not holds)
    if isinstance(test, Opaque) and test.kind in ("and", "or") and holds == (test.kind == "and"):
        return any(_excludes_sum(part, holds) for part in test.parts)
    if not isinstance(test, Compare) or test.op not in ("==", "!="):
        return False
    sides = (test.left, test.right)
    named = [side.dotted for side in sides if isinstance(side, Name)]
    literal = [side.value for side in sides if isinstance(side, Str)]
    if len(named) != 1 or len(literal) != 1:
        return False
    [reader], [value] = named, literal
    if tail_name(reader) != "loss_reduction":
        return False
    equal = holds == (test.op == "==")
    return (value == "mean") == equal and value in ("mean", "sum")


def _variants(param: str | None, poisson_default: bool,
              kinds: set[str]) -> tuple[dict[str, str], ...]:
    """Outcomes a user flag selects instead of the Poisson path."""
    if param is None:
        return ()
    if poisson_default:
        return ({"when": f"{param}=False", "sampling": "shuffle", "mechanism": "fixed-mean"},)
    if "realized" in kinds and len(kinds) > 1:
        return ({"when": f"{param}=False (the default)", "normalization_mean": "A",
                 "mechanism": "ASGM"},)
    return ()
