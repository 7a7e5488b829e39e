"""What a derivation job gives the model and what it checks in the answer, from rows the
service read (pure: no store, no model): the summary and extraction payloads (the block's
derivation view, its neighbours' key points, a timeline of relevant and recent events),
and the acceptance and source check of the drafts (work over up to the whole view, which
the service runs on a worker thread, off the event loop).
"""

from collections.abc import Sequence
from typing import Any

from ..clock import iso
from ..events import cards as event_rules
from ..events.cards import EventCard
from ..events.source_check import SourceDrops, check_sources
from ..llm.tasks import EventCardDraft, EventExtraction
from ..records import Block, Message
from ..text.search_terms import query_tokens
from . import truth
from .input import derivation_messages


def block_description(block: Block, messages: Sequence[Message], limit: int) -> dict[str, Any]:
    """The block's derivation view, shared by both tasks."""
    return {
        "sequence": block.sequence,
        "start_turn": block.start_turn,
        "end_turn": block.end_turn,
        "messages": derivation_messages(messages, limit),
    }


def summary_payload(block: Block, messages: Sequence[Message], limit: int) -> dict[str, Any]:
    return {"block": {"id": block.id, **block_description(block, messages, limit)}}


def extraction_payload(
    block: Block,
    messages: Sequence[Message],
    limit: int,
    neighbours: dict[str, list[str]],
    timeline: Sequence[EventCard],
) -> dict[str, Any]:
    target = block_description(block, messages, limit)
    return {
        "target": {"block_id": block.id, "created_at": iso(block.created_at), **target},
        "neighbors": neighbours,
        "allowed_source_message_ids": [m["id"] for m in target["messages"]],
        "timeline": [timeline_entry(card) for card in timeline],
    }


def timeline_tokens(block: Block) -> tuple[str, ...]:
    """The search terms of the block's L0–L2 text: what its timeline's events relate to."""
    text = [block.l0_title or "", *(block.l0_tags or []), block.l1_summary or ""]
    return tuple(query_tokens(" ".join([*text, *(block.l2_keypoints or [])])))


def timeline_entry(card: EventCard) -> dict[str, Any]:
    """What the model sees of a timeline event: the relation rules' entry, its scope, and
    the summary cut to 400 characters."""
    return {**truth.entry(card), "summary": card.summary[:400], "scope": card.scope}


def checked_cards(
    result: EventExtraction, payload: dict[str, Any]
) -> tuple[int, list[EventCardDraft], SourceDrops]:
    """The model's drafts accepted, then their sources checked against the block's text:
    pure work over up to the whole derivation view, run on a worker thread."""
    cards = event_rules.accept_drafts(
        result.events,
        payload["allowed_source_message_ids"],
        [entry["id"] for entry in payload["timeline"]],
        payload["target"]["messages"][-1]["created_at"],
    )
    checked, drops = check_sources(cards, payload["target"]["messages"])
    return len(cards), checked, drops
