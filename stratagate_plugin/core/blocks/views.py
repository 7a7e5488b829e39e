"""A block as a reader sees it now: its decayed level, age, view sizes and rendered text."""

import sqlite3

from ..errors import NotFound
from ..records import Block, BlockView
from ..store import block_rows
from . import rules as block_rules


def current_level(raw: sqlite3.Connection, block: Block) -> tuple[int, int]:
    """(level, age): pending blocks stay at L5 and never age."""
    if block.processing_status != "ready" or block.pointer_anchor_position is None:
        return 5, 0
    latest = block_rows.latest_ready_position(raw, block.namespace, block.thread_id)
    decay = block_rows.decay_lambda(raw, block.namespace)
    level = block_rules.decayed_level(
        block.pointer_anchor_level, block.pointer_anchor_position, latest, decay
    )
    return level, max(0, latest - (block.ready_position or latest))


def block_view(raw: sqlite3.Connection, block: Block, level: int | None = None) -> BlockView:
    """The block rendered at ``level`` (default: its current decayed level)."""
    messages = block_rows.block_messages(raw, block.id)
    if not messages:
        raise NotFound(f"block {block.id} has no messages")
    current, age = current_level(raw, block)
    shown = current if level is None else block_rules.clamp_level(level)
    return BlockView(
        block=block,
        current_level=current,
        age=age,
        view_tokens=block_rules.view_token_sizes(block, messages),
        text=block_rules.render_level(block, shown, messages),
    )
