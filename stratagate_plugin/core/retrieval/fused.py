"""``retrieve()``: the fused first-step evidence an agent would see, as ranked message ids.

Three channels, each mapped to L5 message ids: raw messages (context-voted BM25), event
cards (each hit contributes the messages it cites, in citation order) and blocks (BM25
over a block's L0–L2 text; a hit contributes its messages that share a query term).
Event hits also vote inside the raw channel (a cited message gains ``event_boost`` over
the event's rank, 1/(1+rank)), which puts event evidence in context rather than beside
it. A date the query names (``core.question_cues``) votes the same way for messages created
in that window and for messages cited by events that happened in it (+0.009 recall@10 on
LoCoMo EN, +0.015 ZH). Channels are then fused by weighted reciprocal-rank fusion; every id
records which channels found it. Retrieval never reinforces and never stamps events.

The raw channel carries most of the recall (speaker votes, document expansion and
category members, see ``core.retrieval``; word forms, see ``core.tokenize``): fused
recall@10 on LoCoMo went from 0.743 to 0.805 (EN) and 0.749 to 0.801 (ZH) with them, text
only; 0.812 / 0.806 with shared images' captions recorded as ``[image: caption]``.

``search_raw_ranked`` hands the same order to the agent's raw search tool at namespace
scope, as hits with their neighbours, so the agent reads what the benchmark measures.
"""

import json
import sqlite3
from dataclasses import dataclass

from pydantic import BaseModel

from ..clock import utc_now
from ..events.service import search_events
from ..store import Database, raw_search
from ..store.retrieval_rows import dated_messages, latest_message_time
from ..text.search_terms import query_tokens, tokenize
from .bm25 import bm25_rank, rrf_rank
from .cues import question_windows
from .hits import RawHit
from .raw_channel import RAW_CHANNEL, RawChannelConfig, retrieve_raw

CHANNELS = ("raw", "event", "block")


@dataclass(frozen=True)
class FusionConfig:
    raw_weight: float = 1.0
    event_weight: float = 0.1
    block_weight: float = 0.05
    event_limit: int = 20
    event_boost: float = 0.25
    block_limit: int = 5
    created_boost: float = 0.5
    happened_boost: float = 0.5
    raw_channel: RawChannelConfig = RAW_CHANNEL


class Retrieved(BaseModel):
    message_id: str
    score: float
    channels: list[str]


async def channel_rankings(
    db: Database, namespace: str, query: str, k: int, config: FusionConfig
) -> dict[str, list[str]]:
    """Each channel's ranked message ids (for fusion, and for per-channel measurement).

    A query without search tokens finds nothing in any channel (event search alone would
    list every event for an empty query).
    """
    if not query_tokens(query):
        return {name: [] for name in CHANNELS}
    hits = await search_events(
        db, namespace, query, limit=config.event_limit, track_retrieval=False
    )
    events = list(dict.fromkeys(m for hit in hits for m in hit.card.source_message_ids))
    boost = _event_boost([hit.card.source_message_ids for hit in hits], config.event_boost)
    await _add_window_votes(db, namespace, query, boost, config)
    ranked = await retrieve_raw(db, namespace, query, 2 * k, config.raw_channel, boost)
    raw = [message_id for message_id, _ in ranked]
    blocks = await db.read(lambda c: _block_channel(c, raw, query, config.block_limit))
    return {"raw": raw, "event": events, "block": blocks}


async def retrieve(
    db: Database, namespace: str, query: str, k: int = 20, config: FusionConfig | None = None
) -> list[Retrieved]:
    settings = config or FusionConfig()
    rankings = await channel_rankings(db, namespace, query, k, settings)
    weights = {
        "raw": settings.raw_weight,
        "event": settings.event_weight,
        "block": settings.block_weight,
    }
    fused = rrf_rank([(rankings[name], weights[name]) for name in CHANNELS])
    found = {name: set(ids) for name, ids in rankings.items()}
    return [
        Retrieved(
            message_id=mid, score=score, channels=[name for name in CHANNELS if mid in found[name]]
        )
        for mid, score in fused[:k]
    ]


async def search_raw_ranked(
    db: Database, namespace: str, query: str, limit: int = 6, config: FusionConfig | None = None
) -> list[RawHit]:
    """The namespace's sealed messages in ``retrieve()``'s order, as raw hits with context.

    What the agent's raw search tool shows at namespace scope: the spec's plain BM25 order
    (``retrieval.search_raw``) finds far less of the evidence (LoCoMo recall@10 0.587
    against 0.795 EN).
    """
    if limit < 1:
        return []
    found = await retrieve(db, namespace, query, limit, config)
    scored = [(hit.message_id, hit.score) for hit in found]
    return await db.read(lambda raw: raw_search.hits_for(raw, scored))


def _event_boost(citations: list[list[str]], weight: float) -> dict[str, float]:
    """Each cited message's vote: ``weight / (1 + rank)`` of the best event citing it."""
    boost: dict[str, float] = {}
    for rank, message_ids in enumerate(citations):
        for message_id in message_ids:
            boost[message_id] = max(boost.get(message_id, 0.0), weight / (1 + rank))
    return boost


async def _add_window_votes(
    db: Database, namespace: str, query: str, boost: dict[str, float], config: FusionConfig
) -> None:
    """Votes for messages said or (per their events) happened in a window the query names.

    Windows resolve against the namespace's newest message (the memory's "now").
    """
    reference = await db.read(lambda raw: latest_message_time(raw, namespace))
    windows = question_windows(query, reference or utc_now())
    if not windows:
        return
    created, happened = await db.read(lambda raw: dated_messages(raw, namespace, windows))
    for ids, weight in ((created, config.created_boost), (happened, config.happened_boost)):
        for message_id in ids:
            boost[message_id] = boost.get(message_id, 0.0) + weight


def _block_channel(raw: sqlite3.Connection, found: list[str], query: str, limit: int) -> list[str]:
    """Blocks of the raw channel's hits ranked by their L0–L2 text; their matching messages.

    Only the blocks that hold a raw hit are read, so the cost does not grow with the
    namespace (reading every ready block cost 0.2-0.3 s a query at 500,000 messages).
    """
    terms = query_tokens(query)
    if not terms or not found:
        return []
    rows = raw.execute(
        "SELECT id, l0_title, l0_tags_json, l1_summary, l2_keypoints_json FROM blocks "
        "WHERE processing_status = 'ready' AND id IN (SELECT block_id FROM messages "
        "WHERE id IN (SELECT value FROM json_each(?)))",
        (json.dumps(found),),
    ).fetchall()
    docs = {row[0]: tokenize(_block_text(row)) for row in rows}
    top = [block_id for block_id, _ in bm25_rank(terms, docs)[:limit]]
    wanted, ranked = set(terms), []
    for block_id in top:
        for message_id, content in raw.execute(
            "SELECT id, content FROM messages WHERE block_id = ? ORDER BY position", (block_id,)
        ):
            if wanted & set(tokenize(content)):
                ranked.append(message_id)
    return ranked


def _block_text(row: sqlite3.Row) -> str:
    tags = json.loads(row[2] or "[]")
    points = json.loads(row[4] or "[]")
    return "\n".join([row[1] or "", *tags, row[3] or "", *points])
