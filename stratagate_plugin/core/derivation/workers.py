"""K workers sharing one derivation pass, so K model calls are in flight at once.

Each worker claims a job, runs it and claims the next. A worker that finds nothing due
does not leave while another worker of the pass still runs a job: that job's commit may
queue one (a summary queues its extraction) or release one (an extraction waits for its
space's earlier blocks). The pass ends when no worker has a job and none is due. The
first worker to fail, or a cancellation of the pass (Ctrl-C, the plugin stopping), stops
the others, and the pass returns only once each has given back the job it held.
"""

import asyncio
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import Any

from ..records import Job


class Pass:
    """What a pass's workers share: claims made against ``max_jobs``, jobs in flight."""

    def __init__(self, max_jobs: int | None = None) -> None:
        self.max_jobs = max_jobs
        self.claimed = 0  # claims made or being made: never more than ``max_jobs``
        self.running = 0
        self._ended = asyncio.Event()  # set (and replaced) whenever a job ends

    async def next_job(self, claim: Callable[[], Awaitable[Job | None]]) -> Job | None:
        """The worker's next job; None once the pass is over for it."""
        while self.max_jobs is None or self.claimed < self.max_jobs:
            ended = self._ended
            self.claimed += 1
            job = await claim()
            if job is not None:
                self.running += 1
                return job
            self.claimed -= 1
            if not ended.is_set():  # no job ended meanwhile that could have queued one
                if self.running == 0:
                    return None
                await ended.wait()
        return None

    def job_done(self) -> None:
        """A job ended (committed, failed or given back): waiting workers claim again."""
        self.running -= 1
        self._ended.set()
        self._ended = asyncio.Event()


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
