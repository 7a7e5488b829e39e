"""Short random tags telling apart session names made in the same second.

Repeatable under ``use_test_ids`` (a test launcher's seam, as ``core/ids.py`` has for the
engine's ids), so a screenshot of a session's page is the same on every run.
"""

import random
import threading

_lock = threading.Lock()
_rng = random.Random(random.SystemRandom().getrandbits(64))
_test_rng: random.Random | None = None


def use_test_ids(seed: int | str | None) -> None:
    """Tests only: tags drawn from ``seed`` (``None``: random ones again)."""
    global _test_rng
    with _lock:
        _test_rng = None if seed is None else random.Random(f"{seed}:tag")


def short_tag(hex_digits: int) -> str:
    """``hex_digits`` hex digits, random unless a test fixed them."""
    with _lock:
        bits = (_test_rng or _rng).getrandbits(4 * hex_digits)
    return f"{bits:0{hex_digits}x}"
