"""What a hand-written update does to gradients: the record the hand-written update analysis
(``dpcheck.pipelines.handwritten``) fills, scope by scope, and the pipeline builder reads."""

from __future__ import annotations

from dataclasses import dataclass, field

from dpcheck.model import Evidence, Span
from dpcheck.pipelines.divisor import Dep
from dpcheck.pipelines.scope import Ctx
from dpcheck.sites.ir import IR
from dpcheck.sites.nodes import Call
from dpcheck.sites.views import Statement


@dataclass(frozen=True)
class Divisor:
    """A division applied to the noisy (or clipped) sum, with its data dependence."""

    dep: Dep
    span: Span
    text: str


@dataclass
class HandwrittenUpdate:
    """What a set of scopes does to gradients; ``is_dp_sgd`` when it is a DP-SGD update."""

    noise: list[Evidence] = field(default_factory=list)
    clip: list[Evidence] = field(default_factory=list)
    per_sample: list[Evidence] = field(default_factory=list)
    divisors: list[Divisor] = field(default_factory=list)
    updates: list[Evidence] = field(default_factory=list)
    opaque: list[Evidence] = field(default_factory=list)
    inverted: list[Evidence] = field(default_factory=list)
    noise_calls: list[tuple[Ctx, IR, IR]] = field(default_factory=list)
    clip_calls: list[tuple[Ctx, IR]] = field(default_factory=list)
    per_sample_names: set[str] = field(default_factory=set)
    #: Where per-example gradients are computed, whether or not a clip reaches them.
    per_sample_seen: list[Evidence] = field(default_factory=list)
    #: The noise draws whose noise reaches a value computed as a gradient (by a gradient call,
    #: a framework's gradient attribute, a clip, a per-example gradient, a backward hook's
    #: parameter), not merely a value whose name says so: the DP marker of ``markers``.
    gradient_noise: list[Evidence] = field(default_factory=list)
    #: Those of them whose noise lands on a value computed or used as a gradient (a gradient
    #: call or attribute, a descent direction), not merely on a clipped value: a clip call
    #: also bounds data (``np.clip`` of drawn labels).
    computed_noise: list[Evidence] = field(default_factory=list)
    #: The project functions followed with noisy-gradient parameters (``HandwrittenAnalyzer.
    #: _follow``), and whether the noise reaches an update or a return in them.
    followed: dict[tuple[Ctx, frozenset[str]], bool] = field(default_factory=dict)

    @property
    def is_dp_sgd(self) -> bool:
        return bool(self.noise and self.clip and self.per_sample and self.updates)

    @property
    def noisy_update(self) -> bool:
        """Gaussian noise on gradients that reaches an update, whether or not a per-example
        clip was seen: a DP-SGD update once an accountant claims a guarantee for it (each
        example's contribution may be bounded another way: a Lipschitz or one-hot bound, a
        projection)."""
        return bool(self.computed_noise and self.updates)


def evidence_span(ctx: Ctx, stmt: Statement, node: IR | None = None) -> Span:
    """Where evidence is: the call ``node`` when given, else the whole statement."""
    if isinstance(node, Call):
        return Span(ctx.path, *node.position)
    end_line, end_col = stmt.end
    return Span(ctx.path, stmt.line, stmt.column, end_line, end_col)
