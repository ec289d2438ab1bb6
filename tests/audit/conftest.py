"""The audit needs the optional torch extra; without it, the whole folder is skipped."""

import pytest

pytest.importorskip("torch")
