"""How many foreground requests this process is serving, so background work can yield.

The web app (a page request), the MCP server (a tool call) and the plugin's recall before
a model call count themselves in with ``serving()``; the derivation worker calls
``yield_to_foreground()`` between jobs, which lets the event loop run and, while any
request is in flight, waits for the last one to end (at most ``MAX_BACKOFF_S``, or
``JOB_SHARE`` times as long as the caller's last job took, up to ``MAX_SHARE_BACKOFF_S``:
while requests keep coming, a worker whose jobs take 100 ms would otherwise take half the
CPU; so a long stream slows the worker without starving it). With nothing in flight it
costs one loop turn, so no test races against a sleep. Imports nothing of the package (the
web shell uses it).

Other processes on the same database (``serve``'s web processes beside its worker
process, an MCP server per client) share a board, ``shared_foreground.py``: each shows its
count there and a worker yields to theirs as to its own process's (the same bounded wait).
The plugin's runtime adds the board to ``boards``.
"""

import asyncio
import time
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol

MAX_BACKOFF_S = 0.1
JOB_SHARE = 3.0  # a worker waits up to this many times its last job's time: ≤ 1/4 of a core
MAX_SHARE_BACKOFF_S = 2.0
OTHERS_POLL_S = 0.005


class Board(Protocol):
    """Where this process's count is shown to other processes, and theirs read."""

    def publish(self, count: int) -> None: ...

    def others(self) -> int: ...


class Foreground:
    """A counter of requests in flight and the background waiters to wake at zero."""

    def __init__(self) -> None:
        self.busy = 0
        self._waiters: list[asyncio.Future[None]] = []
        self.boards: list[Board] = []  # shared with other processes on the same database
        self._resumed: weakref.WeakKeyDictionary[asyncio.Task[object], float] = (
            weakref.WeakKeyDictionary()
        )  # when each worker task last came back from ``yield_to``: its job started then
        self._paying = False  # a worker task is waiting its share in ``yield_to``

    @contextmanager
    def serving(self) -> Iterator[None]:
        """Count one request in for the ``with`` block."""
        self.busy += 1
        self._show(self.busy)
        try:
            yield
        finally:
            self.busy -= 1
            self._show(self.busy)
            if self.busy == 0:
                self._wake_all()

    async def yield_to(self, max_backoff_s: float = MAX_BACKOFF_S) -> None:
        """One loop turn; then, while requests are in flight, wait for them (bounded by
        ``max_backoff_s`` or by ``JOB_SHARE`` times the calling task's last job). While any
        request runs, a pass's K worker tasks wait their turns one after another: waiting
        side by side, each would take its quarter of the CPU."""
        task = asyncio.current_task()
        try:
            while self._paying and self._anyone_busy():  # one worker task waits at a time
                await asyncio.sleep(OTHERS_POLL_S)
            self._paying = True
            try:
                await self._yield(max(max_backoff_s, self._share(task)))
            finally:
                self._paying = False
        finally:
            if task is not None:
                self._resumed[task] = time.monotonic()

    def _share(self, task: "asyncio.Task[object] | None") -> float:
        """The wait the task's last job earns: the time since it last came back from here."""
        resumed = self._resumed.get(task) if task is not None else None
        if resumed is None:
            return 0.0
        return min(MAX_SHARE_BACKOFF_S, JOB_SHARE * (time.monotonic() - resumed))

    async def _yield(self, max_backoff_s: float) -> None:
        await asyncio.sleep(0)
        if self._others_busy() > 0:
            await self._wait_for_others(max_backoff_s)
        if self.busy == 0:
            return
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            await asyncio.wait_for(waiter, timeout=max_backoff_s)
        except TimeoutError:
            pass
        finally:
            if waiter in self._waiters:
                self._waiters.remove(waiter)

    async def _wait_for_others(self, max_backoff_s: float) -> None:
        """Poll the other processes' count (a read of shared memory) until it is zero."""
        deadline = time.monotonic() + max_backoff_s
        while self._others_busy() > 0 and time.monotonic() < deadline:
            await asyncio.sleep(OTHERS_POLL_S)

    def _anyone_busy(self) -> bool:
        return self.busy > 0 or self._others_busy() > 0

    def _show(self, count: int) -> None:
        for board in self.boards:
            board.publish(count)

    def _others_busy(self) -> int:
        return sum(board.others() for board in self.boards)

    def _wake_all(self) -> None:
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            if not waiter.done() and not waiter.get_loop().is_closed():
                waiter.get_loop().call_soon_threadsafe(_resolve, waiter)


def _resolve(waiter: "asyncio.Future[None]") -> None:
    if not waiter.done():
        waiter.set_result(None)


FOREGROUND = Foreground()
"""The process's one counter: requests and the worker of one process share it."""

serving = FOREGROUND.serving
yield_to_foreground = FOREGROUND.yield_to
