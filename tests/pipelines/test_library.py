"""``classify_library`` reads a DP library's source with the user-code classifiers: small fake
libraries written for these tests in the shapes of the Opacus eras (realized batch, N*q,
floor(N*q); 0.x clipper tuples; flag defaults), pre-computed summaries, unparsable files, and
the installed Opacus (when present) against the shipped version table."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from dpcheck.pipelines.library import classify_library
from dpcheck.pipelines.versions import row_for
from dpcheck.sites import summarize_source

ENGINE = '''
class PrivacyEngine:
    def __init__(self, module, accountant="{accountant}"):
        self.module = module

    def {entry}(self, optimizer, data_loader, poisson_sampling={poisson}):
        sample_rate = 1 / len(data_loader)
{body}
'''

#: Each era reads ``data_loader`` through the loader API (``.dataset``): a loader, whatever it
#: is called; era A divides by the size of a batch it yields.
ERAS = {
    "A": "        size = len(data_loader.dataset)\n"
         "        for x, y in data_loader:\n            for p in self.module.parameters():\n"
         "                p.grad /= x.shape[0]\n",
    "EA": "        self.avg_batch_size = len(data_loader.dataset) * sample_rate\n"
          "        for p in self.module.parameters():\n"
          "            p.grad /= self.avg_batch_size\n",
    "FEA": "        expected_batch_size = int(len(data_loader.dataset) * sample_rate)\n"
           "        for p in self.module.parameters():\n"
           "            p.grad /= expected_batch_size\n",
}

CLIPPER_0X = '''
class Clipper:
    def clip_and_accumulate(self):
        batch_size = next(g.shape[0] for g in self.module.grad_samples())
        self._aggr_batch_size += batch_size

    def _get_aggregated_state(self):
        return self._aggr_thresh, self._aggr_batch_size

    def pre_step(self):
        threshs, batch_size = self._get_aggregated_state()
        return threshs, batch_size
'''

ENGINE_0X = '''
class PrivacyEngine:
    def __init__(self, module, batch_size, sample_size, loss_reduction="mean"):
        self.clipper = Clipper(module)

    def step(self):
        clip_values, batch_size = self.clipper.pre_step()
        for p in self.module.parameters():
            noise = self._generate_noise(p)
            {gate}
                noise /= batch_size
'''
MEAN_ONLY = 'if self.loss_reduction == "mean":'


def _engine(era: str, accountant: str = "prv", poisson: str = "True") -> str:
    return ENGINE.format(accountant=accountant, entry="make_private", poisson=poisson,
                         body=ERAS[era])


@pytest.mark.parametrize(("era", "mechanism"), [("A", "ASGM"), ("EA", "EASGM"), ("FEA", "FEASGM")])
def test_fake_library_eras(era: str, mechanism: str) -> None:
    row = classify_library({"fakedp/privacy_engine.py": _engine(era), "fakedp/__init__.py": ""})
    assert (row.normalization_mean, row.mechanism) == (era, mechanism)
    assert (row.poisson_builtin, row.poisson_default, row.default_accountant) == (
        True, True, "opacus-prv")
    mean = [e for e in row.evidence if e.role == "normalization:mean"]
    assert mean and all(e.span.path == "fakedp/privacy_engine.py" for e in mean)
    assert row.variants == ({"when": "poisson_sampling=False", "sampling": "shuffle",
                             "mechanism": "fixed-mean"},)


def test_an_expected_batch_size_nothing_is_divided_by_does_not_decide() -> None:
    body = "        expected_batch_size = int(len(data_loader.dataset) * sample_rate)\n"
    source = ENGINE.format(accountant="rdp", entry="make_private", poisson="True", body=body)
    row = classify_library({"fakedp/privacy_engine.py": source})
    assert (row.normalization_mean, row.mechanism) == ("unknown", "unknown")
    assert dict(row.reasons)["normalization_mean"] == "no division of a gradient found"


def test_0x_clipper_tuple_is_followed_to_the_realized_batch() -> None:
    row = classify_library({"lib/clipper.py": CLIPPER_0X,
                            "lib/privacy_engine.py": ENGINE_0X.format(gate=MEAN_ONLY)})
    assert (row.normalization_mean, row.normalization_sum) == ("A", "none")
    # no Poisson sampler and no flag: the engine has no Poisson path
    assert (row.poisson_builtin, row.poisson_default, row.mechanism) == (
        False, False, "not supported")
    lines = {(e.span.path, e.span.line) for e in row.evidence if e.role == "normalization:mean"}
    assert lines == {("lib/privacy_engine.py", 11), ("lib/clipper.py", 5)}
    gates = {(e.span.path, e.span.line) for e in row.evidence if e.role == "normalization:sum"}
    assert gates == {("lib/privacy_engine.py", 10)}


@pytest.mark.parametrize(("gate", "code"), [
    (MEAN_ONLY, "none"),
    ('if self.poisson and self.loss_reduction == "mean":', "none"),
    ('if not self.loss_reduction == "sum":', "none"),
    ('if self.loss_reduction != "sum":', "none"),
    ('if self.loss_reduction == "sum" or self.frozen:\n                pass\n            else:',
     "none"),
    ('if self.loss_reduction != "mean":\n                pass\n            else:', "none"),
    ("if self.poisson:", "A"),
    ('if self.poisson or self.loss_reduction == "mean":', "A"),
    ('if self.loss_reduction == "sum":', "A"),
    ('if self.loss_reduction == "mean":\n                pass\n            else:', "A"),
])
def test_the_sum_cell_reads_the_branch_that_divides(gate: str, code: str) -> None:
    """With loss_reduction="sum" the library divides only where no "mean" test gates it."""
    row = classify_library({"lib/clipper.py": CLIPPER_0X,
                            "lib/privacy_engine.py": ENGINE_0X.format(gate=gate)})
    assert (row.normalization_mean, row.normalization_sum) == ("A", code)
    kept = [e for e in row.evidence if e.role == "normalization:sum"]
    if code == "A":
        assert [e.note for e in kept] == ["noise /= batch_size"]
    else:
        assert kept and all("loss_reduction" in e.note for e in kept)


def test_without_a_loss_reduction_option_the_sum_cell_is_unknown() -> None:
    source = ENGINE_0X.format(gate=MEAN_ONLY).replace(', loss_reduction="mean"', "")
    row = classify_library({"lib/clipper.py": CLIPPER_0X, "lib/privacy_engine.py": source})
    assert row.normalization_sum == "unknown"
    assert dict(row.reasons)["normalization_sum"] == "no loss_reduction option found"


def test_library_tests_are_not_the_library() -> None:
    source = ENGINE.format(accountant="rdp", entry="make_private", poisson="False",
                           body="        pass\n")
    caller = ("def test_it(batch, p):\n    expected_batch_size = len(batch)\n"
              "    p.grad /= expected_batch_size\n")
    row = classify_library({"fakedp/privacy_engine.py": source, "fakedp/tests/test_x.py": caller})
    assert row.normalization_mean == "unknown" and row.mechanism == "unknown"
    assert (row.poisson_default, row.default_accountant) == (False, "opacus-rdp")


def test_precomputed_summaries_are_read_once_per_file() -> None:
    texts = {"fakedp/privacy_engine.py": _engine("FEA"), "fakedp/__init__.py": "",
             "fakedp/tests/test_x.py": "x = 1\n"}
    requested: Counter[str] = Counter()

    def summaries(path: str) -> dict[str, Any] | None:
        requested[path] += 1
        return summarize_source(texts[path], path)

    row = classify_library(list(texts), summaries)
    assert row == classify_library(texts)
    assert set(requested) == {"fakedp/privacy_engine.py", "fakedp/__init__.py"}
    assert max(requested.values()) == 1


def test_a_file_that_does_not_parse_leaves_its_cells_unknown_with_the_reason() -> None:
    broken = _engine("FEA").replace("def make_private(self,", "def make_private(self")
    row = classify_library({"fakedp/privacy_engine.py": broken})
    assert (row.normalization_mean, row.mechanism) == ("unknown", "not supported")
    assert "fakedp/privacy_engine.py does not parse" in dict(row.reasons)["normalization_mean"]


def test_installed_opacus_matches_the_version_table() -> None:
    opacus = pytest.importorskip("opacus")
    root = Path(opacus.__file__).parent.parent
    files = {p.relative_to(root).as_posix(): p.read_text(encoding="utf-8")
             for p in (root / "opacus").rglob("*.py")}
    row = classify_library(files)
    expected = row_for(opacus.__version__)
    if expected is None:
        pytest.skip(f"opacus {opacus.__version__} is not in the version table")
    for cell in ("normalization_mean", "normalization_sum", "poisson_builtin", "poisson_default",
                 "default_accountant", "mechanism"):
        assert getattr(row, cell) == expected[cell], cell
