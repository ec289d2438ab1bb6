"""DP101 ``divide-by-batch-size``: a hand-written update divides the noisy sum by the public
constant its data-dependent divisor estimates.

Under Poisson sampling at rate q over N examples the realized batch size ``len(xb)``, the
expected one ``len(dataset) * q`` and its floor all estimate q·N. Dividing by a constant chosen
before training instead is post-processing of the SGM, which is what the accountant assumes
(docs/theory.md#update-rules). The constant must be a name the code already has, so the fix is
the user's own vocabulary and the sampling rate stays what it was:

1. the batch size the sample rate is built from: the numerator of ``q = B / N`` where the code
   builds q (``args.batch_size`` of ``q = args.batch_size / len(train_set)``), or the name
   holding the batch-size hyper-parameter (``BATCH = 256``);
2. ``q * N_PUBLIC`` where q has a name and the dataset size is a declared constant (a dataset
   size read from the data is itself private: no fix then).

Each name must mean at the division what it means where it was found (the same binding, in the
same file). The division itself is left to the analysis: each division of the divisor
statement is a proposal, and re-analysis keeps the one after which the update is SGM.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import libcst as cst

from dpcheck.model import Mechanism, ParamValue, Pipeline, Role
from dpcheck.pipelines.vocabulary import vocabulary
from dpcheck.rules.fixes.fix import FixDefinition, FixSite, NoFix, Outcome, Proposal
from dpcheck.rules.fixes.syntax import (
    ParsedFile,
    assigned_name,
    dotted,
    expression,
    head,
    short,
)

#: Parameter sources that are hyper-parameters: fixed before training, public.
HYPER_PARAMETER = frozenset({"literal", "constant", "argparse-default", "config",
                             "function-default"})


def _divide_call(node: cst.CSTNode) -> bool:
    """A ``div``-like call, as a method (``noisy.div_(n)``) or a plain name."""
    if not isinstance(node, cst.Call):
        return False
    func = node.func
    name = func.attr if isinstance(func, cst.Attribute) else func
    return isinstance(name, cst.Name) and name.value in vocabulary()["divisions"].methods


Files = Callable[[str], ParsedFile | None]


@dataclass(frozen=True)
class Public:
    """A public expression for the divisor: its text, the names it reads with where each was
    found (the node whose binding it must keep), and how to say where it comes from."""

    text: str
    names: tuple[cst.Name, ...]
    parsed: ParsedFile
    why: str


def propose(site: FixSite) -> Sequence[Proposal] | NoFix:
    pipeline = site.pipeline
    if pipeline is None:
        return NoFix("its pipeline is not part of this scan")
    if pipeline.library is not None:
        return NoFix(f"{pipeline.library} divides the noisy sum itself: the repair is in how "
                     "the library is called (the rule's fix), and it changes the step size")
    statements = [e.span for e in pipeline.evidence if e.role == Role.DIVISOR]
    if not statements:
        return NoFix("the update takes a mean over the batch instead of dividing a sum")
    if any(span.path.endswith(".ipynb") for span in statements):
        return NoFix("the division is in a notebook; dpcheck does not edit notebook cells")
    files: dict[str, ParsedFile | None] = {}

    def parsed_of(path: str) -> ParsedFile | None:
        if path not in files:
            text = site.text(path)
            files[path] = ParsedFile.parse(path, text) if text is not None else None
        return files[path]

    public = public_batch(pipeline, parsed_of)
    if isinstance(public, NoFix):
        return public
    sites: list[list[cst.BaseExpression]] = []
    for span in dict.fromkeys(statements):
        parsed = parsed_of(span.path)
        statement = parsed.at(span, cst.BaseSmallStatement) if parsed is not None else None
        if parsed is None or statement is None:
            return NoFix(f"the division at {span.path}:{span.line} could not be read back")
        if parsed is not public.parsed:
            return NoFix(f"{public.text} is defined in {public.parsed.path}, not in "
                         f"{span.path} where the update divides")
        divisors = [d for d in _divisors(statement) if parsed.code(d).strip() != public.text]
        hidden = [n.value for n in public.names if not parsed.visible(n.value, statement, n)]
        if hidden:
            return NoFix(f"{', '.join(hidden)} does not mean at {span.path}:{span.line} what it "
                         "means where the sample rate is built")
        if not divisors:
            return NoFix(f"no division to replace at {span.path}:{span.line}")
        sites.append(divisors)
    proposals = []
    for k in range(max(len(divisors) for divisors in sites)):
        chosen = [divisors[min(k, len(divisors) - 1)] for divisors in sites]
        replaced = ", ".join(dict.fromkeys(short(public.parsed.code(d)) for d in chosen))
        edits = public.parsed.edit({d: expression(public.text, d) for d in chosen})
        proposals.append(Proposal(edits, f"divide by {public.text} ({public.why}) instead of "
                                  f"{replaced}", check=_sgm))
    return proposals


def public_batch(pipeline: Pipeline, parsed_of: Files) -> Public | NoFix:
    """The public expression the divisor estimates (the module docstring's order), or why
    there is none."""
    params = pipeline.params
    q, batch, size = params.get("q"), params.get("batch_size"), params.get("N")
    public_batch_size = batch is not None and batch.source in HYPER_PARAMETER
    built = _numerator(q, parsed_of) if q is not None else None
    if built is not None and public_batch_size:
        return built
    named_batch = _named(batch, parsed_of)
    if named_batch is not None and public_batch_size:
        name, parsed = named_batch
        return Public(name.value, (name,), parsed, "the batch-size hyper-parameter")
    if q is None or q.value is None:
        return NoFix("the sample rate q is not resolved and no named batch-size "
                     "hyper-parameter was found, so the constant the divisor estimates is not "
                     "known")
    named_rate, named_size = _named(q, parsed_of), _named(size, parsed_of)
    if q.source in HYPER_PARAMETER and named_rate and named_size and size is not None \
            and size.source == "constant" and named_rate[1] is named_size[1]:
        rate, count = named_rate[0], named_size[0]
        return Public(f"{rate.value} * {count.value}", (rate, count), named_rate[1],
                      "the sample rate times the declared dataset size")
    if size is not None and size.value is not None and size.source not in HYPER_PARAMETER:
        return NoFix(f"q = {q.value:g} is built from no named batch size and N = "
                     f"{size.value:g} comes from the data (private): declare the batch size "
                     f"(q·N = {q.value * size.value:g} here) as a constant, build q from it "
                     "(`q = BATCH / N`) and divide by it")
    return NoFix(f"q = {q.value:g} is built from no named batch size, and no declared "
                 "dataset size names q·N")


def _numerator(q: ParamValue, parsed_of: Files) -> Public | None:
    """``B`` of the one ``B / N`` the statement that builds q holds, when B is a name."""
    if q.span is None or q.source != "derived" or q.expression is not None \
            or not q.span.path.endswith(".py"):
        return None
    parsed = parsed_of(q.span.path)
    statement = parsed.statement_on(q.span.line) if parsed is not None else None
    if parsed is None or statement is None:
        return None
    ratios = [n for n in _walk(statement)
              if isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.Divide)]
    if len(ratios) != 1 or dotted(ratios[0].left) is None:
        return None
    name = head(ratios[0].left)
    text = dotted(ratios[0].left)
    assert name is not None and text is not None
    return Public(text, (name,), parsed, f"the batch size of q = {short(parsed.code(ratios[0]))}")


def _named(param: ParamValue | None, parsed_of: Files) -> tuple[cst.Name, ParsedFile] | None:
    """The plain name the statement where ``param``'s value is written assigns, if any."""
    if param is None or param.span is None or param.expression is not None \
            or not param.span.path.endswith(".py"):
        return None
    parsed = parsed_of(param.span.path)
    name = assigned_name(parsed, param.span.line, param.value, param.source == "literal") \
        if parsed is not None else None
    return (name, parsed) if name is not None and parsed is not None else None


def _divisors(statement: cst.CSTNode) -> list[cst.BaseExpression]:
    """What each division of the statement divides by, in source order: the right operand of
    ``/`` and ``//``, the value of ``/=`` and ``//=``, the last positional argument of a
    ``div``-like call; number literals left out (a constant already)."""
    found: list[cst.BaseExpression] = []
    for node in _walk(statement):
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.Divide, cst.FloorDivide)):
            found.append(node.right)
        elif isinstance(node, cst.AugAssign) \
                and isinstance(node.operator, (cst.DivideAssign, cst.FloorDivideAssign)):
            found.append(node.value)
        elif _divide_call(node):
            plain = [a for a in node.args if a.keyword is None and not a.star]  # type: ignore[attr-defined]
            if plain:
                found.append(plain[-1].value)
    return [d for d in found if not isinstance(d, (cst.Integer, cst.Float))]


def _walk(node: cst.CSTNode) -> list[cst.CSTNode]:
    """``node`` and every node below it, in source order."""
    found = [node]
    for child in node.children:
        found.extend(_walk(child))
    return found


def _sgm(outcome: Outcome) -> str | None:
    """After the edit, the update must be the plain SGM."""
    if outcome.pipeline is None:
        return "the pipeline no longer forms after the edit"
    if outcome.pipeline.mechanism != Mechanism.SGM:
        return f"after the edit dpcheck classifies the update as {outcome.pipeline.mechanism}"
    return None


FIX = FixDefinition("divide-by-batch-size", "DP101", propose)
