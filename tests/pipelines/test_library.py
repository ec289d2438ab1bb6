"""``classify_library`` reads a DP library's source with the user-code classifiers: a small fake
library written for this test moves through the eras (realized batch, N*q, floor(N*q)), and the
installed Opacus (when present) is checked against the shipped, hand-derived version table."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpcheck.pipelines.library import classify_library
from dpcheck.pipelines.versions import row_for

ENGINE = '''
class PrivacyEngine:
    def __init__(self, module, accountant="{accountant}"):
        self.module = module

    def {entry}(self, optimizer, data_loader, poisson_sampling={poisson}):
        sample_rate = 1 / len(data_loader)
{body}
'''

ERAS = {
    "A": "        for x, y in data_loader:\n            for p in self.module.parameters():\n"
         "                p.grad /= x.shape[0]\n",
    "EA": "        self.avg_batch_size = len(data_loader.dataset) * sample_rate\n",
    "FEA": "        expected_batch_size = int(len(data_loader.dataset) * sample_rate)\n",
}


@pytest.mark.parametrize(("era", "mechanism"), [("A", "ASGM"), ("EA", "EASGM"), ("FEA", "FEASGM")])
def test_fake_library_eras(era: str, mechanism: str) -> None:
    source = ENGINE.format(accountant="prv", entry="make_private", poisson="True", body=ERAS[era])
    row = classify_library({"fakedp/privacy_engine.py": source, "fakedp/__init__.py": ""})
    assert (row.normalization_mean, row.mechanism) == (era, mechanism)
    assert (row.poisson_default, row.default_accountant) == (True, "opacus-prv")
    assert row.evidence and row.evidence[0].span.path == "fakedp/privacy_engine.py"


def test_library_tests_are_not_the_library() -> None:
    source = ENGINE.format(accountant="rdp", entry="make_private", poisson="False",
                           body="        pass\n")
    caller = "def test_it(batch):\n    expected_batch_size = len(batch)\n"
    row = classify_library({"fakedp/privacy_engine.py": source, "fakedp/tests/test_x.py": caller})
    assert row.normalization_mean == "unknown" and row.mechanism == "unknown"
    assert (row.poisson_default, row.default_accountant) == (False, "opacus-rdp")


def test_installed_opacus_matches_the_version_table() -> None:
    opacus = pytest.importorskip("opacus")
    root = Path(opacus.__file__).parent.parent
    files = {p.relative_to(root).as_posix(): p.read_text(encoding="utf-8")
             for p in (root / "opacus").rglob("*.py")}
    row = classify_library(files)
    expected = row_for(opacus.__version__)
    if expected is None:
        pytest.skip(f"opacus {opacus.__version__} is not in the version table")
    assert row.normalization_mean == expected["normalization_mean"]
    assert row.mechanism == expected["mechanism"]
    assert row.poisson_default == expected["poisson_default"]
    assert row.default_accountant == expected["default_accountant"]
