"""`dpcheck rules` (placeholder until its issue lands)."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the `rules` sub-command."""
    subparsers.add_parser("rules", help="(not yet available)")
