"""Who runs a derivation job, and the heartbeat that keeps its lease while the model works.

A lease is how one process tells a live worker's job from a dead one's: the worker renews
it every third of its length, so only a worker that died or stalled lets it run out, and
only then may another process (``stratagate process``, the plugin's worker) take the job.
"""

import asyncio
import contextlib
import logging
import os
import secrets
import socket
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from datetime import timedelta

DEFAULT_LEASE_S = 60.0
log = logging.getLogger(__name__)


def worker_id() -> str:
    """``host:pid:random``: the process holding a job, and which of its workers."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"


def dead_local_owners(owners: Iterable[str]) -> set[str]:
    """The owners among ``owners`` that were processes of this machine and are gone: their
    leases need not run out before a restarted ``stratagate process`` takes their jobs back
    (a reused pid only means waiting for the lease, as for any other owner)."""
    here = socket.gethostname()
    dead = set()
    for owner in owners:
        host, _, rest = owner.partition(":")
        pid = rest.partition(":")[0]
        if host == here and pid.isdigit() and not _alive(int(pid)):
            dead.add(owner)
    return dead


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's live process
        return True
    return True


@contextlib.asynccontextmanager
async def heartbeat(renew: Callable[[], Awaitable[bool]], lease: timedelta) -> AsyncIterator[None]:
    """Call ``renew`` every third of ``lease`` while the body runs, until it reports the lease
    lost (the result is then dropped at commit, where the claim is checked again)."""
    beat = asyncio.create_task(_beat(renew, lease.total_seconds() / 3))
    try:
        yield
    finally:
        beat.cancel()
        await asyncio.wait([beat])  # unlike awaiting it, never swallows our own cancellation


async def _beat(renew: Callable[[], Awaitable[bool]], every: float) -> None:
    while True:
        await asyncio.sleep(every)
        try:
            if not await renew():
                return
        except Exception:  # a busy or closing database: the next beat tries again
            log.exception("renewing a derivation job's lease failed")
