"""The size of a selection of a dataset is what the selection keeps: the n of a table's sample,
the length given to a part of a split, the length of the indices a library dataset selects, and
all of it through a method that keeps every example. Sizes are checked against torch's own
``random_split`` and against the lengths written in the code; real projects on disk, real
parsing, the real builder (docs/theory.md#divisor-dependence)."""

from __future__ import annotations

from pathlib import Path

import pytest
from torch.utils.data import random_split

from dpcheck.bounds.attach import attach_bounds
from dpcheck.pipelines import build_pipelines
from dpcheck.pipelines.index import ProjectIndex
from dpcheck.pipelines.scope import Ctx
from dpcheck.pipelines.values import Evaluator
from dpcheck.rules import evaluate
from dpcheck.sites.nodes import Name
from tests.fixture_projects import fixture_project
from tests.pipelines.builder import make_project

OPACUS = '''
import torch
from opacus import PrivacyEngine
from torch.utils.data import DataLoader
{prelude}
loader = DataLoader({dataset}, batch_size=50)
model = torch.nn.Linear(8, 2)
engine = PrivacyEngine()
model, optimizer, loader = engine.make_private(
    module=model, optimizer=torch.optim.SGD(model.parameters(), lr=0.1), data_loader=loader,
    noise_multiplier=1.0, max_grad_norm=1.0)
for epoch in range(2):
    for x, y in loader:
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
'''


def _n(tmp_path: Path, prelude: str, dataset: str) -> float | None:
    code = OPACUS.format(prelude=prelude, dataset=dataset)
    project = make_project(tmp_path, {"train.py": code, "requirements.txt": "opacus==1.4.0\n"})
    [pipeline] = build_pipelines(project)
    found = pipeline.params.get("N")
    return None if found is None else found.value


@pytest.mark.parametrize(("prelude", "dataset", "size"), [
    # pandas: n rows of a sample, round(frac * rows) of a sample of a sample
    ("import pandas as pd\nrows = pd.read_csv('t.csv').sample(n=2400, random_state=1)",
     "rows.to_numpy()", 2400),
    ("import pandas\ntable = pandas.read_parquet('t.pq')\nsmall = table.sample(3000)\n"
     "smaller = small.sample(frac=0.25)", "smaller.to_numpy()", 750),
    # Hugging Face datasets: the indices selected, through splits and one-to-one methods
    ("from datasets import load_dataset\nparts = load_dataset('x')\n"
     "kept = parts['train'].select(range(100, 1900)).shuffle(seed=0)", "kept", 1800),
    ("import datasets\nkept = datasets.load_dataset('x', split='train').select([4, 8, 15, 16])",
     "kept.with_format('torch')", 4),
])
def test_a_selection_has_as_many_examples_as_it_keeps(
        tmp_path: Path, prelude: str, dataset: str, size: int) -> None:
    assert _n(tmp_path, prelude, dataset) == size


@pytest.mark.parametrize(("whole", "fractions", "part"), [
    (1001, [0.5, 0.5], 0), (1001, [0.5, 0.5], 1), (1003, [0.3, 0.3, 0.4], 2),
    (60000, [0.9, 0.1], 0),
])
def test_a_fraction_split_part_has_what_torch_gives_it(
        tmp_path: Path, whole: int, fractions: list[float], part: int) -> None:
    """torch spreads what the floors leave one by one from the first part: the size dpcheck
    reads is the length torch's own ``random_split`` gives that part."""
    names = ", ".join(f"p{i}" for i in range(len(fractions)))
    prelude = (f"from torch.utils.data import Subset, random_split\nfrom torchvision import datasets\n"
               f"full = Subset(datasets.MNIST('d', train=True), range({whole}))\n"
               f"{names} = random_split(full, {fractions})")
    expected = len(random_split(range(whole), fractions)[part])
    assert _n(tmp_path, prelude, f"p{part}") == expected


