"""K workers sharing one derivation pass, so K model calls are in flight at once.

Each worker claims a job, runs it and claims the next. A worker that finds nothing due
does not leave while another worker of the pass still runs a job: that job's commit may
queue one (a summary queues its extraction) or release one (an extraction waits for its
space's earlier blocks). The pass ends when no worker has a job and none is due. The
first worker to fail, or a cancellation of the pass (Ctrl-C, the plugin stopping), stops
the others, and the pass returns only once each has given back the job it held.
"""

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import Any

from ..records import Job


class Pass:
    """What a pass's workers share: claims made against ``max_jobs``, jobs in flight.

    A job's end wakes one waiting worker, not all: the worker that ran it claims again
    itself, and a woken worker whose claim succeeds wakes the next (the end may have freed
    several jobs). Waking every waiter made each end cost K claims, most finding nothing:
    write transactions that held the writer back, once a space's graph jobs ran one at a
    time. A worker that finds nothing while no job runs ends the pass: every waiter wakes
    and leaves."""

    def __init__(self, max_jobs: int | None = None) -> None:
        self.max_jobs = max_jobs
        self.claimed = 0  # claims made or being made: never more than ``max_jobs``
        self.running = 0
        self.ended = 0  # jobs ended so far: a claim that missed one tries again at once
        self._waiting: deque[asyncio.Future[None]] = deque()

    async def next_job(self, claim: Callable[[], Awaitable[Job | None]]) -> Job | None:
        """The worker's next job; None once the pass is over for it."""
        woken = False
        while self.max_jobs is None or self.claimed < self.max_jobs:
            seen = self.ended
            self.claimed += 1
            job = await claim()
            if job is not None:
                self.running += 1
                if woken:  # the end that woke it may have freed another job
                    self._wake(1)
                return job
            self.claimed -= 1
            if self.ended == seen:  # no job ended meanwhile that could have queued one
                if self.running == 0:
                    break
                await self._wait()
                woken = True
        self._wake(len(self._waiting))
        return None

    def job_done(self) -> None:
        """A job ended (committed, failed or given back): one waiting worker claims again
        beside the one that ran it (which claims next, or ends the pass for everyone)."""
        self.running -= 1
        self.ended += 1
        self._wake(1)

    async def _wait(self) -> None:
        waiter = asyncio.get_running_loop().create_future()
        self._waiting.append(waiter)
        try:
            await waiter
        finally:
            if waiter in self._waiting:
                self._waiting.remove(waiter)

    def _wake(self, count: int) -> None:
        while count > 0 and self._waiting:
            waiter = self._waiting.popleft()
            if not waiter.done():
                waiter.set_result(None)
                count -= 1


async def run_all(workers: Sequence[Coroutine[Any, Any, None]]) -> None:
    """Run the workers to their end; on the first error or a cancellation stop the rest,
    wait for each (a stopped worker gives its job back), then raise that error."""
    tasks = [asyncio.create_task(worker) for worker in workers]
    try:
        done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
    except asyncio.CancelledError:
        await _stop(tasks)
        raise
    failed = [task for task in done if not task.cancelled() and task.exception() is not None]
    if failed:
        await _stop(tasks)
        error = failed[0].exception()
        assert error is not None
        raise error


async def _stop(tasks: Sequence[asyncio.Task[None]]) -> None:
    for task in tasks:
        task.cancel()
    await asyncio.wait(tasks)
    for task in tasks:  # retrieved, so none is reported as "never retrieved"
        if not task.cancelled():
            task.exception()
