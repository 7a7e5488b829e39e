"""What a derivation job gives the model and what it checks in the answer, with no model
call and no write: the summary and extraction payloads (the derivation view of the block,
its neighbours' key points, a timeline of relevant and recent events), and the
acceptance and source check of the drafts (pure work over up to the whole view, which the
service runs on a worker thread, off the event loop).
"""

import sqlite3
from typing import Any

from ..clock import iso
from ..events import cards as event_rules
from ..events.cards import EventCard
from ..events.ranking import EventSearch
from ..events.service import search_in
from ..events.source_check import SourceDrops, check_sources
from ..llm.tasks import EventCardDraft, EventExtraction
from ..records import Block
from ..store import block_rows, event_rows
from ..text.search_terms import query_tokens
from . import truth
from .input import derivation_messages

TIMELINE_RELEVANT, TIMELINE_RECENT = 8, 4


def block_view(raw: sqlite3.Connection, block_id: str, limit: int) -> tuple[Block, dict[str, Any]]:
    """The block and its derivation-view description shared by both tasks."""
    block = block_rows.get_block(raw, block_id)
    messages = derivation_messages(block_rows.block_messages(raw, block_id), limit)
    return block, {
        "sequence": block.sequence,
        "start_turn": block.start_turn,
        "end_turn": block.end_turn,
        "messages": messages,
    }


def summary_input(
    raw: sqlite3.Connection, block_id: str, limit: int
) -> tuple[Block, dict[str, Any]]:
    block, target = block_view(raw, block_id, limit)
    return block, {"block": {"id": block.id, **target}}


def extraction_input(
    raw: sqlite3.Connection, block_id: str, limit: int
) -> tuple[Block, dict[str, Any]]:
    block, target = block_view(raw, block_id, limit)
    payload = {
        "target": {"block_id": block.id, "created_at": iso(block.created_at), **target},
        "neighbors": block_rows.neighbour_keypoints(raw, block),
        "allowed_source_message_ids": [m["id"] for m in target["messages"]],
        "timeline": [timeline_entry(card) for card in timeline(raw, block)],
    }
    return block, payload


def timeline(raw: sqlite3.Connection, block: Block) -> list[EventCard]:
    """Up to 8 events relevant to the block's L0–L2 text (event search over both pools, no
    retrieval stamp) plus the 4 most recently formed."""
    text = [block.l0_title or "", *(block.l0_tags or []), block.l1_summary or ""]
    tokens = tuple(query_tokens(" ".join([*text, *(block.l2_keypoints or [])])))
    relevant: list[EventCard] = []
    if tokens:
        request = EventSearch(tokens, limit=TIMELINE_RELEVANT)
        relevant = [hit.card for hit in search_in(raw, block.namespace, request)]
    recent = event_rows.recent_events(raw, block.namespace, TIMELINE_RECENT)
    return list({card.id: card for card in [*relevant, *recent]}.values())


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
