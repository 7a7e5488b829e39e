"""Long work an open does once (an index built for a file that lacks it, or of an older
version), reported as it starts and as it ends.

Building the impact indexes of a 500k-message file takes minutes inside the first open;
silent, it looks like a hang. The store reports each rebuild to a ``RebuildReport``
callback: the one ``StrataGate.open`` is handed, else the process's default (silent; the
command line installs one that writes a line on stderr, so ``serve``, ``chat`` and every
command say what they are doing). Imports nothing of the package: the CLI sets it.
"""

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass


@dataclass(frozen=True)
class Rebuild:
    """One rebuild: what (``index``), over how many ``items`` of which ``unit``; ``seconds``
    is ``None`` as it starts and how long it took once it ended."""

    index: str
    items: int
    unit: str
    seconds: float | None = None


RebuildReport = Callable[[Rebuild], None]


def quiet(rebuild: Rebuild) -> None:
    """The library's default: a rebuild says nothing."""


_DEFAULT: list[RebuildReport] = [quiet]


def report_with(report: RebuildReport) -> None:
    """Make ``report`` the process's default (the CLI's stderr line)."""
    _DEFAULT[0] = report


def default_report() -> RebuildReport:
    return _DEFAULT[0]


@contextmanager
def rebuilding(
    report: RebuildReport,
    index: str,
    items: int,
    unit: str,
    clock: Callable[[], float] = time.monotonic,
) -> Iterator[None]:
    """Report ``index``'s rebuild as the block starts and, when it ends without an error,
    with its time; nothing for no ``items`` (a new file's empty index takes no time)."""
    if items == 0:
        yield
        return
    started = clock()
    report(Rebuild(index, items, unit))
    yield
    report(Rebuild(index, items, unit, clock() - started))
