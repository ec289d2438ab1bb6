"""TF-Privacy's DP optimizers (Keras and TF1 ``DP*GaussianOptimizer``): where the user builds one
and how it normalizes the noisy sum.

The optimizers divide the noisy sum of clipped microbatch gradients by ``num_microbatches``: a
constant when given one (post-processing of the SGM, or ``fixed-mean`` with fixed batches), the
realized batch size (``tf.shape(loss)[0]``) when it is left ``None``. With ``num_microbatches=1``
the whole batch is one microbatch: the mean-loss gradient is clipped as a unit and an example's
influence on it is not bounded by the clip norm alone, so the update is left ``unknown``. A
``num_microbatches`` read from a module name that another function rebinds under ``global``
(the GDP tutorials set ``microbatches = len(subsampling)`` before each step) is that function's
value: the index binds it so.
"""

from __future__ import annotations

from collections.abc import Iterable

from dpcheck.pipelines.apis import api_of
from dpcheck.pipelines.divisor import DivisorClassifier
from dpcheck.pipelines.index import ProjectIndex
from dpcheck.pipelines.scope import Ctx
from dpcheck.pipelines.values import Evaluator
from dpcheck.sites.nodes import Call

KEYWORDS = {"sigma": "noise_multiplier", "clip": "l2_norm_clip"}
_OPTIMIZER = frozenset({"optimizer"})


def find_optimizer(index: ProjectIndex, scopes: Iterable[Ctx]) -> tuple[Ctx, Call] | None:
    """The first TF-Privacy DP optimizer constructed in the statements of ``scopes`` that may
    run, matched by qualified name (``optimizer`` entries of ``dpcheck/data/dp_engines.toml``)."""
    return next(((where, node) for where, _, node in index.calls(scopes)
                 if isinstance(node, Call) and api_of(index, node, where, _OPTIMIZER) is not None),
                None)


def normalization(index: ProjectIndex, ctx: Ctx, call: Call) -> tuple[str, str]:
    """(divisor kind, why) of a TF-Privacy optimizer call."""
    microbatches = call.kwargs.get("num_microbatches")
    if microbatches is None or microbatches == ["c", None]:
        return "realized", "num_microbatches=None: the noisy sum is divided by the realized batch"
    count = Evaluator(index).value(microbatches, ctx)
    if count is not None and count.value == 1:
        return "unknown", ("num_microbatches=1: the gradient of the batch-mean loss is clipped as "
                           "one unit, so one example's sensitivity is not the clip norm")
    dep = DivisorClassifier(index).classify(microbatches, ctx)
    return dep.kind, f"the noisy sum is divided by num_microbatches ({dep.kind})" + (
        f": {dep.unknown}" if dep.unknown else "")