def test_a_split_part_with_computed_counts(tmp_path: Path) -> None:
    prelude = ("from torch.utils.data import random_split\nfrom torchvision import datasets\n"
               "full = datasets.CIFAR10('d', train=True)\nheld = round(0.2 * len(full))\n"
               "fit, check = random_split(full, [len(full) - held, held])")
    assert _n(tmp_path, prelude, "fit") == 40000
    assert _n(tmp_path / "other", prelude, "check") == 10000


@pytest.mark.parametrize(("prelude", "dataset"), [
    # a batched map may return any number of rows per batch
    ("from datasets import load_dataset\nkept = load_dataset('x', split='train')"
     ".select(range(500)).map(lambda b: b, batched=True)", "kept"),
    # a project's own sample/select methods are project code
    ("class Table:\n    def sample(self, n):\n        return self\ntable = Table().sample(n=10)",
     "table"),
    ("class Rows:\n    def select(self, rows):\n        return self\nrows = Rows().select(range(9))",
     "rows"),
    # a fraction of a table whose own size is not known: no size invented
    ("import pandas as pd\nframe = pd.read_csv('t.csv')\nsome = frame.sample(frac=0.5)", "some"),
])
def test_unknown_selections_leave_n_unresolved(tmp_path: Path, prelude: str, dataset: str) -> None:
    assert _n(tmp_path, prelude, dataset) is None


def test_the_selected_size_of_a_table_is_read_where_it_is_used(tmp_path: Path) -> None:
    """``len(frame)`` after ``frame = read_csv(...).sample(n=K)`` is K, written where the
    sample was taken."""
    code = "import pandas as pd\nframe = pd.read_csv('t.csv').sample(n=640)\nrows = len(frame)\n"
    project = make_project(tmp_path, {"prep.py": code})
    value = Evaluator(ProjectIndex(project)).value(Name(["r", "rows"]), Ctx("prep.py", "<module>"))
    assert value is not None and value.value == 640


def test_the_fixture_reports_feasgm_as_a_note_once_n_is_known() -> None:
    """hf_select_split_opacus_feasgm: N = 10000 and B = 64 give Opacus' divisor int(N / 157) =
    63 at N - 1, N and N + 1, so DP101 is info; nothing else fires."""
    from dpcheck import engine
    result = engine.scan(engine.ScanOptions(paths=[fixture_project("hf_select_split_opacus_feasgm")],
                                            use_cache=False, jobs=1))
    [pipeline] = result.pipelines
    assert pipeline.params["N"].value == 10000
    assert [(f.rule, f.severity.value) for f in result.findings] == [("DP101", "info")]


def test_the_feasgm_check_of_a_selection_that_changes_the_divisor_stays_an_error(
        tmp_path: Path) -> None:
    """N = 2400 rows and B = 50: int(2400 / 48) = 50 but int(2399 / 48) = 49, a leak."""
    code = OPACUS.format(prelude="import pandas as pd\nrows = pd.read_csv('t.csv').sample(n=2400)",
                         dataset="rows.to_numpy()")
    project = make_project(tmp_path, {"train.py": code, "requirements.txt": "opacus==1.4.0\n"})
    pipelines = build_pipelines(project)
    findings = attach_bounds(evaluate(pipelines, project), pipelines)
    assert [(f.rule, f.severity.value) for f in findings if f.rule == "DP101"] \
        == [("DP101", "error")]


def test_a_malformed_library_method_list_is_an_error_naming_its_group() -> None:
    """The selections are data: a library method that is not an identifier fails the load."""
    from dpcheck.errors import DpcheckError
    from dpcheck.pipelines.vocabulary import parse_vocabulary
    from dpcheck.toml import tomllib
    text = (Path(__file__).parents[2] / "dpcheck" / "data" / "vocabulary.toml").read_text("utf-8")
    table = tomllib.loads(text)
    table["samples_count"]["library_methods"]["pandas"] = ["sample()"]
    with pytest.raises(DpcheckError, match=r"samples_count\.library_methods"):
        parse_vocabulary(table, "vocabulary.toml")
