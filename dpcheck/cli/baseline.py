"""`dpcheck baseline` (placeholder until its issue lands)."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the `baseline` sub-command."""
    subparsers.add_parser("baseline", help="(not yet available)")
