"""How a catalog example project is laid out: its main file, and the marker of a flagged line.

Shared by the data types (``rule.py``) and the page renderer (``docs.py``), which imports no
data type at run time.
"""

from __future__ import annotations

import re

EXAMPLE_MAIN_FILE = "example.py"
#: The comment that marks the line a minimal flagged snippet is reported on (``# flagged``,
#: optionally followed by why); the example tests check the finding is on that line.
FLAGGED_MARKER = re.compile(r"\s*#\s*flagged\b.*$")
