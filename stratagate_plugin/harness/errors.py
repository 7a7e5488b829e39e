"""The host's one error type, and pydantic's problems as one line the user can read."""

from pydantic import ValidationError

from ..core.errors import validation_problems


class HostError(ValueError):
    """A configuration problem the user must fix (a ``ValueError``, so the CLI reports it)."""


def describe(error: ValidationError) -> str:
    """One line for all problems: ``limit: Input should be less than or equal to 20; …``."""
    return "; ".join(validation_problems(error))
