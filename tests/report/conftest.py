"""Realistic scan results for the renderer tests, anchored on a real training script.

Finding positions come from libcst's own position metadata on the script (0-based columns
converted to the model's 1-based ones), so the tests check the renderers against the parser
rather than against numbers typed by hand.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from dpcheck.model import (
    Accountant,
    Evidence,
    Finding,
    ParamValue,
    Pipeline,
    ScanError,
    ScanResult,
    Severity,
    Span,
)

TRAIN_PY = '''\
import torch
from opacus.accountants import RDPAccountant

SIGMA = 1.1
CLIP = 1.0


def train(model, loader, epochs=10):
    accountant = RDPAccountant()
    for _ in range(epochs):
        for batch in loader:
            grads = per_sample_clip(model, batch, CLIP)
            noisy = grads.sum(0) + torch.normal(0.0, SIGMA * CLIP, grads.shape[1:])
            update = noisy / len(batch)
            accountant.step(noise_multiplier=SIGMA, sample_rate=256 / 60000)
    return accountant.get_epsilon(delta=1e-5)
'''


@dataclass(frozen=True)
class RuleInfo:
    """A catalog entry as the renderers see it (satisfies ``dpcheck.report.RuleMeta``)."""

    id: str
    name: str
    severity: Severity
    summary: str
    help_text: str
    help_uri: str | None = None


RULES: tuple[RuleInfo, ...] = (
    RuleInfo(
        "DP001",
        "unparsable-file",
        Severity.WARNING,
        "A Python file could not be parsed; it was not analysed.",
        "A file that is not valid Python cannot be checked.\n\n**Fix:** repair the syntax.",
    ),
    RuleInfo(
        "DP101",
        "normalized-update-accounted-as-sgm",
        Severity.ERROR,
        "The update divides the noisy sum by a data-dependent batch size, but the accountant "
        "assumes the plain SGM.",
        "## Why\nDividing by the realized batch size |B| is the ASGM, whose privacy differs "
        "from the SGM's.\n\n## Fix\nDivide by the expected batch size N*q.",
        "https://example.org/dpcheck/rules/DP101",
    ),
    RuleInfo(
        "DP102",
        "shuffle-accounted-as-poisson",
        Severity.WARNING,
        "Shuffled fixed-size batches are accounted as Poisson subsampling.",
        "Shuffling is not Poisson subsampling.",
    ),
    RuleInfo(
        "DP105",
        "unpinned-dp-library",
        Severity.INFO,
        "The DP library version is not pinned.",
        "Pin `opacus` in requirements.txt.",
    ),
)


def node_span(source: str, path: str, code: str) -> Span:
    """The 1-based span of the first expression whose source text is ``code``, per libcst."""
    wrapper = MetadataWrapper(cst.parse_module(source))
    positions = wrapper.resolve(PositionProvider)
    module = wrapper.module
    for node, where in positions.items():
        if isinstance(node, cst.BaseExpression) and module.code_for_node(node) == code:
            return Span(
                path,
                where.start.line,
                where.start.column + 1,
                where.end.line,
                where.end.column + 1,
            )
    raise LookupError(code)


def line_text(source: str, line: int) -> str:
    """The stripped text of a 1-based line: the finding's ``context``."""
    return source.splitlines()[line - 1].strip()


@dataclass(frozen=True)
class Project:
    """A scanned project on disk and the result a scan of it produced."""

    root: Path
    sources: dict[str, str]
    result: ScanResult


def make_result(source: str, path: str = "train.py") -> ScanResult:
    """A scan result for ``source`` at ``path``: one pipeline and findings of three severities."""
    divisor = node_span(source, path, "len(batch)")
    accountant_span = node_span(source, path, "RDPAccountant()")
    step_span = node_span(source, path, "256 / 60000")
    sigma = ParamValue("sigma", 1.1, "constant", node_span(source, path, "1.1"), "SIGMA")
    q = ParamValue("q", 256 / 60000, "literal", step_span, "256 / 60000")
    pipeline = Pipeline(
        entry="train",
        path=path,
        line=8,
        mechanism="ASGM",
        sampling="poisson",
        accountant=Accountant("opacus-rdp", "SGM+poisson", accountant_span, q=q, sigma=sigma),
        params={"sigma": sigma, "q": q},
        evidence=(
            Evidence("divisor", divisor, "noisy sum divided by the realized batch size |B|"),
            Evidence("accountant", accountant_span, "RDP accountant assumes SGM + Poisson"),
        ),
        library="opacus",
    )
    asgm = Finding(
        rule="DP101",
        severity=Severity.ERROR,
        span=divisor,
        message="update divides the noisy sum by the realized batch size (ASGM), "
        "but opacus-rdp assumes the SGM",
        pipeline=f"{path}::train",
        evidence=pipeline.evidence,
        bound={
            "claimed_epsilon": 2.97,
            "corrected_epsilon": 8.41,
            "summary": [
                "claimed eps = 2.97 (SGM, RDP, delta = 1e-05)",
                "corrected eps <= 8.41 (ASGM witness)",
            ],
        },
        context=line_text(source, divisor.line),
    )
    shuffle = Finding(
        rule="DP102",
        severity=Severity.WARNING,
        span=step_span,
        message="the loader shuffles fixed-size batches; the accountant assumes Poisson",
        pipeline=f"{path}::train",
        bound={"claimed_epsilon": 2.97},
        context=line_text(source, step_span.line),
    )
    unpinned = Finding(
        rule="DP105",
        severity=Severity.INFO,
        span=Span("requirements.txt", 3, 1, 3, 7),
        message="opacus is not pinned",
        context="opacus",
    )
    return ScanResult(
        pipelines=[pipeline],
        findings=sorted([asgm, shuffle, unpinned], key=Finding.sort_key),
        errors=[],
        files_scanned=12,
        suppressed=1,
    )


@pytest.fixture
def project(tmp_path: Path) -> Project:
    """``train.py`` written to a temp project and read back, with its scan result."""
    (tmp_path / "train.py").write_text(TRAIN_PY, encoding="utf-8")
    (tmp_path / "requirements.txt").write_text("torch==2.13.0\nnumpy\nopacus\n", encoding="utf-8")
    sources = {
        name: (tmp_path / name).read_text(encoding="utf-8")
        for name in ("train.py", "requirements.txt")
    }
    return Project(tmp_path, sources, make_result(sources["train.py"]))


@pytest.fixture
def failed_project(project: Project) -> Project:
    """The same project where one file could not be read."""
    project.result.errors.append(ScanError("data/blob.py", "cannot read: Permission denied"))
    return project
