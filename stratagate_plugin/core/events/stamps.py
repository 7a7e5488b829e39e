"""Retrieval stamps written behind the search that found them.

``last_retrieved_at`` is observability (no counter, no ranking reads it). Written inside
the search, it made every event search and every automatic recall, the call before each
model call, wait for the writer: behind the derivation worker's transactions in this
process, and behind another process's write lock (SQLite's busy handler sleeps 1, 2, 5,
10 … ms). A search now notes its hits and returns; one task per engine writes what was
noted, each event's newest stamp, all in one write unit, while searches go on.

``flush`` waits until every stamp noted so far is written: the engine's ``close`` calls it,
so a command that searched and exits has written its stamps. A stamp that cannot be
written (the file gone read-only, the server away) is dropped with a warning: losing one
costs a timestamp, never memory; a crash loses the last unwritten ones, as PostgreSQL's
unflushed stamp commits already could.
"""

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence

StampWrite = Callable[[Mapping[str, str]], Awaitable[None]]
log = logging.getLogger(__name__)


class RetrievalStamps:
    """Stamps noted by searches, written by one background task at a time."""

    def __init__(self, write: StampWrite) -> None:
        self._write = write
        self._pending: dict[str, str] = {}
        self._task: asyncio.Task[None] | None = None

    def note(self, event_ids: Sequence[str], now: str) -> None:
        """Remember that ``event_ids`` were retrieved at ``now`` (an ISO time); the write
        starts when the caller next yields to the event loop."""
        for event_id in event_ids:
            if self._pending.get(event_id, "") < now:
                self._pending[event_id] = now
        if self._pending and (self._task is None or self._task.done()):
            self._task = asyncio.get_running_loop().create_task(self._drain())

    async def flush(self) -> None:
        """Return once every stamp noted before the call is written (or dropped); a
        drain cancelled with its loop's shutdown is not this caller's error."""
        while self._task is not None and not self._task.done():
            await asyncio.wait({self._task})

    @property
    def pending(self) -> int:
        return len(self._pending)

    async def _drain(self) -> None:
        while self._pending:
            batch, self._pending = self._pending, {}
            try:
                await self._write(batch)
            except Exception as error:  # observability only: never a caller's failure
                log.warning("retrieval stamps of %d events not written: %s", len(batch), error)
