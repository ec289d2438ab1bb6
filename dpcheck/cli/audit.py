"""`dpcheck audit`: a Monte-Carlo micro-audit of one DP-SGD step against its SGM claim.

torch (and Opacus) are imported only when the command runs, so ``dpcheck --help`` and the core
install work without the ``audit`` extra. Exit codes: 0 no violation, 1 violation confirmed,
2 bad input or missing dependency.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from dpcheck.cli import command_help
from dpcheck.errors import DpcheckError

PAPER_SETTING = {"N": 4, "q": 0.5, "sigma": 10.0, "clip": 0.1, "dim": 100}
EXIT_NO_VIOLATION, EXIT_VIOLATION = 0, 1


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the `audit` sub-command."""
    parser = subparsers.add_parser(
        "audit",
        help=command_help("audit"),
        description=(
            "Run the mechanism many times on the worst-case neighbouring pair (|D|=N, D' = D "
            "plus a canary), distinguish them with the optimal likelihood-ratio test, and "
            "compare the certified error rates (Clopper-Pearson) with the one-step Poisson SGM "
            "guarantee an accountant claims. Exit 1 when a violation is confirmed. Defaults "
            f"with --mechanism: the paper's synthetic setting {PAPER_SETTING}."
        ),
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--mechanism", choices=("sgm", "asgm", "easgm", "feasgm"))
    source.add_argument(
        "--finding", metavar="FINGERPRINT",
        help="audit a finding of a scan (needs --scan-json); the mechanism and sigma, q, C, n "
        "come from its pipeline, N is picked where the leak is largest; options given override",
    )
    parser.add_argument("--scan-json", type=Path, metavar="FILE",
                        help="the JSON report of `dpcheck scan --format json` holding --finding")
    parser.add_argument("--implementation", choices=("reference", "opacus"), default="reference",
                        help="reference torch mechanism, or the installed Opacus optimizer")
    parser.add_argument("--N", type=int, help="|D|; D' adds one canary")
    parser.add_argument("--q", type=float, help="Poisson sampling rate")
    parser.add_argument("--sigma", type=float, help="noise multiplier (std = sigma * C)")
    parser.add_argument("--clip", type=float, help="clipping norm C")
    parser.add_argument("--dim", type=int, help="model dimension n (coordinates per release)")
    parser.add_argument("--trials", type=int, default=10_000, help="releases per dataset")
    parser.add_argument("--delta", type=float, default=1e-5)
    parser.add_argument("--confidence", type=float, default=0.95)
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument("--plot", type=Path, metavar="FILE.png",
                        help="plot the audit (needs the plot extra: pip install 'dpcheck[plot]')")
    parser.set_defaults(func=run)


def _require_torch() -> None:
    try:
        import torch  # noqa: F401
    except ImportError as exc:
        raise DpcheckError("dpcheck audit needs torch: pip install 'dpcheck[audit]'") from exc


def run(args: argparse.Namespace) -> int:
    """Build the setting, run the audit, print it (and plot it); exit 1 on a violation."""
    _require_torch()
    if args.plot is not None:
        from dpcheck.figures import require_matplotlib

        require_matplotlib("--plot")  # before the audit's trials, not after them
    from dpcheck.audit.finding import Overrides, load_finding, setting_from_finding
    from dpcheck.audit.runner import AuditOptions, run_audit
    from dpcheck.audit.setting import AuditSetting

    overrides = Overrides(args.N, args.q, args.sigma, args.clip, args.dim)
    if args.finding:
        if args.scan_json is None:
            raise DpcheckError(
                "--finding needs --scan-json FILE (a `dpcheck scan --format json` report)"
            )
        finding, pipeline = load_finding(args.scan_json, args.finding)
        setting, notes = setting_from_finding(finding, pipeline, overrides)
    else:
        values = {k: v if v is not None else PAPER_SETTING[k] for k, v in vars(overrides).items()}
        setting, notes = AuditSetting(args.mechanism.upper(), **values), []
    options = AuditOptions(args.implementation, args.trials, args.delta, args.confidence,
                           args.device, args.seed)
    result = run_audit(setting, options, notes)
    report = result.to_json()
    if args.format == "json":
        sys.stdout.write(json.dumps(report, indent=2) + "\n")
    else:
        from dpcheck.audit.text import render_text

        sys.stdout.write(render_text(report))
    if args.plot is not None:
        from dpcheck.audit.plot import plot_audit

        plot_audit(result, args.plot)
    return EXIT_VIOLATION if result.test.violation else EXIT_NO_VIOLATION
