"""dpcheck: a static analyzer for differentially private ML training code."""

__version__ = "0.1.0"
