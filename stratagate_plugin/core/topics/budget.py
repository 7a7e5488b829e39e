"""The historical budget (spec §5.3): at most 2 historical batches per 10 minutes.

It bounds MODEL cost, nothing else: the embedded offline grouper, or an endpoint marked
``free`` in its settings (a local server), runs every batch as fast as the worker can.
Database-wide, persisted as a small JSON ledger ``{"reset_at", "used"}``; a batch's slot
is reserved before its model call and never refunded, so a crash loop cannot spend more.
A corrupt ledger counts as exhausted for one window. New or changed events never use it.
"""

import json
from datetime import datetime, timedelta
from typing import Any

from ..clock import iso, parse_iso

WINDOW = timedelta(minutes=10)
CALLS = 2
LEDGER_KEY = "topic_historical_budget"


def reserve(ledger: str | None, now: datetime) -> tuple[bool, str]:
    """Whether a historical batch may run now, and the ledger to store either way."""
    reset_at, used = _read(ledger, now)
    if used >= CALLS:
        return False, _ledger(reset_at, used)
    return True, _ledger(reset_at, used + 1)


def next_slot(ledger: str | None, now: datetime) -> datetime | None:
    """When the next historical batch may run: ``None`` when a slot is free now."""
    reset_at, used = _read(ledger, now)
    return None if used < CALLS else reset_at


def waiting(batches: int, ledger: str | None, now: datetime) -> dict[str, Any] | None:
    """What the user is told about historical batches held back by the budget: how many,
    why (``calls`` per ``windowMinutes``) and when the next runs; ``None`` when none wait."""
    if not batches:
        return None
    upcoming = next_slot(ledger, now)
    return {
        "batches": batches,
        "reason": "historical budget",
        "calls": CALLS,
        "windowMinutes": int(WINDOW.total_seconds() // 60),
        "nextRunAt": iso(upcoming) if upcoming else None,
    }


def _read(ledger: str | None, now: datetime) -> tuple[datetime, int]:
    """(when the window resets, batches used in it), a window past its reset reopened."""
    if ledger is None:
        return now + WINDOW, 0
    try:
        data = json.loads(ledger)
        reset_at, used = parse_iso(str(data["reset_at"])), int(data["used"])
    except (ValueError, KeyError, TypeError):
        return now + WINDOW, CALLS
    if now >= reset_at:
        return now + WINDOW, 0
    return reset_at, used


def _ledger(reset_at: datetime, used: int) -> str:
    return json.dumps({"reset_at": iso(reset_at), "used": used})
