"""The token estimator used for every budget and length guard (spec §2.5).

Each maximal run of ASCII characters counts ``ceil(len/4)``; every non-ASCII code point
counts 1. Cheap, deterministic, and close enough for mixed Chinese/English text.
"""

import re

_ASCII_RUN = re.compile(r"[\x00-\x7f]+")


def estimate_tokens(text: str) -> int:
    runs = _ASCII_RUN.findall(text)
    ascii_chars = sum(len(run) for run in runs)
    return sum((len(run) + 3) // 4 for run in runs) + len(text) - ascii_chars
