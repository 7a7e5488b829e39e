"""The block rail of one conversation (spec §13 "短期记忆"): what each block looks like now.

For every block: the level the agent's history starts from (its decayed level; pending
blocks stay at L5), the token size of each view and its share of L5, how many blocks
were sealed after it, and the state of its derivation. The rules are the blocks' own
(``rules.py``); this module only puts them side by side for a page of 40 blocks.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from ..records import Block
from . import rules as block_rules
from .storage import Conversation, EventLink, OpenTail
from .transcript import TranscriptMessage

RailStatus = Literal["sealed", "deriving", "ready", "failed"]
RAIL_PAGE = 40
__all__ = [
    "RAIL_PAGE",
    "BlockRail",
    "Conversation",
    "EventLink",
    "LevelSize",
    "OpenTail",
    "RailBlock",
    "RailContext",
]


@dataclass(frozen=True)
class LevelSize:
    """One view's estimated tokens and its share of the raw transcript (L5 = 100)."""

    level: int
    tokens: int
    percent: int


@dataclass(frozen=True)
class RailBlock:
    block: Block
    status: RailStatus
    current_level: int
    distance: int
    sizes: tuple[LevelSize, ...]
    events: tuple[EventLink, ...] = ()
    error: str | None = None


@dataclass(frozen=True)
class BlockRail:
    """A page of a thread's blocks, oldest → newest; ``offset`` newest blocks skipped."""

    thread_id: str
    total: int
    offset: int
    blocks: list[RailBlock] = field(default_factory=list)
    open_tail: OpenTail | None = None

    @property
    def older(self) -> int | None:
        """The offset of the page before this one, if any block is older than this page."""
        shown = self.offset + len(self.blocks)
        return shown if shown < self.total else None

    @property
    def newer(self) -> int | None:
        return max(0, self.offset - RAIL_PAGE) if self.offset > 0 else None


@dataclass(frozen=True)
class RailContext:
    """What a thread adds to each of its blocks: its newest ready position and block, λ."""

    latest_ready: int
    newest_sequence: int
    decay_lambda: float


def level_now(block: Block, latest_ready: int, decay_lambda: float) -> int:
    """The level the block is shown at now: L5 until ready, then decayed from its anchor."""
    if block.processing_status != "ready" or block.pointer_anchor_position is None:
        return 5
    return block_rules.decayed_level(
        block.pointer_anchor_level, block.pointer_anchor_position, latest_ready, decay_lambda
    )


def percent_of(tokens: int, whole: int) -> int:
    return round(100 * tokens / whole) if whole > 0 else 0


def level_sizes(
    block: Block, messages: Sequence[TranscriptMessage], raw_tokens: int | None = None
) -> tuple[LevelSize, ...]:
    """L0–L5 tokens (0 for a model view not derived yet) and each one's % of L5; L5's
    from ``raw_tokens`` where it was stored, else from ``messages``."""
    tokens = block_rules.view_token_sizes(block, messages, raw_tokens)
    raw = tokens["L5"]
    return tuple(LevelSize(n, tokens[f"L{n}"], percent_of(tokens[f"L{n}"], raw)) for n in range(6))


def rail_status(block: Block, job_states: Sequence[str]) -> RailStatus:
    """Ready once derived; before that failed (a job failed), deriving (a job started or
    the summary is in) or just sealed (its jobs are waiting)."""
    if block.processing_status == "ready":
        return "ready"
    if "failed" in job_states:
        return "failed"
    if "running" in job_states or "succeeded" in job_states or block.l0_title is not None:
        return "deriving"
    return "sealed"


def rail_block(
    block: Block,
    messages: Sequence[TranscriptMessage],
    context: RailContext,
    job_states: Sequence[str] = (),
    events: Sequence[EventLink] = (),
    error: str | None = None,
    raw_tokens: int | None = None,
) -> RailBlock:
    status = rail_status(block, job_states)
    return RailBlock(
        block=block,
        status=status,
        current_level=level_now(block, context.latest_ready, context.decay_lambda),
        distance=max(0, context.newest_sequence - block.thread_sequence),
        sizes=level_sizes(block, messages, raw_tokens),
        events=tuple(events),
        error=error if status == "failed" else None,
    )


def page_bounds(total: int, offset: int, size: int = RAIL_PAGE) -> tuple[int, int]:
    """The thread sequences (first, last) of the page ``offset`` newest blocks back; blocks
    are numbered 1..total in the order they sealed. Empty (first > last) past the end."""
    last = total - max(0, offset)
    return max(1, last - size + 1), last
