"""`dpcheck bound` (placeholder until its issue lands)."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the `bound` sub-command."""
    subparsers.add_parser("bound", help="(not yet available)")
