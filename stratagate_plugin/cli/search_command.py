"""``stratagate search QUERY``: what the agent's first retrieval step would find.

The hits are ``retrieve()``'s fused order (raw messages, event cards and block summaries),
each shown with where and when it was said and the live events citing it, so a person
sees the evidence the way the agent does; searching never reinforces anything.

A hit on an import's source (the whole imported file, kept as one message) shows the
found memory's own words instead (their span of the file, at most 240 characters), names
the import, and lists only the events that matched: the file's text and its other
memories are not what was asked for.
"""

import argparse
import json
from typing import Any

from ..core.clock import iso
from ..core.curation.records import EventBrief, MessageCard
from ..core.errors import InvalidInput, NotFound
from ..core.events.cards import EventCard
from ..core.memory import StrataGate
from ..core.records import IMPORT_THREAD_PREFIX
from ..core.retrieval.fused import Retrieved
from .common import add_db_option, add_space_option, open_memory, resolve_space

TEXT_CHARS = 200
SPAN_CHARS = 240
MATCHED_EVENTS = 50  # events asked for to tell which of an import's memories matched


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "search",
        help="search memory the way the agent does",
        description="Search the raw messages, event cards and block summaries together, "
        "as the agent's first look does; each hit with its session, time, block and the "
        "events citing it.",
    )
    add_db_option(parser)
    add_space_option(parser)
    parser.add_argument("query", help="what to look for, in plain words")
    parser.add_argument(
        "--limit", "-n", type=positive, default=10, help="hits to show (default %(default)s)"
    )
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(handler=search)


def positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number of at least 1, not {text!r}")
    return value


async def search(args: argparse.Namespace) -> int:
    if not args.query.strip():  # would list nothing, or everything: neither is an answer
        raise InvalidInput("search needs words to look for; the query is empty")
    memory = await open_memory(args)
    async with memory:
        space = await resolve_space(args, memory)
        hits = await memory.retrieval.retrieve(space, args.query, args.limit)
        cards = await memory.curation.message_cards([hit.message_id for hit in hits])
        by_id = {card.message.id: card for card in cards}
        rows = [hit_row(hit, by_id[hit.message_id]) for hit in hits if hit.message_id in by_id]
        if any(is_import_source(row) for row in rows):
            await show_imported_words(memory, space, args.query, rows)
    if args.json:
        print(json.dumps(rows, ensure_ascii=False, indent=2))
        return 0
    if not rows:
        print(f"(nothing found in memory space {space} for {args.query!r})")
    for rank, row in enumerate(rows, start=1):
        print("\n".join(hit_lines(rank, row)))
    return 0


def hit_row(hit: Retrieved, card: MessageCard) -> dict[str, Any]:
    message = card.message
    return {
        "message_id": message.id,
        "score": round(hit.score, 6),
        "channels": hit.channels,
        "role": message.role,
        "thread": message.thread_id,
        "position": message.position,
        "block": message.block_id,
        "at": iso(message.created_at),
        "text": message.content,
        "purged_at": iso(card.purged_at) if card.purged_at else None,
        "events": [event.model_dump() for event in card.events],
    }


def is_import_source(row: dict[str, Any]) -> bool:
    return str(row["thread"]).startswith(IMPORT_THREAD_PREFIX)


async def show_imported_words(
    memory: StrataGate, space: str, query: str, rows: list[dict[str, Any]]
) -> None:
    """Each import-source hit narrowed to the events that matched ``query`` (their order),
    its text the best one's own words, its source the import."""
    found = await memory.events.search(space, query, limit=MATCHED_EVENTS, track_retrieval=False)
    matched = {hit.card.id: hit.card for hit in found}
    order = {event_id: rank for rank, event_id in enumerate(matched)}
    for row in filter(is_import_source, rows):
        events = [EventBrief(**event) for event in row["events"]]
        kept = sorted((e for e in events if e.id in order), key=lambda e: order[e.id])
        kept = kept or events[:1]
        row["events"] = [event.model_dump() for event in kept]
        row["other_events"] = len(events) - len(kept)
        row["source"] = await import_source(memory, row["block"])
        if kept:
            card = matched.get(kept[0].id) or await memory.events.get(kept[0].id)
            row["text"] = own_words(card, row["text"])


async def import_source(memory: StrataGate, block_id: str | None) -> dict[str, Any]:
    """The import a source block belongs to (its batch has the block's id)."""
    try:
        batch = await memory.imports.batch(block_id or "")
    except NotFound:
        return {"kind": "import", "system": "unknown", "batch": block_id, "at": None}
    at = iso(batch.committed_at)
    return {"kind": "import", "system": batch.source_system, "batch": batch.id, "at": at}


def own_words(card: EventCard, source_text: str) -> str:
    """The event's words as the imported file has them (its first quote, else its summary,
    else its title, found in the file without regard to case); as the card says when the
    file does not hold them verbatim (a merged or reworded memory)."""
    for said in (*card.quotes, card.summary, card.title):
        words = " ".join(said.split())
        if not words:
            continue
        at = source_text.casefold().find(words.casefold())
        return source_text[at : at + len(words)] if at >= 0 else words
    return ""


def hit_lines(rank: int, row: dict[str, Any]) -> list[str]:
    """A hit as three lines or more: id and channels, where and when (or which import),
    the text, its events."""
    source = row.get("source")
    where = (
        f"   imported from {source['system']}  batch {source['batch']}  {source['at'] or ''}"
        if source
        else f"   {row['at']}  session {row['thread']}  {row['role']}  block {row['block'] or '-'}"
    )
    lines = [
        f"{rank}. {row['message_id']}  [{'+'.join(row['channels'])}]  score {row['score']:.4f}",
        where.rstrip(),
        f"   {trimmed(row['text'], SPAN_CHARS if source else TEXT_CHARS)}",
    ]
    lines += [
        f"   cited by {e['id']}  {trimmed(e['title'], 80)}{marks(e['status'], e['pinned'])}"
        for e in row["events"]
    ]
    if row.get("other_events"):
        lines.append(f"   … and {row['other_events']} other events of this import")
    return lines


def marks(status: str, pinned: bool) -> str:
    """`` [superseded, pinned]``: what sets an event apart from an active, unpinned one, so a
    stale (superseded, forgotten) event is never read as the current answer."""
    words = ([] if status == "active" else [status]) + (["pinned"] if pinned else [])
    return f" [{', '.join(words)}]" if words else ""


def trimmed(text: str, limit: int = TEXT_CHARS) -> str:
    """One line of at most ``limit`` characters, an ellipsis where it was cut."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"
