"""Light commands stay light: ``--version``, ``rules``, ``explain`` and a scan whose cache
answers import none of the heavy libraries (numpy, scipy, libcst, gitpython, matplotlib,
torch); the bound engine, libcst (``setup.py`` pins) and git are imported only on the paths that
need them. Each command runs in a fresh interpreter and reports the modules it loaded."""

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


def _loaded(*argv: str, cwd: Path | None = None) -> list[str]:
    done = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, text=True,
                          cwd=cwd, timeout=300)
    line = next(l for l in done.stderr.splitlines() if l.startswith("LOADED "))
    return json.loads(line.removeprefix("LOADED "))


@pytest.mark.parametrize("argv", [["--version"], ["rules"], ["explain", "DP101"], ["--help"]])
def test_light_commands_import_no_heavy_library(argv: list[str]) -> None:
    assert _loaded(*argv) == []


def test_a_scan_the_cache_answers_imports_no_heavy_library(tmp_path: Path) -> None:
    project = tmp_path / "project"
    shutil.copytree(FIXTURES / "torch_loop_asgm_len_batch", project,
                    ignore=shutil.ignore_patterns("expected.json"))
    cold = _loaded("scan", "-q", ".", cwd=project)
    assert {"numpy", "scipy"} <= set(cold)  # the finding's bound was computed: the check can fail
    assert _loaded("scan", "-q", ".", cwd=project) == []


def test_the_bound_command_loads_the_numeric_engine() -> None:
    assert {"numpy", "scipy"} <= set(_loaded("bound", "sgm", "--sigma", "1", "--q", "0.01",
                                             "--steps", "100"))
