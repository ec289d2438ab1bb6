"""DP103 ``account-code-sampling``: give the accountant the sample rate and the step count the
code actually samples with.

For each parameter the accountant is given differently from the code (q, steps), the argument
of the accountant call that carries it (the DP library API catalog says which one,
``dpcheck/data/accountants.toml``) is replaced by the code's own expression for it:

* q: the name the code's q is assigned to (``q = BATCH / len(images)``), else the code's batch
  size over its dataset size when the accountant takes those two (``n=..., batch_size=...``);
* steps: the name or the ``range(...)`` bound the training loop counts with
  (``EPOCHS * steps_per_epoch``), else, for an accountant given epochs, the code's epochs.

Every name must mean at the accountant call what it means where the code uses it (the same
binding, in the same file). Safe: training is unchanged; only the reported epsilon changes, to
the one of the run. After the edit the accountant's q and steps must be resolved and agree with
the code's.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from fnmatch import fnmatchcase

import libcst as cst

from dpcheck.catalog.apis import Api, load_api_catalog
from dpcheck.model import ParamValue, Pipeline
from dpcheck.rules.anchors import anchor
from dpcheck.rules.fixes.fix import FixDefinition, FixSite, NoFix, Outcome, Proposal
from dpcheck.rules.fixes.syntax import (
    ParsedFile,
    assigned_name,
    callee_last,
    keyword_argument,
    positional_argument,
    short,
)
from dpcheck.rules.sample_rate_mismatch import mismatched

#: For each compared parameter, the accountant arguments that may carry it, in the order tried:
#: the parameter itself, else the code parameters it is derived from.
CARRIERS: dict[str, tuple[tuple[str, ...], ...]] = {
    "q": (("q",), ("N", "batch_size")),
    "steps": (("steps",), ("epochs",)),
}


def propose(site: FixSite) -> Sequence[Proposal] | NoFix:
    pipeline = site.pipeline
    if pipeline is None:
        return NoFix("its pipeline is not part of this scan")
    found = mismatched(pipeline)
    if not found:
        return NoFix("the accountant's q and steps agree with the code's")
    replacements: dict[cst.CSTNode, cst.CSTNode] = {}
    said: list[str] = []
    parsed: ParsedFile | None = None
    for mismatch, role in found:
        span = anchor(pipeline, role) or pipeline.accountant.span
        if span is None or span.path.endswith(".ipynb"):
            return NoFix("the accountant call is in a notebook; dpcheck does not edit notebook "
                         "cells")
        if parsed is not None and parsed.path != span.path:
            return NoFix("the accountant's arguments are given in more than one file")
        text = site.text(span.path)
        parsed = parsed or (ParsedFile.parse(span.path, text) if text is not None else None)
        if parsed is None:
            return NoFix(f"{span.path} could not be read back")
        calls = [c for c in parsed.nodes(cst.Call) if parsed.within(c, span)]
        chosen = _replacements(parsed, pipeline, mismatch.name, calls)
        if isinstance(chosen, NoFix):
            return chosen
        for argument, (code, value) in chosen.items():
            replacements[argument] = argument.with_changes(value=value)
            keyword = f"{argument.keyword.value}=" if argument.keyword else ""
            said.append(f"{keyword}{short(parsed.code(argument.value))} -> {keyword}{short(code)}")
    assert parsed is not None
    names = tuple(m.name for m, _ in found)
    return [Proposal(parsed.edit(replacements),
                     f"give the accountant the code's {' and '.join(names)} ({'; '.join(said)})",
                     check=lambda outcome: _agrees(outcome, names))]


def _replacements(parsed: ParsedFile, pipeline: Pipeline, name: str, calls: list[cst.Call]
                  ) -> dict[cst.Arg, tuple[str, cst.BaseExpression]] | NoFix:
    """The accountant arguments to replace for the parameter ``name``, each with the code's
    text and expression, from the first carrier (``CARRIERS``) the call takes and the code
    names."""
    reasons: list[str] = []
    for carrier in CARRIERS[name]:
        arguments = {param: found for param in carrier
                     if (found := _argument(calls, param)) is not None}
        if len(arguments) != len(carrier):
            continue
        chosen: dict[cst.Arg, tuple[str, cst.BaseExpression]] = {}
        for param, argument in arguments.items():
            code = code_expression(parsed, pipeline.params.get(param), at=argument)
            if isinstance(code, str):
                reasons.append(code)
                break
            text = parsed.code(code).strip()
            chosen[argument] = (text, cst.parse_expression(text))
        else:
            return chosen
    if not reasons:
        return NoFix(f"no argument of the accountant call carries {name} (the accountant "
                     "counts it itself, from its step() calls or its events)")
    return NoFix("; ".join(reasons))


def _argument(calls: list[cst.Call], param: str) -> cst.Arg | None:
    """The argument carrying ``param`` in the innermost of ``calls`` whose catalog entry has
    it (the calls lie in the accountant evidence's span, which the analysis matched)."""
    for call in reversed(calls):
        for api in _apis(callee_last(call)):
            where = api.args.get(param)
            if where is None:
                continue
            found = keyword_argument(call, where.keywords) or positional_argument(
                call, where.position)
            if found is not None:
                return found
    return None


def _apis(last: str | None) -> Iterator[Api]:
    if last is None:
        return iter(())
    return (api for api in load_api_catalog().apis
            if any(fnmatchcase(last, pattern.last) for pattern in api.patterns))


def code_expression(parsed: ParsedFile, param: ParamValue | None, at: cst.CSTNode
                    ) -> cst.BaseExpression | str:
    """The code's own expression for ``param`` that means the same at ``at``: the one name
    assigned it, or the bound of the ``range`` a loop counts it with; else why there is none."""
    if param is None or param.value is None:
        return "the code's value is not resolved"
    where = param.span
    if param.source == "override" or where is None:
        return f"the code's {param.name} = {param.value:g} comes from an override, not the code"
    if where.path != parsed.path:
        return f"the code's {param.name} is set in {where.path}, not beside the accountant call"
    expression: cst.BaseExpression | None = assigned_name(
        parsed, where.line, param.value, param.source == "literal")
    if expression is None:
        statement = next((n for n in parsed.nodes(cst.For)
                          if parsed.positions[n].start.line == where.line), None)
        expression = _range_bound(statement) if isinstance(statement, cst.For) else None
    if expression is None:
        return (f"the code's {param.name} = {param.value:g} has no name dpcheck can give the "
                f"accountant ({param.expression or 'computed in place'})")
    hidden = sorted({n.value for n in _names(expression)
                     if not parsed.visible(n.value, at, n)})
    if hidden:
        return (f"{', '.join(hidden)} does not mean at the accountant call what it means where "
                f"the code's {param.name} is set")
    return expression


def _range_bound(loop: cst.For) -> cst.BaseExpression | None:
    """``n`` of ``for _ in range(n)``: a loop counted by one bound."""
    call = loop.iter
    if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and call.func.value == "range"
            and len(call.args) == 1 and call.args[0].keyword is None and not call.args[0].star):
        return None
    return call.args[0].value


def _names(node: cst.CSTNode) -> Iterator[cst.Name]:
    """The names an expression reads (an attribute chain by its first name)."""
    if isinstance(node, cst.Name):
        yield node
        return
    if isinstance(node, cst.Attribute):
        yield from _names(node.value)
        return
    for child in node.children:
        yield from _names(child)


def _agrees(outcome: Outcome, names: tuple[str, ...]) -> str | None:
    """After the edit the accountant's ``names`` (q, steps) must be resolved and match the
    code's."""
    pipeline = outcome.pipeline
    if pipeline is None:
        return "the pipeline no longer forms after the edit"
    if mismatched(pipeline):
        return "the accountant still disagrees with the code"
    given = {"q": pipeline.accountant.q, "steps": pipeline.accountant.steps}
    unresolved = [name for name in names if given[name] is None or given[name].value is None]
    if unresolved:
        return f"dpcheck cannot resolve the accountant's {', '.join(unresolved)} after the edit"
    return None


FIX = FixDefinition("account-code-sampling", "DP103", propose)
