"""``stratagate`` with a fixed clock and fixed ids: the browser tests' server.

Run as ``python tests/fixed_world.py serve --port 0``. Before the command starts, time
is pinned to ``START`` and moves one millisecond per reading, and ids (blocks, events,
jobs, sessions, receipts…) come from ``SEED`` and the command's name, so a run that
changes nothing renders the same pages, and the screenshots of them the same bytes.
Processes of different commands (``ingest``, then ``serve``) may share a database: their
ids differ; two processes of one command on one database would repeat each other's ids.
The launcher says so on its first line of output (``FIXED_LINE``), which is how the screenshot
helper knows the seams are on.

The seams are ``use_test_clock`` and ``use_test_ids`` of ``core/clock``, ``core/ids``
and their harness twins ``harness/clock``, ``harness/ids``; only this
launcher calls them (no setting or environment variable of a user does).
"""

import sys
import threading
from datetime import UTC, datetime, timedelta

START = datetime(2026, 3, 16, 9, 0, tzinfo=UTC)
STEP = timedelta(milliseconds=1)
SEED = 27
FIXED_LINE = "StrataGate test seams: fixed clock and ids"


class SteppingClock:
    """``START``, then one ``STEP`` later at each reading: strictly increasing, as the
    real clock is, yet the same sequence every run (a minute is 60,000 readings away)."""

    def __init__(self, start: datetime = START, step: timedelta = STEP) -> None:
        self._next = start
        self._step = step
        self._lock = threading.Lock()

    def __call__(self) -> datetime:
        with self._lock:
            now, self._next = self._next, self._next + self._step
        return now


def fix_the_world(command: str = "") -> None:
    from stratagate_plugin.core import clock, ids
    from stratagate_plugin.harness import clock as harness_clock
    from stratagate_plugin.harness import ids as harness_ids

    moments = SteppingClock()  # one sequence for the engine and the harness
    clock.use_test_clock(moments)
    harness_clock.use_test_clock(moments)
    ids.use_test_ids(f"{SEED}:{command}")
    harness_ids.use_test_ids(f"{SEED}:{command}")


def unfix_the_world() -> None:
    """The real clock and random ids again, in the engine and the harness."""
    from stratagate_plugin.core import clock, ids
    from stratagate_plugin.harness import clock as harness_clock
    from stratagate_plugin.harness import ids as harness_ids

    for seam in (clock.use_test_clock, harness_clock.use_test_clock):
        seam(None)
    for ids_seam in (ids.use_test_ids, harness_ids.use_test_ids):
        ids_seam(None)


def main() -> int:
    fix_the_world(sys.argv[1] if len(sys.argv) > 1 else "")
    print(FIXED_LINE, flush=True)
    from stratagate_plugin.cli.main import main as stratagate

    return stratagate(sys.argv[1:])


if __name__ == "__main__":
    raise SystemExit(main())
