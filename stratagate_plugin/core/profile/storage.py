"""What the resident profile needs from storage (the contract a database implements).

A field's revision is the id of its latest audit row, so an edit made from a revision
that is no longer the latest is refused (``ProfileConflict``) in the write itself; the
field rules (names, lengths, the total) stay in ``fields.py`` and the service.
"""

from collections.abc import Callable
from typing import Literal, NamedTuple, Protocol

from pydantic import BaseModel

from ..clock import UtcDatetime
from ..errors import StaleEdit

Source = Literal["settings", "user_explicit", "agent_tool", "maintenance"]
__all__ = [
    "FieldChange",
    "ProfileChange",
    "ProfileConflict",
    "ProfileStorage",
    "Proposal",
    "Source",
    "StoredField",
]


class ProfileConflict(StaleEdit):
    """The field changed elsewhere since the caller read it (stale revision); it carries
    the stored value and revision, so the caller can show them beside its own edit."""

    def __init__(self, field: str, value: str, revision: int, expected: int) -> None:
        self.field, self.value, self.revision, self.expected = field, value, revision, expected
        super().__init__(
            f"{field} was just updated elsewhere (revision {revision}, you had "
            f"{expected}); reload it and try again"
        )


class ProfileChange(BaseModel):
    """One audit row: a field went from ``old_value`` to ``new_value``."""

    id: int
    field: str
    old_value: str
    new_value: str
    source: Source
    message_id: str | None = None
    created_at: UtcDatetime


class StoredField(NamedTuple):
    value: str
    revision: int
    updated_at: str


class FieldChange(NamedTuple):
    """One field set to ``value`` by ``source`` at ``now``; ``expected_revision`` (when
    given) is the revision the editor saw."""

    field: str
    value: str
    source: str
    now: str
    expected_revision: int | None = None
    message_id: str | None = None


class Proposal(NamedTuple):
    id: str
    field: str
    value: str


class ProfileStorage(Protocol):
    async def fields(self) -> dict[str, StoredField]:
        """Every field ever set, with its revision and when it changed (one read)."""
        ...

    async def changes(self, limit: int, offset: int) -> list[ProfileChange]:
        """The audit rows newest first (by their id), one page."""
        ...

    async def write_field(
        self, change: FieldChange, allowed: Callable[[dict[str, str]], None]
    ) -> tuple[bool, int]:
        """``(modified, revision)`` in one transaction: ``allowed`` is called with every
        field's value as the write would leave them (and may raise to refuse it); a stale
        ``expected_revision`` raises ``ProfileConflict``; an unchanged value writes nothing
        and returns the current revision."""
        ...

    async def add_proposal(self, thread_key: str, field: str, value: str, now: str) -> str:
        """A pending proposal (its id); any earlier pending one of the conversation is
        refused in the same transaction."""
        ...

    async def pending_proposals(self, thread_key: str) -> list[Proposal]:
        """The conversation's pending proposals, oldest first."""
        ...

    async def resolve_proposal(self, proposal_id: str, status: str, now: str) -> None:
        """The proposal ``applied`` or ``refused`` (idempotent: the last status stays)."""
        ...
