"""The host's one error type, and pydantic's problems as one line the user can read."""

from pydantic import ValidationError


class HostError(ValueError):
    """A configuration problem the user must fix (a ``ValueError``, so the CLI reports it)."""


def describe(error: ValidationError) -> str:
    """One line for all problems: ``limit: Input should be less than or equal to 20; …``."""
    return "; ".join(problem_lines(error))


def problem_lines(error: ValidationError, *, show_input: bool = False) -> list[str]:
    """One line per problem, ``where: rule`` (``show_input`` adds ``(got …)``)."""
    return [
        f"{'.'.join(str(part) for part in problem['loc']) or '(value)'}: {problem['msg']}"
        + (f" (got {problem['input']!r})" if show_input else "")
        for problem in error.errors(include_url=False)
    ]
