"""Turns the session file holds and memory does not yet: recorded in order, never twice.

The harness's session file is the durable record of a conversation. When memory cannot
take a turn as it ends (the database stayed locked past the busy timeout, the disk was
full), the turn waits there; at the next turn or the next start of the session it is
recorded with the receipt it would have had, so a retry can never store it twice. Newer
turns wait behind an older one that could not be written, so none takes its place.

A receipt names the turn's number and a digest of its content. Older versions keyed it by
the number alone, and two writers of one session could number two turns alike: such a
receipt counts for a turn only if the store's fingerprint of it matches, so every distinct
turn of an old file is recorded once, and none recorded before the upgrade is recorded again.
"""

import hashlib
import logging
from collections.abc import Sequence

from ..core.clock import iso
from ..harness.types import HostTurn, Session
from .runtime import MemoryRuntime

log = logging.getLogger(__name__)


def receipt_of(turn: HostTurn) -> str:
    return f"{legacy_receipt_of(turn)}:{content_key(turn)}"


def legacy_receipt_of(turn: HostTurn) -> str:
    """The receipt of versions that trusted the turn number alone."""
    return f"host:{turn.session_id}:turn:{turn.turn}"


def content_key(turn: HostTurn) -> str:
    """A short digest of what the turn said and when it ended."""
    digest = hashlib.sha256()
    for part in (turn.user, turn.assistant, iso(turn.ended_at)):
        digest.update(part.encode("utf-8", "surrogatepass") + b"\x1f")
    return digest.hexdigest()[:16]


async def record_missing(
    runtime: MemoryRuntime, session: Session, latest: HostTurn | None = None
) -> str | None:
    """Record each turn of ``session`` that memory lacks, oldest first; a warning for the
    user naming the turns still waiting, or None when memory has them all."""
    waiting = _unsynced(runtime, session, latest)
    if not waiting:
        return None
    receipts = [receipt_of(t) for t in waiting] + [legacy_receipt_of(t) for t in waiting]
    try:
        recorded = await runtime.memory.blocks.recorded_receipts(
            runtime.session_space(session), receipts
        )
    except Exception as error:
        return _deferred(waiting, error)
    for index, turn in enumerate(waiting):
        try:
            if not await _holds(runtime, session, turn, recorded):
                await _record(runtime, session, turn)
        except Exception as error:
            return _deferred(waiting[index:], error)
        runtime.synced[session.id] = max(runtime.synced.get(session.id, 0), turn.turn)
    runtime.kick()
    return None


async def _holds(
    runtime: MemoryRuntime, session: Session, turn: HostTurn, recorded: set[str]
) -> bool:
    """Whether memory has this turn: by its receipt, or by an older receipt of its number
    recorded with this very content."""
    if receipt_of(turn) in recorded:
        return True
    legacy = legacy_receipt_of(turn)
    if legacy not in recorded:
        return False
    return await runtime.memory.blocks.holds_turn(
        runtime.session_space(session),
        session.id,
        legacy,
        user=turn.user,
        assistant=turn.assistant,
        tool_calls=[trace.model_dump() for trace in turn.tool_calls],
        at=turn.ended_at,
    )


async def _record(runtime: MemoryRuntime, session: Session, turn: HostTurn) -> None:
    await runtime.memory.blocks.append_turn(
        runtime.session_space(session),
        session.id,
        user=turn.user,
        assistant=turn.assistant,
        tool_calls=[trace.model_dump() for trace in turn.tool_calls],
        at=turn.ended_at,
        receipt_id=receipt_of(turn),
    )


def _unsynced(runtime: MemoryRuntime, session: Session, latest: HostTurn | None) -> list[HostTurn]:
    """The turns after the newest one known recorded, by number; turns sharing a number
    (old files) all stay, in file order."""
    turns = list(session.completed)
    if latest is not None and latest not in turns:
        turns.append(latest)
    done = runtime.synced.get(session.id, 0)
    fresh = [turn for turn in turns if turn.turn > done and turn.user.strip()]
    return sorted(fresh, key=lambda turn: turn.turn)


def _deferred(turns: Sequence[HostTurn], error: Exception) -> str:
    first, last = turns[0].turn, turns[-1].turn
    which = f"turn {first}" if first == last else f"turns {first}–{last}"
    log.warning("StrataGate could not record %s of %s: %s", which, turns[0].session_id, error)
    return (
        f"memory could not record {which} yet ({error}); it is kept in the session file and "
        "will be recorded at the next turn or the next start of this session"
    )
