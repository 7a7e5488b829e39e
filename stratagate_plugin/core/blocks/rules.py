"""Block rules: decay of ready blocks, expand targets, and the six views (spec §2.1, §2.7–2.8).

Age counts later *ready* blocks in the same thread only; pending blocks, the open tail
and wall-clock time never age anything.
"""

import math
from collections.abc import Sequence
from typing import Any

from ..errors import InvalidInput
from ..records import Block
from ..text.token_budget import estimate_tokens
from .transcript import TranscriptMessage, render_raw

DEFAULT_DECAY_LAMBDA = 0.30
LEVEL_LABELS = {
    0: "L0 title and tags",
    1: "L1 narrative summary",
    2: "L2 key points",
    3: "L3 rule-condensed transcript",
    4: "L4 readable near-verbatim transcript",
    5: "L5 raw transcript",
}
_DROP_THRESHOLDS = (0.7, 0.5, 0.3, 0.15, 0.08)
UNAVAILABLE = "(not derived yet: L0–L2 appear once the block's summary job has run)"


def block_weight(age: int, decay_lambda: float = DEFAULT_DECAY_LAMBDA) -> float:
    return math.exp(-decay_lambda * max(0, age))


def levels_dropped(weight: float) -> int:
    """How many levels below its anchor a block sits at this weight."""
    for dropped, threshold in enumerate(_DROP_THRESHOLDS):
        if weight > threshold:
            return dropped
    return len(_DROP_THRESHOLDS)


def decayed_level(
    anchor_level: int,
    anchor_position: int,
    latest_position: int,
    decay_lambda: float = DEFAULT_DECAY_LAMBDA,
) -> int:
    age = max(0, latest_position - anchor_position)
    return clamp_level(anchor_level - levels_dropped(block_weight(age, decay_lambda)))


def clamp_level(level: int) -> int:
    return max(0, min(5, level))


LEVEL_NAMES = ("L0", "L1", "L2", "L3", "L4", "L5", "0", "1", "2", "3", "4", "5", "raw", "next")


def strict_target_level(target: str, current: int) -> int:
    """A target a person typed: one of ``LEVEL_NAMES`` or an error saying which are valid
    (the agent's lenient reading below would turn a typo like ``L9`` into 'next')."""
    text = target.strip().lower()
    if text not in {name.lower() for name in LEVEL_NAMES}:
        raise InvalidInput(f"unknown level {target!r}: use L0..L5, 0..5, raw or next")
    return normalize_target_level(text, current)


def normalize_target_level(target: Any, current: int) -> int:
    """Expand targets: 'raw'/'L5'/5 → 5, 'next'/'+1'/None → current+1, 'L0'..'L5', numbers.

    Anything unrecognised means one level deeper, like 'next' (a model's loose argument
    should still lift the block). Lowering is allowed.
    """
    following = clamp_level(current + 1)
    if target is None or isinstance(target, bool):
        return following
    if isinstance(target, int | float):
        return clamp_level(round(target)) if math.isfinite(target) else following
    if not isinstance(target, str):
        return following
    text = target.strip().lower()
    if text in ("raw", "l5", "5"):
        return 5
    if text in ("next", "+1"):
        return following
    if text.removeprefix("l") in ("0", "1", "2", "3", "4"):
        return int(text.removeprefix("l"))
    return following


def render_level(block: Block, level: int, messages: Sequence[TranscriptMessage]) -> str:
    """The text of one view; L0–L2 say they are unavailable until derived."""
    if level == 5:
        return render_raw(messages)
    if level == 4:
        return block.l4_readable
    if level == 3:
        return block.l3_condensed
    return _model_view(block, level) or UNAVAILABLE


def _model_view(block: Block, level: int) -> str | None:
    if level == 0 and block.l0_title is not None:
        tags = ", ".join(block.l0_tags or []) or "none"
        return f"{block.l0_title}\nTags: {tags}"
    if level == 1 and block.l1_summary is not None:
        return block.l1_summary
    if level == 2 and block.l2_keypoints is not None:
        return "\n".join(f"- {point}" for point in block.l2_keypoints) or block.l1_summary
    return None


def view_token_sizes(
    block: Block, messages: Sequence[TranscriptMessage], raw_tokens: int | None = None
) -> dict[str, int]:
    """Estimated tokens of every view (0 for a model view not derived yet); L5's is
    ``raw_tokens`` when given (stored as the block sealed: its messages need not be read)."""
    sizes = {}
    for level in range(6):
        if level == 5 and raw_tokens is not None:
            sizes["L5"] = raw_tokens
            continue
        text = render_level(block, level, messages)
        sizes[f"L{level}"] = 0 if text == UNAVAILABLE else estimate_tokens(text)
    return sizes
