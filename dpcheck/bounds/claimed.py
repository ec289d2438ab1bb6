"""The claimed side: what the code's own accountant prints for the parameters it was given.

Every accountant dpcheck recognises assumes SGM with Poisson sampling; they differ only in how
they turn (q, sigma, T, delta) into epsilon. RDP accountants are reproduced with their order set
and (eps, delta) conversion (``dpcheck.privacy.rdp``), Opacus' GDP accountant with the CLT mu
(``dpcheck.privacy.clt``; not a bound, but what it prints), and PLD/PRV accountants with the
pessimistic PLD (``dpcheck.privacy.sgm``). ``opacus_sigma`` repeats the bisection of Opacus'
``get_noise_multiplier`` so that ``make_private_with_epsilon`` gets the sigma Opacus would pick.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from dpcheck.errors import ParameterError
from dpcheck.privacy._checks import MIN_SIGMA
from dpcheck.privacy.clt import clt_mu_poisson
from dpcheck.privacy.gdp import gdp_delta, gdp_epsilon
from dpcheck.privacy.rdp import Conversion, poisson_sgm_rdp_delta, poisson_sgm_rdp_epsilon
from dpcheck.privacy.sgm import poisson_sgm_delta, poisson_sgm_epsilon, poisson_sgm_epsilon_above

DP_ACCOUNTING_ORDERS: tuple[float, ...] = tuple(
    [1 + x / 10.0 for x in range(1, 100)] + list(range(11, 64)) + [128, 256, 512, 1024]
)
"""``dp_accounting.rdp.RdpAccountant``'s default orders."""

SIGMA_RESOLUTION = 1e-6
"""The sigma search stops once its bracket is this narrow (relative): where epsilon(sigma) jumps
over the target (an infinite epsilon below some sigma), Opacus' own loop would never end."""

OPACUS_MAX_SIGMA = 2000.0
"""Opacus gives up the sigma search beyond this (``MAX_SIGMA`` in ``accountants/utils.py``)."""


@dataclass(frozen=True)
class AccountantModel:
    """How one accountant computes epsilon: a display name and its method."""

    title: str
    method: str  # "rdp", "gdp" or "pld"
    orders: str | Sequence[float] = "opacus"
    conversion: Conversion = "improved"

    def epsilon(self, q: float, sigma: float, steps: int, delta: float) -> float:
        """The epsilon this accountant prints for T steps of SGM."""
        if self.method == "rdp":
            return poisson_sgm_rdp_epsilon(q, sigma, steps, delta, self.orders, self.conversion)
        if self.method == "gdp":
            mu = clt_mu_poisson(q, sigma, steps)
            return float(gdp_epsilon(delta, mu)) if math.isfinite(mu) else math.inf
        return poisson_sgm_epsilon(q, sigma, steps, delta)

    def epsilon_above(self, q: float, sigma: float, steps: int, delta: float, threshold: float) -> float:
        """``epsilon``, or a value above ``threshold`` that it is at least: what a search asking
        only "is epsilon below the threshold?" needs (the PLD composes its second direction
        only when the first does not answer; the closed forms are cheap as they are)."""
        if self.method == "pld":
            return poisson_sgm_epsilon_above(q, sigma, steps, delta, threshold)
        return self.epsilon(q, sigma, steps, delta)

    def delta(self, q: float, sigma: float, steps: int, epsilon: float) -> float:
        """The delta this accountant gives at ``epsilon``, from the same curve as ``epsilon``."""
        if self.method == "rdp":
            return poisson_sgm_rdp_delta(q, sigma, steps, epsilon, self.orders, self.conversion)
        if self.method == "gdp":
            mu = clt_mu_poisson(q, sigma, steps)
            return float(gdp_delta(epsilon, mu)) if math.isfinite(mu) else 1.0
        return poisson_sgm_delta(q, sigma, steps, epsilon)

    def describe(self) -> str:
        """How the number is obtained, for notes."""
        if self.method == "rdp":
            orders = self.orders if isinstance(self.orders, str) else "dp_accounting"
            return f"{self.title}: RDP with {orders} orders, {self.conversion} conversion"
        if self.method == "gdp":
            return f"{self.title}: CLT mu-GDP (asymptotic, not a bound; it is what Opacus prints)"
        return f"{self.title}: SGM privacy-loss distribution (pessimistic PLD, both directions)"


