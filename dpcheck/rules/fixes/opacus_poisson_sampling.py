"""DP102 ``opacus-poisson-sampling``: drop ``poisson_sampling=False`` from an Opacus 1.x
``make_private`` call, so Opacus draws Poisson batches, which is what its accountant assumes.

Offered when the finding is anchored on the engine call that keeps the user's fixed-size loader
and the call passes ``poisson_sampling`` (Opacus 1.x's default is ``True``). Unsafe: the batches
change from fixed-size to Poisson, so training behaves differently. The update rule stays
Opacus': with the default ``loss_reduction="mean"`` a 1.x release divides the noisy sum by
⌊N·q⌋ (FEASGM), so the re-analysed project's DP101 verdict on the pipeline is part of the fix's
note, and when that verdict is an error the fix is not applied (a new finding as severe as the
one fixed).
"""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

from dpcheck.model import SamplingKind
from dpcheck.rules.fixes.fix import FixDefinition, FixSite, NoFix, Outcome, Proposal
from dpcheck.rules.fixes.syntax import ParsedFile, keyword_argument, without_argument

KEYWORD = "poisson_sampling"
#: The rule whose verdict on the normalized update the fix reports.
NORMALIZED_UPDATE = "DP101"


def propose(site: FixSite) -> Sequence[Proposal] | NoFix:
    pipeline, span = site.pipeline, site.finding.span
    if pipeline is None or not (pipeline.library or "").startswith("opacus"):
        return NoFix("the batches are not drawn by an Opacus engine call")
    if not (pipeline.release or "").startswith("1."):
        return NoFix("only Opacus 1.x's make_private takes poisson_sampling (the release here is "
                     f"{pipeline.release or 'undecided'})")
    if span.path.endswith(".ipynb"):
        return NoFix("the call is in a notebook; dpcheck does not edit notebook cells")
    text = site.text(span.path)
    parsed = ParsedFile.parse(span.path, text) if text is not None else None
    call = parsed.at(span, cst.Call) if parsed is not None else None
    if parsed is None or not isinstance(call, cst.Call):
        return NoFix(f"the engine call at {span.path}:{span.line} could not be read back")
    argument = keyword_argument(call, (KEYWORD,))
    if argument is None:
        return NoFix(f"the call passes no {KEYWORD} to drop: its batches are fixed-size for "
                     "another reason (the loader it is given, a batch sampler)")
    edits = parsed.edit({call: without_argument(call, argument)})
    dropped = f"{KEYWORD}={parsed.code(argument.value)}"
    return [Proposal(edits, f"drop {dropped} (Opacus then draws Poisson batches)",
                     check=_poisson, consequence=_update_rule)]


def _poisson(outcome: Outcome) -> str | None:
    """After the edit, the pipeline's batches must be Poisson samples."""
    if outcome.pipeline is None:
        return "the pipeline no longer forms after the edit"
    if outcome.pipeline.sampling != SamplingKind.POISSON:
        return f"after the edit the batches are still {outcome.pipeline.sampler}"
    return None


def _update_rule(outcome: Outcome) -> str | None:
    """The update rule stays Opacus': its DP101 verdict on the fixed pipeline."""
    pipeline = outcome.pipeline
    mechanism = pipeline.mechanism if pipeline is not None else "unknown"
    verdict = next((f for f in outcome.findings if f.rule == NORMALIZED_UPDATE), None)
    said = (f"{verdict.rule} [{verdict.severity.value}] {verdict.message}" if verdict
            else f"no {NORMALIZED_UPDATE}")
    return f"the update rule stays Opacus' ({mechanism}): {said}"


FIX = FixDefinition("opacus-poisson-sampling", "DP102", propose)
