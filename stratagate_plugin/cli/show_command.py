"""``stratagate show ID``: one event, block or message with everything memory keeps of it.

An event shows its card (forgotten ones too: that is where one is found to restore it),
its source messages, its links, when the agent adopted it and the memory actions taken on
it; a block shows its views' sizes, its L0–L2, its messages and events; a message shows
its text and the events citing it. An id that names nothing is one line, exit status 2.
"""

import argparse
import json
from typing import Any

from ..core.clock import iso
from ..core.curation.records import BlockDetails, EventDetails, MessageCard
from ..core.events.cards import EventCard
from ..core.records import OFFLINE_FALLBACK
from .common import add_db_option, open_memory
from .search_command import marks, trimmed


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "show",
        help="show one event, block or message in full",
        description="An event (evt_…) with its sources, links and adoption history; a block "
        "(blk_…) with its views and messages; a message (msg_…) with the events citing it.",
    )
    add_db_option(parser)
    parser.add_argument("id", help="an event, block or message id")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(handler=show)


async def show(args: argparse.Namespace) -> int:
    memory = await open_memory(args)
    async with memory:
        item = await memory.curation.describe(args.id)
    if args.json:
        kind = {EventDetails: "event", BlockDetails: "block", MessageCard: "message"}[type(item)]
        body = {"kind": kind, **item.model_dump(mode="json")}
        print(json.dumps(body, ensure_ascii=False, indent=2))
        return 0
    if isinstance(item, EventDetails):
        lines = event_lines(item)
    elif isinstance(item, BlockDetails):
        lines = block_lines(item)
    else:
        lines = message_lines(item, full=True)
    print("\n".join(lines))
    return 0


def event_lines(details: EventDetails) -> list[str]:
    card = details.card
    lines = [f"event {card.id}  {card.title}", *card_fields(card), "", "sources"]
    lines += [line for source in details.sources for line in message_lines(source)]
    lines += ["", "links"]
    lines += [
        f"  {link.relation:<15} {link.event_id}  "
        + (f"{trimmed(link.title, 70)} [{link.status}]" if link.found else "(not in memory)")
        for link in details.links
    ] or ["  (none)"]
    lines += ["", "adoptions"]
    lines += [
        f"  {iso(a.created_at)}  turn {a.turn}  batch {a.batch_id} ({a.tool or '?'})  "
        f"session {a.thread_id}  {a.verdict or ''}  receipt {a.receipt_id}".rstrip()
        for a in details.adoptions
    ] or ["  (never adopted)"]
    lines += ["", "memory actions"]
    lines += [
        f"  {iso(action.created_at)}  {action.kind} by {action.actor}  {action.id}"
        for action in details.actions
    ] or ["  (none)"]
    return lines


def card_fields(card: EventCard) -> list[str]:
    """The card's fields a person reads, one to a line; the times in UTC with their offset."""
    temporal = card.temporal
    happened = " .. ".join(
        dict.fromkeys(
            t for t in (temporal.get("happened_start"), temporal.get("happened_end")) if t
        )
    )
    fields = [
        ("status", card.status + (", pinned" if card.pinned else "")),
        ("scope", f"{card.scope}, {card.criticality}, {card.pool} pool"),
        ("summary", card.summary),
        ("tags", ", ".join(card.tags)),
        ("type", temporal.get("event_type", "")),
        ("mentioned", temporal.get("mentioned_at", "")),
        ("happened", happened + (f" ({temporal['precision']})" if "precision" in temporal else "")),
        ("formed", f"turn {card.formed_turn}, block {card.source_block_id or '-'}"),
        ("derived", derived_label(card.derived_by, card.derive_error)),
        (
            "mentions",
            f"{card.mention_count}, last adopted (or formed) at turn {card.last_adopted_turn}",
        ),
        ("created", iso(card.created_at)),
        ("updated", iso(card.updated_at)),
        ("retrieved", iso(card.last_retrieved_at) if card.last_retrieved_at else ""),
    ]
    return [f"  {name:<10} {value}" for name, value in fields if value.strip()]


def block_lines(details: BlockDetails) -> list[str]:
    view, block = details.view, details.view.block
    lifted = f", lifted by {block.last_lifted_by}" if block.last_lifted_by else ""
    sizes = " · ".join(f"{level} {tokens}" for level, tokens in view.view_tokens.items())
    lines = [
        f"block {block.id}  space {block.namespace}  session {block.thread_id} "
        f"#{block.thread_sequence}",
        f"  turns {block.start_turn}-{block.end_turn}, {block.processing_status}, "
        f"at L{view.current_level} (age {view.age}){lifted}",
        f"  tokens     {sizes}",
        f"  created    {iso(block.created_at)}",
    ]
    if derived := derived_label(block.derived_by, block.derive_error):
        lines.insert(2, f"  derived    {derived}")
    for level, text in details.summaries.items():
        lines += ["", level, *(f"  {line}" for line in text.splitlines())]
    lines += ["", "messages"]
    lines += [line for card in details.messages for line in message_lines(card)]
    lines += ["", "events"]
    lines += [f"  {e.id}  {trimmed(e.title, 80)}" for e in details.events] or ["  (none)"]
    return lines


def message_lines(card: MessageCard, full: bool = False) -> list[str]:
    """A message as a heading and its text (trimmed unless ``full``), then who cites it."""
    m = card.message
    head = (
        f"  {m.id}  {iso(m.created_at)}  session {m.thread_id} #{m.position}  {m.role}  "
        f"block {m.block_id or '- (open tail)'}"
    )
    text = m.content if full else trimmed(m.content)
    lines = [head, *(f"    {line}" for line in text.splitlines() or [""])]
    lines += [
        f"    cited by {e.id}  {trimmed(e.title, 70)}{marks(e.status, e.pinned)}"
        for e in card.events
    ]
    return lines


def derived_label(derived_by: str | None, error: str | None) -> str:
    """Who derived it; for the offline model standing in after the model failed, that and
    the model's error (``stratagate jobs retry --offline`` asks the model again)."""
    if derived_by == OFFLINE_FALLBACK:
        return f"offline, after the model failed: {error or 'no error kept'}"
    return derived_by or ""
