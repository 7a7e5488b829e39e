"""When to try a model request again, and after how long (pure; the waiting is injected).

Exponential backoff with full jitter (a random delay up to the doubled base), so clients
that failed together do not retry together; a server's ``Retry-After`` is honoured as a
lower bound, but one asking for longer than ``max_delay_s`` is not waited for at all, and no
retry starts once ``max_total_s`` would be passed. ``RetryClock`` holds the side effects
(sleeping, the monotonic clock, the random draw) so tests wait for nothing.
"""

import asyncio
import math
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})


@dataclass(frozen=True)
class RetryPolicy:
    """Attempts in all (the first included), the backoff's base and cap, the whole budget."""

    max_attempts: int = 4
    base_delay_s: float = 0.5
    max_delay_s: float = 30.0
    max_total_s: float = 60.0


@dataclass(frozen=True)
class RetryClock:
    """What a retry loop waits with and reads time from; tests pass a recording sleep."""

    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    now: Callable[[], float] = time.monotonic
    draw: Callable[[], float] = random.random


def retry_delay(
    policy: RetryPolicy,
    attempt: int,
    elapsed_s: float,
    retry_after_s: float | None = None,
    draw: Callable[[], float] = random.random,
) -> float | None:
    """Seconds to wait before attempt ``attempt + 1``, or None when it is not worth making."""
    if attempt >= policy.max_attempts:
        return None
    if retry_after_s is not None and retry_after_s > policy.max_delay_s:
        return None
    backoff = min(policy.max_delay_s, policy.base_delay_s * 2 ** (attempt - 1))
    delay = max(retry_after_s or 0.0, draw() * backoff)
    return delay if elapsed_s + delay < policy.max_total_s else None


def retry_after_seconds(header: str | None, now: datetime | None = None) -> float | None:
    """``Retry-After`` (seconds, or an HTTP date) as seconds from ``now``; None if unusable."""
    value = (header or "").strip()
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        seconds = _seconds_until(value, now or datetime.now(UTC))
    return max(0.0, seconds) if math.isfinite(seconds) else None


def _seconds_until(http_date: str, now: datetime) -> float:
    try:
        when = parsedate_to_datetime(http_date)
    except (TypeError, ValueError):
        return math.nan
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return (when - now).total_seconds()
