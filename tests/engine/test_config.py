"""Configuration loading: valid tables, and errors that name the key."""

from pathlib import Path

import pytest

from dpcheck.config import load_config, parse_cli_params
from dpcheck.errors import ConfigError


def _write(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "pyproject.toml"
    path.write_text(body)
    return path


def test_valid_table(tmp_path: Path) -> None:
    _write(
        tmp_path,
        """
[tool.dpcheck]
select = ["DP1"]
ignore = "DP105"
exclude = ["vendor/**"]
fail-on = "warning"
per-file-ignores = { "tests/*" = ["DP101"] }
params = { sigma = 1.1, N = 60000 }
dp-library-versions = { Opacus = "1.4.0" }
""",
    )
    config = load_config(None, tmp_path)
    assert config.select == ("DP1",)
    assert config.ignore == ("DP105",)
    assert config.fail_on == "warning"
    assert config.per_file_ignores == {"tests/*": ("DP101",)}
    assert config.params["sigma"].value == 1.1
    assert config.params["N"].value == 60000 and isinstance(config.params["N"].value, int)
    assert config.params["sigma"].source == "override"
    assert config.dp_library_versions == {"opacus": "1.4.0"}


def test_no_table_means_defaults(tmp_path: Path) -> None:
    _write(tmp_path, "[project]\nname = 'x'\n")
    assert load_config(None, tmp_path).select == ()


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ("[tool.dpcheck]\nselekt = ['DP1']\n", "`selekt`"),
        ("[tool.dpcheck]\nselect = 3\n", "`select`"),
        ("[tool.dpcheck]\nfail-on = 'sometimes'\n", "`fail-on`"),
        ("[tool.dpcheck]\nparams = { sigmaa = 1 }\n", "`sigmaa`"),
        ("[tool.dpcheck]\nparams = { sigma = -1 }\n", "`sigma`"),
        ("[tool.dpcheck]\nparams = { N = 2.5 }\n", "`N`"),
        ("[tool.dpcheck]\nparams = { q = 1.5 }\n", "`q`"),
        ("[tool.dpcheck]\nstrict = 'yes'\n", "`strict`"),
        ("[tool.dpcheck\n", "invalid TOML"),
        ("[tool.dpcheck]\ndp-library-versions = { torch = '2.0' }\n", "`dp-library-versions.torch`"),
        ("[tool.dpcheck]\ndp-library-versions = { opacus = 'not a version!!' }\n", "`dp-library-versions.opacus`"),
    ],
)
def test_errors_name_the_key(tmp_path: Path, body: str, needle: str) -> None:
    path = _write(tmp_path, body)
    with pytest.raises(ConfigError) as info:
        load_config(None, tmp_path)
    assert needle in str(info.value)
    assert str(path) in str(info.value)


def test_explicit_config_file(tmp_path: Path) -> None:
    path = tmp_path / "dpcheck.toml"
    path.write_text("select = ['DP101']\n")
    assert load_config(path, tmp_path).select == ("DP101",)
    with pytest.raises(ConfigError, match="not found"):
        load_config(tmp_path / "missing.toml", tmp_path)


def test_cli_params() -> None:
    params = parse_cli_params(["sigma=0.8", "batch_size=256"])
    assert params["sigma"].value == 0.8 and params["batch_size"].value == 256
    with pytest.raises(ConfigError, match="KEY=VALUE"):
        parse_cli_params(["sigma"])
    with pytest.raises(ConfigError, match="number"):
        parse_cli_params(["sigma=abc"])
