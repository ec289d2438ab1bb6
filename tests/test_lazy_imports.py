"""Light commands stay light: ``--version``, ``rules``, ``explain`` and a scan whose cache
answers import none of the heavy libraries (numpy, scipy, libcst, gitpython, matplotlib,
torch); the bound engine and git are imported only on the paths that need them, and a relinked
project whose bounds are cached loads none of them either. Each command runs in a fresh interpreter and reports the modules it loaded."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
HEAVY = ("numpy", "scipy", "libcst", "git", "matplotlib", "torch", "poetry")
PROBE = """
import json, sys
from dpcheck.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
loaded = sorted({name.split(".")[0] for name in sys.modules} & set(%r))
sys.stderr.write("\\nLOADED " + json.dumps(loaded) + "\\n")
""" % (HEAVY,)


def _run(*argv: str, cwd: Path | None = None) -> tuple[list[str], str]:
    """The heavy libraries a command loaded in a fresh interpreter, and what it printed."""
    done = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, text=True,
                          cwd=cwd, timeout=300)
    line = next(l for l in done.stderr.splitlines() if l.startswith("LOADED "))
    return json.loads(line.removeprefix("LOADED ")), done.stdout


def _loaded(*argv: str, cwd: Path | None = None) -> list[str]:
    return _run(*argv, cwd=cwd)[0]


@pytest.mark.parametrize("argv", [["--version"], ["rules"], ["explain", "DP101"], ["--help"]])
def test_light_commands_import_no_heavy_library(argv: list[str]) -> None:
    assert _loaded(*argv) == []


def test_a_scan_the_cache_answers_imports_no_heavy_library(tmp_path: Path) -> None:
    """The cache answers the findings, their bounds and their fix marks (the fixture's DP101
    is told why no fix applies, which the fix stage decided with libcst)."""
    project = tmp_path / "project"
    shutil.copytree(FIXTURES / "torch_loop_asgm_len_batch", project,
                    ignore=shutil.ignore_patterns("expected.json"))
    cold = _loaded("scan", "-q", ".", cwd=project)
    assert {"numpy", "scipy", "libcst"} <= set(cold)  # bound and fix computed: the check can fail
    assert _loaded("scan", "-q", ".", cwd=project) == []


def test_an_edit_of_a_file_linking_never_read_keeps_the_fix_marks(tmp_path: Path) -> None:
    """An edit of a utility module (no DP marker, imported by nothing) leaves the linking and
    the fix marks as they were: the rescan loads neither libcst nor the numeric engine and
    reports the same fix mark. An edit of the training script verifies the marks again
    (libcst)."""
    project = tmp_path / "project"
    shutil.copytree(FIXTURES / "torch_loop_asgm_len_batch", project,
                    ignore=shutil.ignore_patterns("expected.json"))
    util = project / "util.py"
    util.write_text("def mean(xs):\n    return sum(xs) / len(xs)\n", encoding="utf-8")
    loaded, out = _run("scan", "--format", "json", ".", cwd=project)
    assert "libcst" in loaded
    [cold] = [f for f in json.loads(out)["findings"] if f["rule"] == "DP101"]
    util.write_text(util.read_text(encoding="utf-8") + "# edited\n", encoding="utf-8")
    loaded, out = _run("scan", "--format", "json", ".", cwd=project)
    [warm] = [f for f in json.loads(out)["findings"] if f["rule"] == "DP101"]
    assert loaded == [] and (warm.get("fix"), warm.get("fix_reason")) == (cold.get("fix"), cold.get("fix_reason"))
    script = project / "dpsgd.py"
    script.write_text(script.read_text(encoding="utf-8") + "# edited\n", encoding="utf-8")
    assert "libcst" in _loaded("scan", "-q", ".", cwd=project)


def test_the_bound_command_loads_the_numeric_engine() -> None:
    assert {"numpy", "scipy"} <= set(_loaded("bound", "sgm", "--sigma", "1", "--q", "0.01",
                                             "--steps", "100"))


def test_an_edit_that_keeps_the_parameters_reuses_the_bound(tmp_path: Path) -> None:
    """Moving the training code down and adding files relinks the project, but the finding's
    parameter set is unchanged: its bound comes from the cache (the numeric engine is never
    loaded) and equals the one computed cold. A changed sigma computes a new bound. (The moved
    finding's fix is verified again, which is libcst's work.)"""
    project = tmp_path / "project"
    shutil.copytree(FIXTURES / "torch_loop_asgm_len_batch", project,
                    ignore=shutil.ignore_patterns("expected.json"))
    loaded, out = _run("scan", "--format", "json", ".", cwd=project)
    assert {"numpy", "scipy"} <= set(loaded)
    [cold] = [f for f in json.loads(out)["findings"] if f["rule"] == "DP101"]

    script = project / "dpsgd.py"
    script.write_text("\n\n\n" + script.read_text(encoding="utf-8"), encoding="utf-8")
    (project / "plots.py").write_text("import matplotlib\n", encoding="utf-8")
    (project / "setup.py").write_text('from setuptools import setup\nsetup(install_requires=["opacus==1.4.0"])\n',
                                      encoding="utf-8")
    loaded, out = _run("scan", "--format", "json", ".", cwd=project)
    [moved] = [f for f in json.loads(out)["findings"] if f["rule"] == "DP101"]
    assert {"numpy", "scipy"}.isdisjoint(loaded) and moved["line"] == cold["line"] + 3
    assert moved["bound"] == cold["bound"] and moved["bound"]["verdict"] in ("violated", "unsupported")

    script.write_text(script.read_text(encoding="utf-8").replace("SIGMA = 1.0", "SIGMA = 2.0"),
                      encoding="utf-8")
    loaded, out = _run("scan", "--format", "json", ".", cwd=project)
    [noisier] = [f for f in json.loads(out)["findings"] if f["rule"] == "DP101"]
    assert {"numpy", "scipy"} <= set(loaded)
    assert noisier["bound"]["inputs"]["sigma"] == 2.0 != cold["bound"]["inputs"]["sigma"]
