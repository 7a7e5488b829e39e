"""When an open tail becomes a block, where the block ends, and its computed views.

A tail is sealed once it holds a block's user turns (``block_turn_size``); the block takes
the tail's head up to just before the next user message after that many, so a block
always ends with a whole turn. L4 and L3 are computed from its messages (``transcript``)
when it seals, and L5's token size with them (the rail shows it without the messages).
The storage asks these rules inside the recording transaction (``SEALER``).
"""

from collections.abc import Sequence

from ..text.token_budget import estimate_tokens
from .storage import NewBlock
from .transcript import TranscriptMessage, layer_texts

__all__ = ["SEALER", "BlockSealer"]


class BlockSealer:
    """The blocks' sealing rules, as the storage contract's ``Sealer`` asks them."""

    def full(self, open_user_messages: int, block_turn_size: int) -> bool:
        return open_user_messages >= block_turn_size

    def cut(self, tail: Sequence[TranscriptMessage], block_turn_size: int) -> NewBlock:
        members = tail[: cut_index(tail, block_turn_size)]
        raw, readable, condensed = layer_texts(members)
        return NewBlock(len(members), readable, condensed, estimate_tokens(raw))


def cut_index(tail: Sequence[TranscriptMessage], block_turn_size: int) -> int:
    """Index just before the (size+1)-th user message, or the whole tail."""
    users = 0
    for index, message in enumerate(tail):
        if message.role == "user":
            users += 1
            if users > block_turn_size:
                return index
    return len(tail)


SEALER = BlockSealer()
