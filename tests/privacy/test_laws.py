"""The scipy.special forms of the normal and chi-square law functions give what scipy.stats
gives, bit for bit, over the whole range the engine feeds them and past its edges (the
bounds users publish must not move because the scan stopped importing scipy.stats)."""

from __future__ import annotations

import ast
import warnings
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import chi2, norm

from dpcheck.privacy import _laws

RNG = np.random.default_rng(20261201)
POINTS = np.concatenate([
    [-np.inf, -1e300, -50.0, -1.0, -0.0, 0.0, 1e-300, 1e-10, 0.5, 1.0, 38.5, 50.0, 1e3, 1e300, np.inf, np.nan],
    RNG.normal(0.0, 10.0, 500),
    RNG.exponential(50.0, 500),
])
PROBABILITIES = np.concatenate([
    [0.0, 1e-300, 1e-200, 1e-17, 0.5, 1.0 - 1e-16, 1.0, -0.1, 1.1, np.nan],
    RNG.uniform(0.0, 1.0, 500),
    10.0 ** RNG.uniform(-300.0, 0.0, 500),
])
DOFS = [1, 2, 3, 7.5, 100, 1e4, 1e8]


def same(ours: object, theirs: object) -> bool:
    a, b = np.asarray(ours), np.asarray(theirs)
    return a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True)


def test_normal_functions_are_scipy_stats_norm() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert same(_laws.normal_pdf(POINTS), norm.pdf(POINTS))
        assert same(_laws.normal_isf(PROBABILITIES), norm.isf(PROBABILITIES))
    assert type(_laws.normal_isf(0.3)) is type(norm.isf(0.3)) and _laws.normal_isf(0.3) == norm.isf(0.3)


@pytest.mark.parametrize("dof", DOFS)
def test_chi2_functions_are_scipy_stats_chi2(dof: float) -> None:
    scaled = np.abs(POINTS) * dof / 10.0  # around the bulk of chi2(dof)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for x in (POINTS, scaled):
            assert same(_laws.chi2_sf(x, dof), chi2.sf(x, dof))
            assert same(_laws.chi2_logsf(x, dof), chi2.logsf(x, dof))
        assert same(_laws.chi2_ppf(PROBABILITIES, dof), chi2.ppf(PROBABILITIES, dof))
        assert same(_laws.chi2_isf(PROBABILITIES, dof), chi2.isf(PROBABILITIES, dof))
        for value in (0.0, 0.7 * dof, 3.0 * dof):
            assert same(_laws.chi2_sf(value, dof), chi2.sf(value, dof))
            assert same(_laws.chi2_logsf(value, dof), chi2.logsf(value, dof))


def test_no_bound_module_imports_scipy_stats_when_it_loads() -> None:
    """The scan's bound path (dpcheck.privacy, dpcheck.bounds) uses the forms above; the
    binomial and noncentral chi-square laws import scipy.stats inside the functions that need
    them. (scipy.signal, which the PLD read-outs use for lfilter, still imports scipy.stats
    itself in scipy 1.17.)"""
    root = Path(__file__).resolve().parents[2] / "dpcheck"
    offenders = []
    for path in sorted([*(root / "privacy").glob("*.py"), *(root / "bounds").glob("*.py")]):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            module = node.module if isinstance(node, ast.ImportFrom) else None
            if module == "scipy.stats" or "scipy.stats" in names or (module == "scipy" and any(
                    a.name == "stats" for a in node.names)):  # type: ignore[union-attr]
                offenders.append(path.name)
    assert offenders == []
