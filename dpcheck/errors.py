"""Errors that end a command with exit code 2 and a one-line message naming the bad input."""


class DpcheckError(Exception):
    """A user-facing error: bad input, bad configuration or bad parameter (exit code 2)."""


class ConfigError(DpcheckError):
    """The configuration (pyproject ``[tool.dpcheck]`` or ``--config``) is invalid."""


class CatalogError(DpcheckError):
    """The rule catalog is invalid (unknown key, duplicate id, bad severity...)."""


class ParameterError(DpcheckError):
    """A numeric parameter is outside its domain (sigma <= 0, q outside (0, 1], ...)."""
