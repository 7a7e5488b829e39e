"""Identifiers: a prefix, a millisecond timestamp, a sequence, and randomness.

Time-ordered ids keep new rows at the end of every index on them, so inserting one
touches one B-tree leaf instead of a random page (a large saving in WAL mode). Within
one process ids are strictly increasing, even inside the same millisecond; the random
tail (seeded once from the OS, no syscall per id) tells processes apart.

A test harness may call ``use_test_ids(seed)``: ids then come from a counter per prefix
and the seed, the same on every run, so pages pictured in screenshots do not change
with them. No setting of the user's turns that on.
"""

import os
import random
import threading
import time
from collections import Counter

_lock = threading.Lock()
_last = [0, 0]  # [millisecond, sequence within it]
_rng = random.Random(random.SystemRandom().getrandbits(64))  # tells processes apart
_TEST_EPOCH_MS = 1_767_225_600_000  # 2026-01-01T00:00:00Z: where a test's id clock starts


class _TestIds:
    """Repeatable ids: the n-th id of a prefix is the same in every run with this seed."""

    def __init__(self, seed: int | str) -> None:
        self.seed = seed
        self.counts: Counter[str] = Counter()

    def draw(self, kind: str, bits: int = 48) -> tuple[int, int]:
        """The kind's next number and ``bits`` bits that look random but repeat."""
        self.counts[kind] += 1
        number = self.counts[kind]
        return number, random.Random(f"{self.seed}:{kind}:{number}").getrandbits(bits)


_test_ids: _TestIds | None = None


def _reseed() -> None:
    _rng.seed(random.SystemRandom().getrandbits(64))


os.register_at_fork(after_in_child=_reseed)


def use_test_ids(seed: int | str | None) -> None:
    """Tests only: repeatable ids from ``seed`` (``None``: random ones again)."""
    global _test_ids
    with _lock:
        _test_ids = None if seed is None else _TestIds(seed)


def ids_are_fixed() -> bool:
    return _test_ids is not None


def new_id(prefix: str) -> str:
    with _lock:
        if _test_ids is not None:
            number, tail = _test_ids.draw(prefix)
            return f"{prefix}_{_TEST_EPOCH_MS + number:012x}{0:04x}{tail:012x}"
        now = max(time.time_ns() // 1_000_000, _last[0])
        _last[1] = _last[1] + 1 if now == _last[0] else 0
        _last[0] = now
        sequence = _last[1]
    return f"{prefix}_{now:012x}{sequence:04x}{_rng.getrandbits(48):012x}"
