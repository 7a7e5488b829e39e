"""A stored block as a reader sees it now, from the records the storage returns.

``BlockParts`` (a block, its messages, its thread's newest ready position and λ) become a
``BlockView`` at the decayed level; ``RailRows`` become the rail's blocks. The rules are
the blocks' own (``rules.py``, ``rail.py``); nothing here reads or writes.
"""

from ..errors import NotFound
from ..records import Block, BlockView
from . import rail
from . import rules as block_rules
from .rail import RailBlock, RailContext
from .storage import BlockParts, RailRows

__all__ = ["block_view", "current_level", "rail_blocks"]


def current_level(block: Block, latest_ready: int, decay_lambda: float) -> tuple[int, int]:
    """(level, age): pending blocks stay at L5 and never age."""
    if block.processing_status != "ready" or block.pointer_anchor_position is None:
        return 5, 0
    level = rail.level_now(block, latest_ready, decay_lambda)
    return level, max(0, latest_ready - (block.ready_position or latest_ready))


def block_view(parts: BlockParts, level: int | None = None) -> BlockView:
    """The block rendered at ``level`` (default: its current decayed level)."""
    block, messages = parts.block, parts.messages
    if not messages:
        raise NotFound(f"block {block.id} has no messages")
    current, age = current_level(block, parts.latest_ready, parts.decay_lambda)
    shown = current if level is None else block_rules.clamp_level(level)
    return BlockView(
        block=block,
        current_level=current,
        age=age,
        view_tokens=block_rules.view_token_sizes(block, messages),
        text=block_rules.render_level(block, shown, messages),
    )


def rail_blocks(rows: RailRows) -> list[RailBlock]:
    """The rail's blocks: each one's level now, sizes, derivation state and events."""
    context = RailContext(rows.latest_ready, rows.total, rows.decay_lambda)
    out = []
    for entry in rows.entries:
        error = next((job.last_error for job in entry.jobs if job.status == "failed"), None)
        states = [job.status for job in entry.jobs]
        out.append(
            rail.rail_block(
                entry.block,
                entry.transcript,
                context,
                states,
                entry.events,
                error,
                entry.raw_tokens,
            )
        )
    return out
