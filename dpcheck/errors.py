"""Errors that end a command with exit code 2 and a one-line message naming the bad input, and
the text of the internal errors a scan reports without ending."""


class DpcheckError(Exception):
    """A user-facing error: bad input, bad configuration or bad parameter (exit code 2)."""


class ConfigError(DpcheckError):
    """The configuration (pyproject ``[tool.dpcheck]`` or ``--config``) is invalid."""


class CatalogError(DpcheckError):
    """The rule catalog is invalid (unknown key, duplicate id, bad severity...)."""


class ParameterError(DpcheckError):
    """A numeric parameter is outside its domain (sigma <= 0, q outside (0, 1], ...)."""


INTERNAL_MESSAGE_CHARS = 300


def internal_message(stage: str, exc: BaseException) -> str:
    """The one-line text of a dpcheck bug met while doing ``stage`` (``"summarising"``,
    ``"linking pipeline train.py"``): the exception's type and message, the message cut to
    ``INTERNAL_MESSAGE_CHARS`` characters (it may quote a scanned file at length)."""
    text = " ".join(str(exc).split())
    if len(text) > INTERNAL_MESSAGE_CHARS:
        text = text[: INTERNAL_MESSAGE_CHARS - 1] + "\u2026"
    return f"internal error while {stage}: {type(exc).__name__}: {text}"
