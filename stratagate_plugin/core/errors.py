"""Small exception classes raised deep in core and translated once at each edge."""

from pydantic import ValidationError


class StrataGateError(Exception):
    """Base of every error the engine raises for its caller: a user-facing message in ``str``."""


class NotFound(StrataGateError):
    """An id that names nothing in this database."""


class InvalidInput(StrataGateError):
    """Input of the wrong shape or type."""


class ReceiptConflict(StrataGateError):
    """A receipt id replayed with a different payload."""


class StaleEdit(StrataGateError):
    """A change based on a read that is no longer current (someone saved in between)."""


class SchemaTooNew(StrataGateError):
    """The database was written by a newer StrataGate than this one."""


class StorageError(StrataGateError):
    """The database cannot be used as it is: the message says which database and why."""


class StorageBusy(StorageError):
    """Another process held the write lock past the busy timeout: a moment's contention, so a
    background job hands its work back instead of counting a failed attempt."""


class BlockNotReady(StrataGateError):
    """The operation needs a ready block (derived L0–L2, extraction finished)."""


def require_names(**names: object) -> None:
    """Each of ``names`` (a namespace, a thread id, …) must be a non-blank string."""
    for label, value in names.items():
        if not isinstance(value, str) or not value.strip():
            raise InvalidInput(f"{label} must be a non-empty string")


def validation_problems(error: ValidationError, *, show_input: bool = False) -> list[str]:
    """One line per problem, ``events.0.scope: Input should be 'user', …`` (``show_input``
    adds ``(got 'abc')``): how every edge reports a pydantic error to a person."""
    problems = []
    for problem in error.errors(include_url=False):
        where = ".".join(str(part) for part in problem["loc"]) or "(value)"
        given = f" (got {problem['input']!r})" if show_input else ""
        problems.append(f"{where}: {problem['msg']}{given}")
    return problems
