"""`dpcheck history` (placeholder until its issue lands)."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the `history` sub-command."""
    subparsers.add_parser("history", help="(not yet available)")
