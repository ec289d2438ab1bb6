"""``from module import *`` is recorded (``stars``), so the names it binds can be resolved in the
project module it names."""

from __future__ import annotations

from pathlib import Path

from dpcheck.pipelines.index import ProjectIndex
from dpcheck.pipelines.scope import Ctx
from dpcheck.sites import SUMMARY_VERSION, summarize_source
from tests.pipelines.builder import make_project


def test_star_imports_are_recorded_in_order() -> None:
    summary = summarize_source("from .tools import *\nfrom numpy import *\nimport os\n",
                               "pkg/__init__.py")
    assert summary["version"] == SUMMARY_VERSION >= 8
    assert summary["stars"] == [".tools", "numpy"]
    assert summary["imports"] == {"os": "os"}


def test_a_name_from_a_star_import_binds_to_its_project_definition(tmp_path: Path) -> None:
    index = ProjectIndex(make_project(tmp_path, {
        "pkg/__init__.py": "from .tools import *\n",
        "pkg/tools.py": "def helper(x):\n    return x\n",
        "loop_a.py": "from loop_b import *\n",
        "loop_b.py": "from loop_a import *\n",
        "train.py": "from pkg import helper\nfrom loop_a import *\n\n\ndef main():\n"
                    "    return helper(1), missing(2)\n",
    }))
    main = Ctx("train.py", "main")
    found = index.bind("helper", main)
    assert found is not None and (found.kind, found.ctx.path) == ("function", "pkg/tools.py")
    # star imports that import each other end; a name none of them defines stays unbound
    assert index.bind("missing", main) is None
