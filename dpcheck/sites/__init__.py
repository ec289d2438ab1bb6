"""Sites: the per-module summary (one pass over the module's ast) that the pipeline stage links into pipelines.

``CANDIDATE_MARKERS`` is the engine's cheap text pre-filter: a file containing none of these
substrings cannot hold a DP site and is only summarised if a pipeline imports it.
"""

from dpcheck.sites.summary import SUMMARY_VERSION, summarize_source, summarize_tree

CANDIDATE_MARKERS: tuple[str, ...] = (
    "noise", "opacus", "privacy", "clip", "sigma", "normal(", "normal_(", "randn", "epsilon",
    "accountant", "DataLoader", "shuffle", "argparse", "dp_", "add_argument", "rdp", "dp_accounting",
    "prv_accountant", "autodp", "permutation", "randperm", "bernoulli", "binomial", "sample_rate",
    "PrivacyEngine", "per_sample", "vmap", "grad_sample",
)

__all__ = ["CANDIDATE_MARKERS", "SUMMARY_VERSION", "summarize_source", "summarize_tree"]
