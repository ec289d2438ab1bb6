"""What the distinguisher reads from a released update, and the device it is computed on.

The worst-case pair puts every gradient on e₁, so each mixture component of either world is an
isotropic Gaussian centred on the e₁ axis; its density depends on a release x only through the
canary coordinate x₁ and the squared norm ‖x‖². Both the reference mechanisms and the Opacus
adapter reduce their real n-dimensional releases to these two numbers here.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from numpy.typing import NDArray

from dpcheck.errors import DpcheckError

DEVICES: tuple[str, ...] = ("cpu", "cuda")


@dataclass(frozen=True)
class ReleaseStats:
    """Per-trial sufficient statistics of the releases of one world (float64, on the host)."""

    first: NDArray[np.float64]
    sq_norm: NDArray[np.float64]

    def __len__(self) -> int:
        return len(self.first)

    @staticmethod
    def concat(parts: list[ReleaseStats]) -> ReleaseStats:
        """Join per-chunk statistics in trial order."""
        return ReleaseStats(
            np.concatenate([p.first for p in parts]), np.concatenate([p.sq_norm for p in parts])
        )


def squared_norms(block: torch.Tensor) -> torch.Tensor:
    """Each row's squared norm, accumulated in float64 (a row may hold millions of terms)."""
    return torch.linalg.vector_norm(block, dim=1, dtype=torch.float64).square()


def release_stats(releases: torch.Tensor) -> ReleaseStats:
    """Reduce a (trials, n) block of whole releases to (x₁, ‖x‖²)."""
    return ReleaseStats(
        releases[:, 0].to(torch.float64).cpu().numpy(), squared_norms(releases).cpu().numpy()
    )


def resolve_device(name: str) -> torch.device:
    """The torch device for ``--device``; CUDA only when this torch build can use a GPU."""
    if name not in DEVICES:
        raise DpcheckError(f"--device must be one of {', '.join(DEVICES)}, got {name!r}")
    if name == "cuda" and not torch.cuda.is_available():
        raise DpcheckError(
            "--device cuda was asked for but CUDA is not available "
            f"(torch {torch.__version__}, no usable GPU or a CPU-only build); use --device cpu"
        )
    return torch.device(name)
