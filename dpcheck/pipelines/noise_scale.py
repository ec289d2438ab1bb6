"""Where a pipeline hands the noise scale to the code that draws the noise: the evidence that
anchors a low-noise finding on the script's ``noise_multiplier=`` argument when the draw itself
sits in a library class of the project (``DPSequential(noise_multiplier=...)``)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace

from dpcheck.model import Evidence, Span
from dpcheck.pipelines.binding import Binding
from dpcheck.pipelines.handwritten_update import HandwrittenUpdate
from dpcheck.pipelines.index import ProjectIndex
from dpcheck.pipelines.scope import Ctx
from dpcheck.pipelines.taint import read_names
from dpcheck.sites.ir import IR

#: Parameter names of a noise scale handed to the code that draws the noise.
NOISE_SCALE = re.compile(r"noise|sigma|std|scale", re.I)


def hand_over(index: ProjectIndex, update: HandwrittenUpdate) -> list[Evidence]:
    """Where the pipeline's own calls hand the noise scale to the code that draws the noise
    (``DPSequential(noise_multiplier=...)`` in the script when the draw sits in a model
    class of a library): the keyword a caller in the reach (``index.reach``) passes for the
    parameter the noise statement is built from, followed through local and ``self.``
    assignments. Only for a draw outside the caller's file; none when nothing is found."""
    found: list[Evidence] = []
    for ctx, _, statement in update.noise_calls[:1]:
        for param in _scale_params(index, statement, ctx, 0):
            for where, call in index.call_sites(param.ctx):
                line = call.keyword_lines.get(param.name)
                if line is not None and where.path != ctx.path \
                        and (where.path, where.scope) in index.reach:
                    found.append(Evidence("noise", Span(where.path, line), (
                        f"{param.name} handed to {call.name}(), which draws the "
                        f"noise at {ctx.path}:{ctx.line}")))
    return found


def _scale_params(index: ProjectIndex, expr: IR, ctx: Ctx, depth: int) -> Iterator[Binding]:
    """The function parameters named like a noise scale (``noise_multiplier``, ``sigma``,
    ``std``) that ``expr`` is computed from."""
    for name in sorted(set(read_names(expr))):
        binding = index.attribute(name, ctx)
        if binding is None:
            continue
        if binding.kind == "param" and NOISE_SCALE.search(binding.name):
            yield binding
        elif binding.kind == "assign" and binding.ir is not None and not binding.index \
                and depth < 4:
            yield from _scale_params(index, binding.ir, replace(binding.ctx, line=binding.line),
                                     depth + 1)
