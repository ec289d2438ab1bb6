"""Full-batch training: every step uses the whole dataset, which is Poisson sampling with q = 1.

Poisson sampling at rate q includes each example independently with probability q; at q = 1 it
includes every example every step, so a deterministic full batch *is* that sampling, and an
accountant told q = 1 (Opacus ``sample_rate=1``, a ``PoissonSampledDpEvent(1.0, ...)``) describes
the code exactly: it claims no amplification by sampling. A pipeline is read as full-batch when
both hold: no sampling site was found in it at all (no loop over a loader, no index draw: the
training loop reads the data as a whole), and its accountant is given q = 1. Either alone is not
enough: without the accountant's q = 1 the data may be sampled where dpcheck could not see, and
a q = 1 claim beside a sampler is the sampler's to decide.

A loader whose one batch per epoch is the whole dataset (``batch_size=N``) keeps its own kind
(shuffle, M = 1): DP102 already stays silent there, and its normalization is read as a loader's.
"""

from __future__ import annotations

from dpcheck.model import Accountant, Evidence
from dpcheck.pipelines.sampling.decision import NO_SAMPLING, Sampling


def full_batch(sampling: Sampling, accountant: Accountant) -> Sampling | None:
    """Poisson sampling with q = 1 for a pipeline that samples nothing and whose accountant is
    given q = 1 (the module docstring); None otherwise."""
    rate = accountant.q
    if sampling.kind != "unknown" or sampling.note != NO_SAMPLING or accountant.span is None \
            or rate is None or rate.value != 1:
        return None
    return Sampling("poisson", [Evidence(
        "sampler", accountant.span,
        f"full batch: no sampling, every step uses the whole dataset, which is Poisson sampling "
        f"with q = 1 as {accountant.name} is told")])
