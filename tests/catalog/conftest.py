"""Builders for small rule catalogs in temporary directories."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

VALID_RULE = '''\
id = "{rule_id}"
name = "{name}"
severity = "warning"
summary = "Something is wrong."
what = "It looks at x."
rationale = "Because it matters."
fix = "Do it right."
configuration = "Set `x`."
tags = ["test"]

[[references]]
title = "A reference"
url = "https://example.org/ref"

[[examples]]
name = "bad"
code = "x = 1\\n"
expect = ["{rule_id}"]

[examples.files]
"requirements.txt" = "opacus==1.4.0\\n"
"pkg/helper.py" = ""

[[examples]]
code = "y = 2\\n"
expect = []
pending = true

[minimal.flagged]
code = "x = 3  # flagged: here\\n"
expect = [ "{rule_id}" ]

[minimal.use-instead]
code = "x = 4\\n"
expect = [ ]
'''


def valid_rule(rule_id: str = "DP901", name: str = "test-rule") -> str:
    """The TOML text of a minimal valid rule."""
    return VALID_RULE.format(rule_id=rule_id, name=name)


WriteRule = Callable[..., Path]


@pytest.fixture
def write_rule(tmp_path: Path) -> WriteRule:
    """Write a rule file into ``tmp_path/rules`` and return that directory."""
    directory = tmp_path / "rules"
    directory.mkdir()

    def write(text: str, filename: str = "DP901.toml") -> Path:
        (directory / filename).write_text(text, encoding="utf-8")
        return directory

    return write
