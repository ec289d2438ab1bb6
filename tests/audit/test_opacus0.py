"""The installed Opacus 0.x (``attach``) run for real on the worst-case pair.

Opacus 0.x cannot share an environment with the 1.x of the audit extra, so these tests run the
audit in a subprocess with ``$DPCHECK_OPACUS0_SITE`` (a ``pip install --target`` folder holding
Opacus 0.x, e.g. ``opacus==0.15.0 --no-deps``) first on ``sys.path``. Without it they skip.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from scipy.stats import binom, ks_2samp

from dpcheck.audit.mechanisms import simulate_reference
from dpcheck.audit.opacus_adapter import ReleaseBuffer
from dpcheck.audit.releases import ReleaseStats
from dpcheck.audit.setting import AuditSetting

REPO = Path(__file__).resolve().parents[2]
SITE = os.environ.get("DPCHECK_OPACUS0_SITE", "")
VERSION_FILE = Path(SITE, "opacus", "version.py")
VERSION_MATCH = re.search(r'__version__\s*=\s*"(0\.[^"]+)"', VERSION_FILE.read_text()) if (
    SITE and VERSION_FILE.is_file()
) else None
needs_opacus0 = pytest.mark.skipif(
    VERSION_MATCH is None,
    reason="set DPCHECK_OPACUS0_SITE to a folder with an Opacus 0.x install (pip install "
    "--target DIR --no-deps opacus==0.15.0); CI has no network at test time, so it skips there",
)
OPACUS0_VERSION = VERSION_MATCH.group(1) if VERSION_MATCH else ""
HAS_POISSON = tuple(int(part) for part in OPACUS0_VERSION.split(".")[:2] if part.isdigit()) >= (
    0, 14,
)
needs_poisson = pytest.mark.skipif(
    not HAS_POISSON,
    reason=f"Opacus {OPACUS0_VERSION} has no poisson=True (0.14+), so no EASGM to audit",
)
CPU = torch.device("cpu")
TRIALS = 1000


def paper_setting(mechanism: str) -> AuditSetting:
    """The paper's synthetic setting: N = 4, q = 0.5, sigma = 10, C = 0.1, n = 100."""
    return AuditSetting(mechanism, 4, 0.5, 10.0, 0.1, 100)


