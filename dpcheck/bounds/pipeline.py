"""From a finding's pipeline to a bound request: which mechanism, which numbers, what is missing.

The numbers are the pipeline's statically resolved parameters; what the accountant was given
(DP103) comes from ``Accountant.q/steps/sigma``. A missing input is reported with the exact
``--param`` / ``[tool.dpcheck.params]`` line that supplies it; where a default is sound it is used
and said so (delta 1e-5 for the read-outs; n = 1 for a witness, which only strengthens with n).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dpcheck.bounds.defaults import DEFAULT_DELTA
from dpcheck.bounds.request import BoundRequest
from dpcheck.model import Pipeline
from dpcheck.samplers import kind_of_pipeline

if TYPE_CHECKING:
    from dpcheck.rules.rule import BoundPolicy

NEEDS_N: frozenset[str] = frozenset({"easgm", "feasgm", "asgm-or-easgm", "shuffle"})
#: Mechanisms whose witness grows with the model size n (n = 1 is assumed when it is unknown).
NEEDS_DIM: frozenset[str] = frozenset({"easgm", "feasgm", "asgm-or-easgm"})


@dataclass(frozen=True)
class Missing:
    """An input that could not be resolved, how to supply it, and the default used (if any)."""

    param: str
    assumed: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "param": self.param,
            "advice": f"--param {self.param}=VALUE  or  [tool.dpcheck.params] {self.param} = VALUE",
            "assumed": self.assumed,
        }


@dataclass(frozen=True)
class Plan:
    """The request to compute (None when a needed input is missing) and the missing inputs."""

    mechanism: str
    request: BoundRequest | None
    missing: tuple[Missing, ...]
    known: dict[str, Any]
    #: What the divisor check of a normalized update needs (N and the divisor's rule), when
    #: known even if the bound's other inputs are not: a divisor that does not change at N-1,
    #: N and N+1 is decided without sigma or the number of steps.
    divisor: BoundRequest | None = None


def _value(pipeline: Pipeline, name: str) -> Any:
    param = pipeline.params.get(name)
    return None if param is None else param.value


def _version(library: str | None) -> str | None:
    """"opacus==1.4.0" -> "1.4.0"; a range or a bare name -> None."""
    if not library or "==" not in library:
        return None
    return library.split("==", 1)[1].strip() or None


def _sampler(pipeline: Pipeline) -> str:
    """The sampler kind a non-Poisson bound is computed for: the pipeline's, or fixed-size
    batches of an undecided order (whose bounds hold for a shuffled and a sequential order)."""
    kind = kind_of_pipeline(pipeline.sampler, pipeline.sampling)
    return kind.name if kind is not None and kind.sampling != "poisson" else "shuffled-or-sequential"


def _int(value: Any) -> int | None:
    return None if value is None else int(value)


def plan(policy: BoundPolicy, pipeline: Pipeline) -> Plan | None:
    """The bound plan of a finding of ``pipeline`` under its rule's ``policy``, or None when
    the policy gives no bound for this pipeline."""
    mechanism = policy.mechanism_of(pipeline)
    if mechanism is None:
        return None
    get = lambda name: _value(pipeline, name)  # noqa: E731 - a short local reader
    known = {name: param.value for name, param in sorted(pipeline.params.items()) if param.value is not None}
    opacus = (pipeline.library or "").startswith("opacus")
    opacus_loader = opacus and pipeline.mechanism == "FEASGM" and get("batch_size") is not None
    missing: list[Missing] = []
    if get("sigma") is None and get("target_epsilon") is None:
        missing.append(Missing("sigma"))
    rate_known = get("q") is not None or (get("batch_size") is not None and get("N") is not None)
    if not rate_known:
        missing.append(Missing("q"))
    if get("steps") is None and get("epochs") is None:
        missing.append(Missing("steps"))
    if mechanism in NEEDS_N and get("N") is None:
        missing.append(Missing("N"))
    if mechanism in NEEDS_DIM and get("dim") is None:
        missing.append(Missing("dim", "n = 1 for the witness (the smallest model; it only gets stronger with n)"))
    if get("delta") is None:
        missing.append(Missing("delta", f"delta = {DEFAULT_DELTA:g} for the read-outs"))
    divisor = None
    if mechanism in ("easgm", "feasgm") and get("N") is not None and rate_known:
        divisor = BoundRequest(mechanism=mechanism, q=None if opacus_loader else get("q"),
                               batch_size=_int(get("batch_size")), n_records=_int(get("N")),
                               opacus_divisor=opacus_loader, drop_last=bool(get("drop_last")))
    if any(m.assumed is None for m in missing):
        return Plan(mechanism, None, tuple(missing), known, divisor)
    accountant = pipeline.accountant
    by_accountant = policy.claimed_by_accountant
    claimed_q = accountant.q.value if accountant.q is not None else None
    claimed_steps = accountant.steps.value if accountant.steps is not None else None
    claimed_sigma = accountant.sigma.value if accountant.sigma is not None else None
    epochs_first = opacus_loader and get("epochs") is not None
    request = BoundRequest(
        mechanism=mechanism,
        sigma=get("sigma"),
        q=None if opacus_loader else get("q"),
        batch_size=_int(get("batch_size")),
        n_records=_int(get("N")),
        steps=None if epochs_first else _int(get("steps")),
        epochs=get("epochs") if epochs_first or get("steps") is None else None,
        dim=_int(get("dim")),
        delta=get("delta") or DEFAULT_DELTA,
        clip=get("clip"),
        opacus_divisor=opacus_loader,
        drop_last=bool(get("drop_last")),
        accountant=accountant.name,
        library_version=_version(pipeline.library),
        claimed_q=claimed_q if by_accountant else None,
        claimed_steps=_int(claimed_steps) if by_accountant else None,
        claimed_sigma=claimed_sigma if by_accountant and claimed_sigma != get("sigma") else None,
        target_epsilon=get("target_epsilon") if get("sigma") is None else None,
        sampler=_sampler(pipeline),
    )
    return Plan(mechanism, request, tuple(missing), known, divisor)
