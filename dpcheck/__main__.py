"""Allow ``python -m dpcheck``."""

from dpcheck.cli import main

raise SystemExit(main())
