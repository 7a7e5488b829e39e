"""The token estimator used for every budget and length guard (spec §2.5).

Each maximal run of ASCII characters counts ``ceil(len/4)``; every non-ASCII code point
counts 1. Cheap, deterministic, and close enough for mixed Chinese/English text.
"""


def estimate_tokens(text: str) -> int:
    total = 0
    ascii_run = 0
    for char in text:
        if ord(char) <= 0x7F:
            ascii_run += 1
            continue
        total += (ascii_run + 3) // 4 + 1
        ascii_run = 0
    return total + (ascii_run + 3) // 4