ACCOUNTANTS: dict[str, AccountantModel] = {
    "opacus-rdp": AccountantModel("Opacus RDP", "rdp", "opacus"),
    "opacus-prv": AccountantModel("Opacus PRV", "pld"),
    "opacus-gdp": AccountantModel("Opacus GDP", "gdp"),
    "tf-privacy-gdp": AccountantModel("TF-Privacy GDP", "gdp"),
    "tf-privacy-rdp": AccountantModel("TF-Privacy RDP", "rdp", "tf_privacy"),
    "dp-accounting-rdp": AccountantModel("dp_accounting RDP", "rdp", DP_ACCOUNTING_ORDERS),
    "dp-accounting-pld": AccountantModel("dp_accounting PLD", "pld"),
    "prv-accountant": AccountantModel("prv_accountant PRV", "pld"),
    "pld": AccountantModel("SGM PLD", "pld"),
    "rdp": AccountantModel("Opacus RDP", "rdp", "opacus"),
    "gdp": AccountantModel("Opacus GDP", "gdp"),
}
"""Accountant name (``Accountant.name`` of a pipeline, or ``--accountant``) -> its model. Any
other name (``custom``, ``none``, ...) is reported with the exact SGM PLD."""


def _major(version: str | None) -> int | None:
    head = (version or "").split(".")[0]
    return int(head) if head.isdigit() else None


def accountant_model(name: str, library_version: str | None = None) -> AccountantModel:
    """The model of accountant ``name``; Opacus before 1.0 used the classic RDP conversion."""
    model = ACCOUNTANTS.get(name, AccountantModel(f"accountant '{name}', shown as the exact SGM PLD", "pld"))
    if model.method == "rdp" and name in ("opacus-rdp", "rdp") and _major(library_version) == 0:
        return AccountantModel(model.title, "rdp", "opacus", "classic")
    return model


def opacus_sigma(
    target_epsilon: float, delta: float, q: float, steps: int, epsilon_of: Callable[[float], float],
    tolerance: float = 0.01,
) -> float:
    """The sigma ``opacus.accountants.utils.get_noise_multiplier`` returns: double sigma_high
    from 20 until epsilon <= target, then bisect until target - epsilon(sigma_high) <= tolerance.

    ``epsilon_of(sigma)`` is epsilon, or, where epsilon exceeds the target, any value above the
    target that epsilon is at least: the search only asks whether epsilon is below the target,
    and keeps the value only where it is."""
    sigma_low, sigma_high, eps_high = 0.0, 10.0, float("inf")
    while eps_high > target_epsilon:
        sigma_high *= 2.0
        eps_high = epsilon_of(sigma_high)
        if sigma_high > OPACUS_MAX_SIGMA:
            raise ParameterError(
                f"target epsilon {target_epsilon:g} is unreachable at q={q:g}, T={steps} "
                "(Opacus would raise 'The privacy budget is too low')"
            )
    while target_epsilon - eps_high > tolerance:
        sigma = (sigma_low + sigma_high) / 2.0
        if sigma < MIN_SIGMA:
            raise ParameterError(
                f"target epsilon {target_epsilon:g} needs a sigma below {MIN_SIGMA:g} at q={q:g}, T={steps}: "
                "that is no privacy at all (see --sigma)"
            )
        if sigma_high - sigma_low <= SIGMA_RESOLUTION * sigma_high:
            break  # epsilon jumps past the target here (to inf where delta is unreachable)
        eps = epsilon_of(sigma)
        if eps < target_epsilon:
            sigma_high, eps_high = sigma, eps
        else:
            sigma_low = sigma
    return sigma_high


@lru_cache(maxsize=256)
def searched_sigma(accountant: str, version: str | None, target_epsilon: float, delta: float,
                   q: float, steps: int) -> float:
    """``opacus_sigma`` with the named accountant, cached per parameter set."""
    model = accountant_model(accountant, version)
    return opacus_sigma(target_epsilon, delta, q, steps,
                        lambda s: model.epsilon_above(q, s, steps, delta, target_epsilon))
