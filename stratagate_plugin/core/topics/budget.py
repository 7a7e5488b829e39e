"""The historical budget (spec §5.3): at most 2 historical batches per 10 minutes.

Database-wide, persisted as a small JSON ledger ``{"reset_at", "used"}``; a batch's slot
is reserved before its model call and never refunded, so a crash loop cannot spend more.
A corrupt ledger counts as exhausted for one window. New or changed events never use it.
"""

import json
from datetime import datetime, timedelta

from ..clock import iso, parse_iso

WINDOW = timedelta(minutes=10)
CALLS = 2
LEDGER_KEY = "topic_historical_budget"


def reserve(ledger: str | None, now: datetime) -> tuple[bool, str]:
    """Whether a historical batch may run now, and the ledger to store either way."""
    if ledger is None:
        reset_at, used = now + WINDOW, 0
    else:
        try:
            data = json.loads(ledger)
            reset_at, used = parse_iso(str(data["reset_at"])), int(data["used"])
        except (ValueError, KeyError, TypeError):
            return False, _ledger(now + WINDOW, CALLS)
    if now >= reset_at:
        reset_at, used = now + WINDOW, 0
    if used >= CALLS:
        return False, _ledger(reset_at, used)
    return True, _ledger(reset_at, used + 1)


def _ledger(reset_at: datetime, used: int) -> str:
    return json.dumps({"reset_at": iso(reset_at), "used": used})
