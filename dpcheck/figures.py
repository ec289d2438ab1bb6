"""Figure plumbing shared by every plot dpcheck writes (bounds, audits).

matplotlib is an optional extra (``dpcheck[plot]``): it is imported only when a plot is asked
for, with the headless Agg backend, and a missing install or an unwritable path becomes a
``DpcheckError`` naming the file, never a traceback.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

from dpcheck.errors import DpcheckError


def pyplot() -> ModuleType:
    """``matplotlib.pyplot`` on the Agg backend, or a clear error if matplotlib is missing."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise DpcheckError("plots need matplotlib: pip install 'dpcheck[plot]'") from exc
    return plt


def save(figure: Any, path: Path, dpi: int = 110) -> None:
    """Write ``figure`` to ``path`` and release it, whatever happens."""
    plt = pyplot()
    try:
        figure.savefig(path, dpi=dpi)
    except OSError as exc:
        raise DpcheckError(f"{path}: cannot write the plot: {exc.strerror or exc}") from None
    finally:
        plt.close(figure)
