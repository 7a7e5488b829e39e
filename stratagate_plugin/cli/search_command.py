"""``stratagate search QUERY``: what the agent's first retrieval step would find.

The hits are ``retrieve()``'s fused order (raw messages, event cards and block summaries),
each shown with where and when it was said and the live events citing it, so a person
sees the evidence the way the agent does; searching never reinforces anything.
"""

import argparse
import json
from typing import Any

from ..core.clock import iso
from ..core.curation.actions import MessageCard
from ..core.errors import InvalidInput
from ..core.retrieval.fused import Retrieved
from .common import add_db_option, add_space_option, open_memory, resolve_space

TEXT_CHARS = 200


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
        hits = await memory.retrieve(space, args.query, args.limit)
        cards = await memory.message_cards([hit.message_id for hit in hits])
    by_id = {card.message.id: card for card in cards}
    rows = [hit_row(hit, by_id[hit.message_id]) for hit in hits if hit.message_id in by_id]
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


def hit_lines(rank: int, row: dict[str, Any]) -> list[str]:
    """A hit as three lines or more: id and channels, where and when, the text, its events."""
    lines = [
        f"{rank}. {row['message_id']}  [{'+'.join(row['channels'])}]  score {row['score']:.4f}",
        f"   {row['at']}  session {row['thread']}  {row['role']}  block {row['block'] or '-'}",
        f"   {trimmed(row['text'])}",
    ]
    lines += [
        f"   cited by {e['id']}  {trimmed(e['title'], 80)}{marks(e['status'], e['pinned'])}"
        for e in row["events"]
    ]
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