def in_opacus0(body: str) -> Any:
    """Run ``body`` (which sets ``out``) with Opacus 0.x importable; return ``out`` from JSON."""
    script = (
        "import json, torch\n"
        "from dpcheck.audit.setting import AuditSetting\n"
        "from dpcheck.audit.opacus_adapter import run_opacus\n"
        "from dpcheck.audit.runner import AuditOptions, run_audit\n"
        f"{body}\n"
        "print(json.dumps(out))\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([SITE, str(REPO)])}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def audit_report(mechanism: str, seed: int, trials: int = TRIALS) -> dict[str, Any]:
    setting = ", ".join(map(repr, (mechanism, 4, 0.5, 10.0, 0.1, 100)))
    return in_opacus0(
        f"out = run_audit(AuditSetting({setting}), "
        f"AuditOptions(implementation='opacus', trials={trials}, seed={seed})).to_json()"
    )


def opacus0_releases(mechanism: str, seed: int) -> tuple[ReleaseStats, ReleaseStats]:
    setting = ", ".join(map(repr, (mechanism, 4, 0.5, 10.0, 0.1, 100)))
    out = in_opacus0(
        f"null, alt, _ = run_opacus(AuditSetting({setting}), {TRIALS}, {seed}, "
        "torch.device('cpu'))\n"
        "out = [[s.first.tolist(), s.sq_norm.tolist()] for s in (null, alt)]"
    )
    null, alt = (ReleaseStats(np.array(first), np.array(sq_norm)) for first, sq_norm in out)
    return null, alt


def assert_reference_law(mechanism: str, seed: int) -> tuple[ReleaseStats, ReleaseStats]:
    null_o, alt_o = opacus0_releases(mechanism, seed)
    gen = torch.Generator().manual_seed(seed + 100)
    setting = paper_setting(mechanism)
    for released, with_canary in ((null_o, False), (alt_o, True)):
        reference = simulate_reference(setting, with_canary, TRIALS, gen, CPU)
        assert ks_2samp(released.first, reference.first).pvalue > 1e-3
        assert ks_2samp(released.sq_norm, reference.sq_norm).pvalue > 1e-3
    return null_o, alt_o


@needs_opacus0
@needs_poisson
def test_opacus0_easgm_reproduces_the_paper_violation() -> None:
    report = audit_report("EASGM", 0)
    assert report["verdict"] == "violation"
    assert report["epsilon_lower"] > 10 * report["claimed"]["epsilon_at_delta"]
    assert report["inputs"]["implementation_version"] == (
        f"opacus {OPACUS0_VERSION} (attach, poisson=True, loss_reduction='mean')"
    )


@needs_opacus0
@needs_poisson
def test_opacus0_poisson_releases_have_the_easgm_law() -> None:
    null_o, alt_o = assert_reference_law("EASGM", 3)
    # EASGM divides by q|D| = 2 and q|D'| = 2.5: noise energy n (sigma C / d)^2 = 25 vs 16,
    # plus the small signal E[(k C / d)^2] (closed form below).
    k = np.arange(5)
    signal_d = float(np.sum(binom.pmf(k, 4, 0.5) * (k * 0.1 / 2.0) ** 2))
    assert null_o.sq_norm.mean() == pytest.approx(25.0 + signal_d, rel=0.03)
    assert alt_o.sq_norm.mean() == pytest.approx(16.0, rel=0.03)


@needs_opacus0
def test_opacus0_sum_reduction_is_sgm_and_passes_its_claim() -> None:
    report = audit_report("SGM", 1)
    assert report["verdict"] == "no violation"
    assert report["inputs"]["implementation_version"].endswith("loss_reduction='sum')")


@needs_opacus0
def test_opacus0_without_poisson_is_asgm_with_its_reference_law() -> None:
    assert_reference_law("ASGM", 5)
    # ASGM leaks less than EASGM here (epsilon_L ~ 0.6-0.9 at 1000 trials, ~1.5 at 3000).
    report = audit_report("ASGM", 2, trials=3000)
    assert report["verdict"] == "violation"
    assert "poisson=False" in report["inputs"]["implementation_version"]


@needs_opacus0
def test_opacus0_refuses_what_it_does_not_implement() -> None:
    out = in_opacus0(
        "from dpcheck.errors import ParameterError\n"
        "out = []\n"
        "for args in (('FEASGM', 4, 0.5, 10.0, 0.1, 5), ('EASGM', 4, 1.0, 10.0, 0.1, 5)):\n"
        "    try:\n"
        "        run_opacus(AuditSetting(*args), 20, 0, torch.device('cpu'))\n"
        "        out.append('ran')\n"
        "    except ParameterError as exc:\n"
        "        out.append(str(exc))\n"
    )
    assert "not FEASGM" in out[0]
    assert ("--q < 1" if HAS_POISSON else "no poisson=True") in out[1]


def test_release_buffer_keeps_exactly_the_first_trials_across_blocks() -> None:
    buffer = ReleaseBuffer(trials=5, dim=3, device=CPU, chunk_elements=6)  # blocks of 2 rows
    releases = torch.arange(21, dtype=torch.float32).reshape(7, 3)
    for row in releases:
        buffer.add(row)
    assert buffer.full
    stats = buffer.stats()
    np.testing.assert_array_equal(stats.first, [0.0, 3.0, 6.0, 9.0, 12.0])
    expected = (releases[:5].double() ** 2).sum(dim=1).numpy()
    np.testing.assert_allclose(stats.sq_norm, expected)
