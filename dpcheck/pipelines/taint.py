"""How a value reaches another in a hand-written update: the names an expression is computed
from through arithmetic only, and the names a statement binds.

The hand-written update analysis (``dpcheck.pipelines.handwritten``) follows noise, clipped and
per-example gradients forward through local variables ("taint"). A value flows on through
arithmetic and tensor-arithmetic calls (``ARITH_CALLS``), never through other calls, so noise
added to the *input* and pushed through ``model(x)`` never reaches the update.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from dpcheck.pipelines.index import ProjectIndex
from dpcheck.pipelines.scope import Ctx
from dpcheck.pipelines.steps import is_noise_draw
from dpcheck.sites.ir import IR
from dpcheck.sites.nodes import Attr, BinOp, Call, Comp, Name, Seq, Subscript, UnaryOp, node
from dpcheck.sites.views import Statement

ARITH_CALLS = frozenset({
    "sum", "add", "add_", "sub", "sub_", "mul", "mul_", "div", "div_", "true_divide", "stack",
    "cat", "concatenate", "mean", "clone", "detach", "reshape", "view", "to", "copy_", "float",
    "view_as", "reshape_as",
    "enumerate",
    "normal", "randn", "randn_like", "normal_", "standard_normal", "stateless_normal",
    "random_normal", "tensor", "zeros_like",
    "flatten", "squeeze", "unsqueeze", "tree_map", "asarray", "array", "multiply", "divide",
    "einsum", "matmul", "dot", "tensordot", "where", "pow", "sqrt", "zip", "items", "values",
    "reduce_sum", "reduce_mean", "add_n", "cast", "convert_to_tensor", "identity",
    # Optimizer steps that take the update itself (TF ``apply_gradients(zip(grads, vars))``,
    # optax ``apply_updates``): a noisy gradient handed to them is applied.
    "apply_gradients", "apply_updates",
})
#: Methods that change their receiver (``acc.add_(g)``, ``norms.append(p.batch_l2)``).
INPLACE = frozenset({"add_", "sub_", "mul_", "div_", "copy_", "append"})


def read_names(ir: IR) -> Iterator[str]:
    """Every name read in ``ir``."""
    for part in node(ir).walk():
        if isinstance(part, Name):
            yield part.dotted


def assigned_names(target: Any) -> Iterator[str]:
    """The names a summary statement target binds (``x``, ``a.b``, ``x[]`` as ``x``, the
    names of an unpacking list)."""
    if isinstance(target, str):
        yield target.removesuffix("[]")
    elif isinstance(target, list):
        for item in target:
            yield from assigned_names(item)


def touches(names: Iterable[str], tainted: set[str]) -> bool:
    """Whether one of ``names`` is tainted, or an attribute of a tainted name."""
    return any(n in tainted or any(n.startswith(t + ".") for t in tainted) for n in names)


def arith_flow(expr: IR) -> set[str]:
    """Names whose value flows into ``expr`` through arithmetic only (not ``model(x)``)."""
    flowing: set[str] = set()
    stack = [node(expr)]
    while stack:
        part = stack.pop()
        if isinstance(part, Name):
            flowing.add(part.dotted)
        elif isinstance(part, Call):
            if part.method not in ARITH_CALLS:
                continue
            callee = part.callee
            if isinstance(callee, Name) and callee.base:
                flowing.add(callee.base)
            elif isinstance(callee, Attr):
                stack.append(callee.base)
            stack.extend(part.args)
            stack.extend(part.kwargs.values())
        elif isinstance(part, BinOp):
            stack.extend((part.left, part.right))
        elif isinstance(part, UnaryOp):
            stack.append(part.operand)
        elif isinstance(part, Subscript):
            stack.append(part.value)
        elif isinstance(part, Seq):
            stack.extend(part.items)
        elif isinstance(part, Comp):
            stack.append(part.element)
            stack.extend(part.iterables)
    return flowing


def descent_directions(stmts: Iterable[Statement]) -> set[str]:
    """The names a value is moved against, scaled, in its own update: ``w = w - lr * g`` or
    ``w -= lr * g``. That is a descent step, so what they hold is a gradient whatever it is
    called and however it was computed (a closed-form gradient returned by a project
    function); the step size flows in too and is harmless, never being noised."""
    found: set[str] = set()
    for stmt in stmts:
        expr = stmt.expr
        if stmt.kind == "aug" and stmt.op == "-":
            step = expr
        elif stmt.kind == "assign" and isinstance(expr, BinOp) and expr.op == "-" \
                and isinstance(expr.left, Name) and expr.left.dotted in assigned_names(stmt.target):
            step = expr.right
        else:
            continue
        if isinstance(step, BinOp) and step.op == "*":
            found |= arith_flow(step)
    return found


def noise_marker(ir: IR, ctx: Ctx, index: ProjectIndex) -> set[str]:
    """``{"<noise>"}`` when ``ir`` (read at ``ctx``) draws Gaussian noise itself, else the empty
    set: a stand-in name that taints what the draw flows into."""
    return {"<noise>"} if any(isinstance(part, Call) and is_noise_draw(part, ctx, index)
                              for part in node(ir).walk()) else set()
