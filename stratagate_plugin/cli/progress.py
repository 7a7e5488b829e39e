"""A one-line progress report on stderr for long commands (ingest, process, bench), and
the line an index rebuild at open prints as it starts and ends (``core/rebuilds.py``).

Never on stdout, so ``--json`` output and pipes stay clean. On a terminal the line is
redrawn in place (at most ten times a second, and at the end); elsewhere (a log, a pipe,
a test) it is written every ``every`` items and once at the end, so a log keeps a short
history and a final line with the total. The clock is injected so that rate and ETA can
be tested without waiting.
"""

import sys
import time
from collections.abc import Callable
from types import TracebackType
from typing import TextIO

from ..core.rebuilds import Rebuild

REDRAW_S = 0.1
EVERY = 500


def duration(seconds: float) -> str:
    """``0:07``, ``12:30``, ``1:02:03``: minutes and seconds, hours when there are any."""
    whole = max(0, round(seconds))
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def rate_text(per_second: float) -> str:
    """Three significant figures at most: ``1.23/s``, ``45.6/s``, ``789/s``."""
    if per_second >= 100:
        return f"{per_second:.0f}/s"
    return f"{per_second:.2f}/s" if per_second < 10 else f"{per_second:.1f}/s"


def progress_line(
    label: str, unit: str, done: int, total: int, elapsed_s: float, final: bool = False
) -> str:
    """``ingest: 120/500 turns (24%), 37.5/s, ETA 0:10``; the final line says how long it
    took instead. Before the first item or second there is no rate to speak of."""
    total = max(total, done)
    percent = f" ({100 * done // total}%)" if total else ""
    head = f"{label}: {done}/{total} {unit}{percent}"
    rate = done / elapsed_s if elapsed_s > 0 else 0.0
    speed = f", {rate_text(rate)}" if rate > 0 else ""
    if final:
        return f"{head}{speed}, took {duration(elapsed_s)}"
    if rate <= 0:
        return f"{head}, ETA --:--"
    return f"{head}{speed}, ETA {duration((total - done) / rate)}"


class Progress:
    """Counts items against a total (which may grow: a job can queue another) and reports.

    ``with Progress(...) as progress:`` writes the final line when the block completes
    (``close``) and only ends the line when it raises (``abandon``).
    """

    def __init__(
        self,
        label: str,
        unit: str,
        total: int,
        *,
        stream: TextIO | None = None,
        clock: Callable[[], float] = time.monotonic,
        every: int = EVERY,
    ) -> None:
        self.label, self.unit, self.total, self.done = label, unit, total, 0
        self.stream = stream or sys.stderr
        self.clock, self.every = clock, max(1, every)
        self.started = self.drawn_at = clock()
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.note, self.logged, self.drawn = "", 0, False

    def advance(self, count: int = 1, note: str = "") -> None:
        """``count`` more items done; ``note`` (what was just done) shows on a terminal."""
        self.update(self.done + count, note=note)

    def update(self, done: int, total: int | None = None, note: str = "") -> None:
        self.done = done
        self.total = max(self.total if total is None else total, done)
        self.note = note
        now = self.clock()
        if self.tty and now - self.drawn_at >= REDRAW_S:
            self._write("\r" + self._line(now) + "\033[K")
            self.drawn_at, self.drawn = now, True
        elif not self.tty and self.done - self.logged >= self.every:
            self._write(self._line(now) + "\n")
            self.logged = self.done

    def complete(self) -> None:
        """The run is over and nothing is left: what was done was the whole of it (a total
        counted ahead, like the jobs a summary was expected to queue, may have been high)."""
        self.total = self.done

    def close(self) -> None:
        """The final line: always, unless there was nothing to do at all."""
        if not self.total and not self.done:
            return
        line = progress_line(
            self.label, self.unit, self.done, self.total, self.clock() - self.started, True
        )
        self._write(("\r" + line + "\033[K" if self.tty else line) + "\n")

    def abandon(self) -> None:
        """A run that failed: the error says how far it got, so no final line; a line drawn
        on a terminal is ended, for the error to start on a line of its own."""
        if self.drawn:
            self._write("\n")

    def _line(self, now: float) -> str:
        line = progress_line(self.label, self.unit, self.done, self.total, now - self.started)
        return f"{line}  {self.note}" if self.note and self.tty else line

    def _write(self, text: str) -> None:
        self.stream.write(text)
        self.stream.flush()

    def __enter__(self) -> "Progress":
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if error is None:
            self.close()
        else:
            self.abandon()


def rebuild_line(rebuild: Rebuild) -> str:
    """``building the search index for 500,000 messages (once)…`` as a rebuild starts,
    ``built the search index for 500,000 messages in 2:31`` as it ends."""
    what = f"{rebuild.index} for {rebuild.items:,} {rebuild.unit}"
    if rebuild.seconds is None:
        return f"stratagate: building {what} (once)…"
    return f"stratagate: built {what} in {duration(rebuild.seconds)}"


def print_rebuild(rebuild: Rebuild, stream: TextIO | None = None) -> None:
    """The CLI's ``RebuildReport``: one line on stderr (stdout stays the command's)."""
    print(rebuild_line(rebuild), file=stream or sys.stderr, flush=True)
