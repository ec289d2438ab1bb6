"""A configuration file the code loads by a constant path is a hyper-parameter source, read as
data: its values (with their line in the file) size the pipeline, an edit of it changes a warm
scan, and a file outside the project, missing or unparsable leaves the value unknown without a
scan error."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from dpcheck import engine
from dpcheck.model import Severity
from dpcheck.pipelines.vocabulary import vocabulary
from tests.fixture_projects import FIXTURES

YAML_FIXTURE = "yaml_config_opacus_feasgm_info"
JSON_FIXTURE = "json_config_beside_script_feasgm_info"
UNREAD_FIXTURE = "config_file_outside_or_missing_unknown"


def _project(tmp_path: Path, fixture: str) -> Path:
    """A copy of the fixture at ``tmp_path/project`` (the scan root)."""
    target = tmp_path / "project"
    shutil.copytree(FIXTURES / fixture, target, ignore=shutil.ignore_patterns("expected.json"))
    return target


def _scan(root: Path, cache: Path | None = None) -> engine.ScanResult:
    return engine.scan(engine.ScanOptions(paths=[root], use_cache=cache is not None,
                                          cache_dir=cache, jobs=1))


def _where(result: engine.ScanResult) -> dict[str, tuple[float, str, str, int]]:
    [pipeline] = result.pipelines
    return {name: (p.value, p.source, p.span.path, p.span.line)
            for name, p in pipeline.params.items()}


def test_yaml_config_values_are_hyper_parameters_at_their_line(tmp_path: Path) -> None:
    result = _scan(_project(tmp_path, YAML_FIXTURE))
    params = _where(result)
    assert params["batch_size"] == (256, "config", "configs/fmnist.yaml", 4)
    assert params["sigma"] == (1.3, "config", "configs/fmnist.yaml", 8)
    assert params["clip"] == (0.8, "config", "configs/fmnist.yaml", 9)
    assert params["epochs"] == (15, "config", "configs/fmnist.yaml", 2)
    assert params["delta"][:3] == (1e-05, "config", "train.py")  # .get default: key absent
    assert [(f.rule, f.severity) for f in result.findings] == [("DP101", Severity.INFO)]
    assert result.errors == []


def test_json_config_beside_the_script_is_read(tmp_path: Path) -> None:
    result = _scan(_project(tmp_path, JSON_FIXTURE))
    params = _where(result)
    assert params["batch_size"] == (256, "config", "scripts/ds_config.json", 2)
    assert params["sigma"] == (0.9, "config", "scripts/ds_config.json", 9)
    assert params["epochs"] == (8, "config", "scripts/ds_config.json", 3)
    assert params["clip"][:3] == (1.0, "config", "scripts/finetune.py")
    assert [(f.rule, f.severity) for f in result.findings] == [("DP101", Severity.INFO)]
    assert result.errors == []


def test_a_config_outside_the_project_is_never_read(tmp_path: Path) -> None:
    root = _project(tmp_path, UNREAD_FIXTURE)
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "mnist.yaml").write_text("batch_size: 256\n")  # ../shared/mnist.yaml
    (tmp_path / "current.json").write_text('{"sigma": 1.0}')
    (root / "runs").mkdir()
    (root / "runs" / "current.json").symlink_to(tmp_path / "current.json")  # a link out
    result = _scan(root)
    params = _where(result)
    assert "batch_size" not in params and "sigma" not in params
    assert params["N"][0] == 60000
    assert [(f.rule, f.severity) for f in result.findings] == [("DP101", Severity.ERROR)]
    assert result.errors == []


BOMB = "".join(f"l{i}: &l{i} [{', '.join([f'*l{i - 1}' if i else '1'] * 10)}]\n" for i in range(9))


@pytest.mark.parametrize("text", ["epochs: 15\ndata: {batch_size: [256\n", "\xff\xfe\x00",
                                  "- just\n- a list\n", "data:\n  batch_size: big\n",
                                  BOMB + "data:\n  batch_size: 256\n"])
def test_an_unparsable_or_unfitting_config_leaves_the_value_unknown(tmp_path: Path, text: str) -> None:
    root = _project(tmp_path, YAML_FIXTURE)
    (root / "configs" / "fmnist.yaml").write_bytes(text.encode("latin-1"))
    result = _scan(root)
    assert "batch_size" not in _where(result)
    assert [(f.rule, f.severity) for f in result.findings] == [("DP101", Severity.ERROR)]
    assert result.errors == []


def test_an_edit_of_the_config_changes_a_warm_scan(tmp_path: Path) -> None:
    root = _project(tmp_path, YAML_FIXTURE)
    cache = tmp_path / "cache"
    config = root / "configs" / "fmnist.yaml"
    assert [f.severity for f in _scan(root, cache).findings] == [Severity.INFO]
    config.write_text(config.read_text().replace("batch_size: 256", "batch_size: 500"))
    warm = _scan(root, cache)
    assert _where(warm)["batch_size"][0] == 500
    assert [f.severity for f in warm.findings] == [Severity.ERROR]  # floor(N*q) moves at N-1
    config.unlink()
    assert "batch_size" not in _where(_scan(root, cache))
    config.write_text("epochs: 15\ndata:\n  batch_size: 256\nprivacy:\n  noise_multiplier: 1.3\n"
                      "  max_grad_norm: 0.8\n")
    assert _where(_scan(root, cache))["batch_size"][0] == 256


def test_a_project_function_named_like_a_loader_is_not_one(tmp_path: Path) -> None:
    root = _project(tmp_path, YAML_FIXTURE)
    script = root / "train.py"
    script.write_text(script.read_text().replace("import yaml\n", "import settings_io as yaml\n"))
    (root / "settings_io.py").write_text("def safe_load(stream):\n    return {'data': {}}\n")
    assert "batch_size" not in _where(_scan(root))


def test_the_loaders_are_matched_by_qualified_name() -> None:
    groups = vocabulary()
    assert groups["yaml_loaders"].has_library_function("yaml.safe_load")
    assert groups["json_loaders"].has_library_function("json.load")
    assert groups["toml_loaders"].has_library_function("tomllib.load")
    assert not groups["json_loaders"].has_library_function("numpy.load")


def test_a_toml_config_is_read_too(tmp_path: Path) -> None:
    root = _project(tmp_path, YAML_FIXTURE)
    script = root / "train.py"
    script.write_text(script.read_text().replace("import yaml\n", "import tomllib\n")
                      .replace("yaml.safe_load(stream)", "tomllib.load(stream)")
                      .replace("configs/fmnist.yaml", "configs/fmnist.toml"))
    (root / "configs" / "fmnist.toml").write_text(
        "epochs = 15\n[data]\nbatch_size = 256\n[optimizer]\nlr = 0.25\n"
        "[privacy]\nnoise_multiplier = 1.3\nmax_grad_norm = 0.8\n")
    result = _scan(root)
    assert _where(result)["batch_size"] == (256, "config", "configs/fmnist.toml", 1)
    assert [(f.rule, f.severity) for f in result.findings] == [("DP101", Severity.INFO)]


LOOP = '''
import torch
import torch.nn as nn
import yaml
from opacus.accountants import RDPAccountant
from torchvision import datasets, transforms

hp = yaml.safe_load(open("hp.yaml"))


def train():
    data = datasets.FashionMNIST("data", train=True, download=True, transform=transforms.ToTensor())
    features = data.data.float().view(len(data), -1) / 255.0
    n = len(data)
    q = hp["lot"] / n
    model = nn.Linear(784, 10)
    accountant = RDPAccountant()
    for _ in range(hp["steps"]):
        batch = torch.nonzero(torch.rand(n) < q).flatten()
        summed = [torch.zeros_like(p) for p in model.parameters()]
        for i in batch.tolist():
            model.zero_grad()
            nn.functional.cross_entropy(model(features[i : i + 1]), data.targets[i : i + 1]).backward()
            norm = torch.sqrt(sum(p.grad.pow(2).sum() for p in model.parameters()))
            factor = min(1.0, hp["clip"] / (norm.item() + 1e-12))
            for acc, p in zip(summed, model.parameters()):
                acc += p.grad * factor
        with torch.no_grad():
            for acc, p in zip(summed, model.parameters()):
                noise = torch.randn_like(acc) * hp["sigma"] * hp["clip"]
                p -= 0.1 * (acc + noise) / hp.get("lot", 64)
        accountant.step(noise_multiplier=hp["sigma"], sample_rate=q)
    return accountant.get_epsilon(delta=float(hp["delta"]))


train()
'''


def test_a_divisor_read_from_a_config_is_a_hyper_parameter(tmp_path: Path) -> None:
    """``/ hp.get("lot", 64)`` with ``lot`` in the file is a constant divisor: SGM, no finding;
    ``float(hp["delta"])`` reads the YAML 1.1 string ``1e-5`` as the number it spells."""
    (tmp_path / "requirements.txt").write_text("opacus==1.4.0\n")
    (tmp_path / "train.py").write_text(LOOP)
    (tmp_path / "hp.yaml").write_text("lot: 256\nsteps: 1000\nsigma: 1.1\nclip: 1.0\ndelta: 1e-5\n")
    result = _scan(tmp_path)
    [pipeline] = result.pipelines
    assert pipeline.mechanism == "SGM"
    params = _where(result)
    assert params["batch_size"][:3] == (256, "config", "hp.yaml")
    assert params["delta"][0] == 1e-05
    assert result.findings == [] and result.errors == []


def test_root_and_script_readings_that_disagree_leave_the_value_unknown(tmp_path: Path) -> None:
    root = _project(tmp_path, JSON_FIXTURE)
    beside = root / "scripts" / "ds_config.json"
    (root / "ds_config.json").write_text(beside.read_text().replace("256", "512"))
    assert "batch_size" not in _where(_scan(root))
    (root / "ds_config.json").write_text(beside.read_text())  # the same data: no doubt
    assert _where(_scan(root))["batch_size"][0] == 256
