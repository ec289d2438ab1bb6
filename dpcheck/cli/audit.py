"""`dpcheck audit` (placeholder until its issue lands)."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the `audit` sub-command."""
    subparsers.add_parser("audit", help="(not yet available)")
