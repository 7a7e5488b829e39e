"""Turning a flat message list (an import file) into turns, per thread.

A user message starts a turn; the assistant, tool and system messages after it belong
to it. Messages before a thread's first user message join that first turn.

The whole list is checked before a turn is formed, so a bad entry at message 40 stops the
import before anything is written.
"""

from collections.abc import Iterable, Sequence
from contextlib import suppress
from datetime import UTC, datetime, timedelta
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator
from pydantic_core import PydanticCustomError

from ..clock import to_utc
from ..errors import InvalidInput
from ..records import MessageIn, Role, ToolTrace

EARLIEST = datetime.min.replace(tzinfo=UTC)
LATEST = datetime.max.replace(tzinfo=UTC)
SHAPE = "{thread, role, content, at, tool_calls?}"


class ImportedMessage(BaseModel):
    """One entry of an ingest file; ``at`` keeps the offset the file gave it."""

    model_config = ConfigDict(extra="forbid")

    thread: str
    role: Role
    content: str
    at: datetime
    tool_calls: list[ToolTrace] = []

    @field_validator("thread")
    @classmethod
    def _named(cls, thread: str) -> str:
        if not thread.strip():
            raise PydanticCustomError("blank", "must be a non-empty string")
        return thread

    @field_validator("at", mode="before")
    @classmethod
    def _iso(cls, at: Any) -> datetime:
        """ISO-8601 text only: a bare number could be seconds or milliseconds since 1970.

        ``t`` and ``z`` may be lower case (RFC 3339); a time without an offset is UTC.
        """
        if isinstance(at, datetime):
            return at
        with suppress(ValueError):
            if isinstance(at, str):
                return datetime.fromisoformat(at.strip().upper())
        raise PydanticCustomError(
            "iso", "must be an ISO-8601 string like 2025-01-01T10:00:00+02:00"
        )

    @property
    def in_range(self) -> bool:
        """False when the offset pushes ``at`` past year 1 or 9999 in UTC."""
        return _exact_utc(self.at) is not None

    @property
    def utc_at(self) -> datetime:
        """``at`` in UTC; a time just past the calendar's edge is stored as the edge itself.

        Such a time is a sentinel ("the end of time") in a local zone more often than a
        real moment, and keeping the turn matters more than the hours lost.
        """
        exact = _exact_utc(self.at)
        if exact is not None:
            return exact
        return LATEST if (self.at.utcoffset() or timedelta(0)) < timedelta(0) else EARLIEST


def _exact_utc(moment: datetime) -> datetime | None:
    try:
        return to_utc(moment)
    except OverflowError:
        return None


def parse_message_list(entries: Any) -> list[ImportedMessage]:
    """Validate a JSON list of messages; the error names the first bad entry."""
    if not isinstance(entries, list):
        raise InvalidInput("an ingest file must hold a JSON list of messages")
    if not entries:
        raise InvalidInput("the list holds no messages")
    parsed = []
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise InvalidInput(f"message {index}: must be a JSON object {SHAPE}")
        try:
            parsed.append(ImportedMessage.model_validate(entry))
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(_loc_part(part) for part in first["loc"])
            raise InvalidInput(f"message {index}: {where}: {first['msg']}") from None
    return parsed


def _loc_part(part: str | int) -> str:
    """A field name as is; a stray key quoted, so a newline in it cannot break the line."""
    return str(part) if isinstance(part, int) or part.isidentifier() else repr(part)


def out_of_range(messages: Sequence[ImportedMessage]) -> list[int]:
    """Indexes of the messages whose ``at`` was clamped to the calendar's edge."""
    return [index for index, message in enumerate(messages) if not message.in_range]


def group_turns(messages: Iterable[ImportedMessage]) -> list[tuple[str, list[MessageIn]]]:
    """(thread, messages of one turn) in file order; threads interleave freely."""
    turns: list[tuple[str, list[MessageIn]]] = []
    open_turn: dict[str, list[MessageIn]] = {}
    leading: dict[str, list[MessageIn]] = {}
    for item in messages:
        message = MessageIn(
            role=item.role, content=item.content, tool_calls=tuple(item.tool_calls), at=item.utc_at
        )
        if item.role == "user":
            open_turn[item.thread] = [*leading.pop(item.thread, []), message]
            turns.append((item.thread, open_turn[item.thread]))
        elif item.thread in open_turn:
            open_turn[item.thread].append(message)
        else:
            leading.setdefault(item.thread, []).append(message)
    if leading:
        raise InvalidInput(f"thread {next(iter(leading))!r} has messages but no user message")
    return turns


def turn_time(messages: Sequence[MessageIn]) -> datetime | None:
    """A turn is dated by its last message (the moment it completed)."""
    return messages[-1].at
