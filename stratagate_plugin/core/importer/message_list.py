"""Turning a flat message list (an import file) into turns, per thread.

A user message starts a turn; the assistant, tool and system messages after it belong
to it. Messages before a thread's first user message join that first turn.
"""

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from ..errors import InvalidInput
from ..records import MessageIn, Role, ToolTrace


class ImportedMessage(BaseModel):
    """One entry of an ingest file."""

    model_config = ConfigDict(extra="forbid")

    thread: str
    role: Role
    content: str
    at: datetime
    tool_calls: list[ToolTrace] = []


def parse_message_list(entries: Any) -> list[ImportedMessage]:
    """Validate a JSON list of messages; the error names the first bad entry."""
    if not isinstance(entries, list):
        raise InvalidInput("an ingest file must hold a JSON list of messages")
    parsed = []
    for index, entry in enumerate(entries):
        try:
            parsed.append(ImportedMessage.model_validate(entry))
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(str(part) for part in first["loc"])
            raise InvalidInput(f"message {index}: {where}: {first['msg']}") from None
    return parsed


def group_turns(messages: Iterable[ImportedMessage]) -> list[tuple[str, list[MessageIn]]]:
    """(thread, messages of one turn) in file order; threads interleave freely."""
    turns: list[tuple[str, list[MessageIn]]] = []
    open_turn: dict[str, list[MessageIn]] = {}
    leading: dict[str, list[MessageIn]] = {}
    for item in messages:
        message = MessageIn(
            role=item.role, content=item.content, tool_calls=tuple(item.tool_calls), at=item.at
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
