"""``dpcheck bound MECHANISM``: the claimed, witness and guarantee bounds and the verdict for one
parameter set (README.md, "Commands"; docs/theory.md#verdicts)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from dpcheck.cli import command_help
from dpcheck.bounds.defaults import DEFAULT_ALPHAS, DEFAULT_DELTA, MECHANISM_NAMES
from dpcheck.errors import ParameterError

if TYPE_CHECKING:
    from dpcheck.bounds.request import BoundRequest


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``bound`` sub-command."""
    p = subparsers.add_parser(
        "bound",
        help=command_help("bound"),
        description="What the accountant claims for SGM + Poisson, what the mechanism really "
        "implemented can (witness) and cannot (guarantee) achieve, and the verdict.",
    )
    p.add_argument("mechanism", choices=MECHANISM_NAMES, metavar="MECHANISM",
                   help=f"one of {', '.join(MECHANISM_NAMES)}")
    noise = p.add_mutually_exclusive_group()
    noise.add_argument("--sigma", type=float, help="noise multiplier (noise std / clip norm)")
    p.add_argument("--clip", type=float, help="clip norm C (informational: sigma is a multiplier)")
    p.add_argument("--q", type=float, help="sampling rate; or give --batch-size with --N")
    p.add_argument("--batch-size", type=int, help="batch size b (q = b/N, or 1/len(loader) with --opacus-divisor)")
    p.add_argument("--N", type=int, dest="n_records", help="dataset size N")
    p.add_argument("--steps", type=int, help="number of noisy steps T")
    p.add_argument("--epochs", type=float, help="epochs (T = epochs x steps per epoch)")
    p.add_argument("--dim", type=int, help="model dimension n (number of parameters)")
    p.add_argument("--delta", type=float, default=DEFAULT_DELTA, help=f"claimed delta (default {DEFAULT_DELTA:g})")
    p.add_argument("--epsilon", type=float, help="claimed epsilon (default: what the accountant reports)")
    noise.add_argument("--target-epsilon", type=float,
                       help="instead of --sigma: search sigma as Opacus make_private_with_epsilon does")
    p.add_argument("--alpha", type=float, action="append",
                   help="type-I error level for the curves (repeatable; default "
                   + ", ".join(f"{a:g}" for a in DEFAULT_ALPHAS) + ")")
    p.add_argument("--accountant", type=_accountant, default="pld", metavar="NAME",
                   help="whose epsilon the claimed side reproduces: pld (default), opacus-rdp, "
                   "opacus-prv, opacus-gdp, tf-privacy-rdp, dp-accounting-rdp, dp-accounting-pld, "
                   "prv-accountant")
    p.add_argument("--opacus-divisor", action="store_true",
                   help="divisor as Opacus 1.x computes it: int(N * (1/len(loader)))")
    p.add_argument("--drop-last", action="store_true", help="the loader drops the last partial batch")
    p.add_argument("--sampler", choices=_samplers(), metavar="KIND",
                   help="with shuffle: how the batches are formed, one of " + ", ".join(_samplers())
                   + " (default shuffle)")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument("--plot", type=Path, metavar="FILE.png", help="write the curves and delta(eps) profiles (needs the plot extra: "
                   "pip install 'dpcheck[plot]')")
    p.set_defaults(func=execute)


def _samplers() -> list[str]:
    """The non-Poisson kinds of the sampler table (``dpcheck/data/samplers.json``)."""
    from dpcheck.samplers import sampler_table

    return [name for name, kind in sampler_table().kinds.items() if kind.sampling != "poisson"]


def _accountant(name: str) -> str:
    """An accountant name ``dpcheck.bounds.claimed`` models (checked lazily: it loads scipy)."""
    from dpcheck.bounds.claimed import ACCOUNTANTS

    if name not in ACCOUNTANTS:
        raise argparse.ArgumentTypeError(f"unknown accountant {name!r} (choose from {', '.join(sorted(ACCOUNTANTS))})")
    return name


def request_from_args(args: argparse.Namespace) -> BoundRequest:
    """The bound request the flags describe (``--sampler`` only with ``shuffle``)."""
    from dpcheck.bounds.request import BoundRequest  # the numeric engine: only when a bound runs

    if args.sampler is not None and args.mechanism != "shuffle":
        raise ParameterError(f"--sampler describes non-Poisson batches: use it with shuffle, not {args.mechanism}")
    return BoundRequest(
        mechanism=args.mechanism,
        sigma=args.sigma,
        q=args.q,
        batch_size=args.batch_size,
        n_records=args.n_records,
        steps=args.steps,
        epochs=args.epochs,
        dim=args.dim,
        delta=args.delta,
        epsilon=args.epsilon,
        alphas=tuple(args.alpha) if args.alpha else DEFAULT_ALPHAS,
        clip=args.clip,
        opacus_divisor=args.opacus_divisor,
        drop_last=args.drop_last,
        accountant=args.accountant,
        target_epsilon=args.target_epsilon,
        sampler=args.sampler or "shuffle",
    )


def execute(args: argparse.Namespace) -> int:
    """Compute the report, print it, and write the plot if asked."""
    from dpcheck.bounds.report import build_report
    from dpcheck.bounds.summary import text_report
    from dpcheck.report.jsonable import strict_json

    if args.plot is not None:
        from dpcheck.figures import require_matplotlib

        require_matplotlib("--plot")  # before the computation, not after it
    report = build_report(request_from_args(args))
    if args.plot is not None:
        from dpcheck.bounds.plot import write_plot

        write_plot(report, args.plot)
    if args.format == "json":
        sys.stdout.write(json.dumps(strict_json(report.to_json()), indent=2, allow_nan=False) + "\n")
    else:
        sys.stdout.write(text_report(report))
    return 0
