"""Turns the session file holds and memory does not yet: recorded in order, never twice.

The harness's session file is the durable record of a conversation. When memory cannot
take a turn as it ends (the database stayed locked past the busy timeout, the disk was
full), the turn waits there; at the next turn or the next start of the session it is
recorded with the receipt it would have had, so a retry can never store it twice. Newer
turns wait behind an older one that could not be written, so none takes its place.
"""

import logging
from collections.abc import Sequence

from ..harness.types import HostTurn, Session
from .runtime import MemoryRuntime

log = logging.getLogger(__name__)


def receipt_of(turn: HostTurn) -> str:
    return f"host:{turn.session_id}:turn:{turn.turn}"


async def record_missing(
    runtime: MemoryRuntime, session: Session, latest: HostTurn | None = None
) -> str | None:
    """Record each turn of ``session`` that memory lacks, oldest first; a warning for the
    user naming the turns still waiting, or None when memory has them all."""
    waiting = _unsynced(runtime, session, latest)
    if not waiting:
        return None
    memory, namespace = runtime.memory, runtime.namespace(session)
    try:
        recorded = await memory.recorded_receipts(namespace, [receipt_of(t) for t in waiting])
    except Exception as error:
        return _deferred(waiting, error)
    for index, turn in enumerate(waiting):
        if receipt_of(turn) not in recorded:
            try:
                await memory.append_turn(
                    namespace,
                    session.id,
                    user=turn.user,
                    assistant=turn.assistant,
                    tool_calls=turn.tool_calls,
                    at=turn.ended_at,
                    receipt_id=receipt_of(turn),
                )
            except Exception as error:
                return _deferred(waiting[index:], error)
        runtime.synced[session.id] = turn.turn
    runtime.kick()
    return None


def _unsynced(runtime: MemoryRuntime, session: Session, latest: HostTurn | None) -> list[HostTurn]:
    turns = {turn.turn: turn for turn in session.completed}
    if latest is not None:
        turns.setdefault(latest.turn, latest)
    done = runtime.synced.get(session.id, 0)
    return [turns[n] for n in sorted(turns) if n > done and turns[n].user.strip()]


def _deferred(turns: Sequence[HostTurn], error: Exception) -> str:
    first, last = turns[0].turn, turns[-1].turn
    which = f"turn {first}" if first == last else f"turns {first}–{last}"
    log.warning("StrataGate could not record %s of %s: %s", which, turns[0].session_id, error)
    return (
        f"memory could not record {which} yet ({error}); it is kept in the session file and "
        "will be recorded at the next turn or the next start of this session"
    )
