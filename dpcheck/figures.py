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


PLOT_EXTRA_HINT = "pip install 'dpcheck[plot]'"


def require_matplotlib(option: str) -> None:
    """Fail now, before any work, when ``option`` asks for a plot and matplotlib is missing.

    Only looks the package up (no import): a run that needs no plot pays nothing.
    """
    import importlib.util

    if importlib.util.find_spec("matplotlib") is None:
        raise DpcheckError(f"{option} needs matplotlib, which is not installed: {PLOT_EXTRA_HINT}")


def pyplot() -> ModuleType:
    """``matplotlib.pyplot`` on the Agg backend, or a clear error if matplotlib is missing."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise DpcheckError(f"plots need matplotlib: {PLOT_EXTRA_HINT}") from exc
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
