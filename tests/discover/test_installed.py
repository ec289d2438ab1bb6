"""find_installed on fake site-packages trees made in tmp dirs (nothing is imported)."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json

import pytest

from dpcheck.discover.installed import find_installed
from dpcheck.errors import DpcheckError


def metadata(name: str, version: str) -> str:
    return f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\nSummary: x\n\nlong text\n"


def test_project_dot_venv_is_searched_first(tmp_path, write_tree):
    site = ".venv/lib/python3.11/site-packages"
    write_tree(
        tmp_path,
        {
            f"{site}/opacus/__init__.py": "",
            f"{site}/opacus-1.4.0.dist-info/METADATA": metadata("opacus", "1.4.0"),
            "zzz/pyvenv.cfg": "",
            "zzz/lib/python3.11/site-packages/opacus/__init__.py": "",
            "zzz/lib/python3.11/site-packages/opacus-1.2.0.dist-info/METADATA": metadata(
                "opacus", "1.2.0"
            ),
        },
    )
    found = find_installed(tmp_path, "Opacus")
    assert found is not None
    assert (found.library, found.version) == ("opacus", "1.4.0")
    assert found.path == tmp_path / site / "opacus"


def test_any_folder_with_pyvenv_cfg_and_name_normalisation(tmp_path, write_tree):
    site = "myenv/lib/python3.10/site-packages"
    write_tree(
        tmp_path,
        {
            "myenv/pyvenv.cfg": "home = /usr/bin\n",
            f"{site}/tensorflow_privacy/__init__.py": "",
            f"{site}/tensorflow_privacy-0.8.12.dist-info/METADATA": metadata(
                "tensorflow-privacy", "0.8.12"
            ),
        },
    )
    found = find_installed(tmp_path, "TensorFlow_Privacy")
    assert found is not None
    assert (found.library, found.version) == ("tensorflow-privacy", "0.8.12")
    assert found.path == tmp_path / site / "tensorflow_privacy"


def test_egg_info_and_missing_metadata(tmp_path, write_tree):
    site = "venv/lib/python3.11/site-packages"
    write_tree(
        tmp_path,
        {
            f"{site}/prv_accountant/__init__.py": "",
            f"{site}/prv_accountant-0.2.0-py3.11.egg-info/PKG-INFO": metadata(
                "prv-accountant", "0.2.0"
            ),
            f"{site}/jax_privacy/__init__.py": "",
        },
    )
    prv = find_installed(tmp_path, "prv-accountant")
    assert prv is not None and prv.version == "0.2.0"
    bare = find_installed(tmp_path, "jax_privacy")
    assert bare is not None
    assert (bare.version, bare.path) == (None, tmp_path / site / "jax_privacy")


def test_editable_install_is_followed_to_its_source(tmp_path, write_tree):
    site = "env/lib/python3.11/site-packages"
    checkout = tmp_path / "checkout"
    write_tree(
        tmp_path,
        {
            "checkout/src/dp_accounting/__init__.py": "",
            f"{site}/dp_accounting-0.4.4.dist-info/METADATA": metadata("dp-accounting", "0.4.4"),
            f"{site}/dp_accounting-0.4.4.dist-info/direct_url.json": json.dumps(
                {"url": checkout.as_uri(), "dir_info": {"editable": True}}
            ),
        },
    )
    found = find_installed(tmp_path, "dp-accounting")
    assert found is not None
    assert (found.version, found.path) == ("0.4.4", checkout / "src" / "dp_accounting")


def test_falls_back_to_the_running_interpreter(tmp_path):
    found = find_installed(tmp_path, "dp_accounting")
    assert found is not None
    assert found.version == importlib.metadata.version("dp-accounting")
    assert (found.path / "__init__.py").is_file()


@pytest.mark.skipif(
    importlib.util.find_spec("jax_privacy") is not None, reason="jax-privacy is installed here"
)
def test_not_installed_anywhere(tmp_path):
    assert find_installed(tmp_path, "jax-privacy") is None


def test_unknown_library_is_an_error_naming_it(tmp_path):
    with pytest.raises(DpcheckError, match="torch"):
        find_installed(tmp_path, "torch")
