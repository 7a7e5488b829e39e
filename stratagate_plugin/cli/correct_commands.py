"""``stratagate correct EVT`` and ``stratagate conflicts [--resolve EVT --keep A|B|both]``.

The same façade calls as the web's correct form and conflicts queue (``correct_event``,
``conflict_queue``, ``resolve_conflict``), so a correction or a resolution made here leaves
the same receipt, printed as the web shows it. A correction writes a new card that
supersedes the old one (kept as history); what ``--title``/``--summary`` leave out is
the old card's wording.
"""

import argparse
import json
from typing import Any

from ..core.curation.receipts import receipt_line
from ..core.curation.records import ActionResult
from ..core.errors import InvalidInput
from ..core.memory import StrataGate
from ..core.timeline.filters import parse_moment
from ..core.timeline.service import ConflictPair
from .common import add_db_option, add_space_option, open_memory, resolve_space
from .search_command import trimmed

KEEP = {"a": "A", "b": "B", "both": "both"}


def register(commands: Any) -> None:
    correct = commands.add_parser(
        "correct",
        help="correct an event's wording (a new card supersedes it)",
        description="Write the event again in your words: a new card supersedes it, the old "
        "one is kept as history, and a receipt says so.",
    )
    add_db_option(correct)
    correct.add_argument("event_id", help="the event's id (evt_…)")
    correct.add_argument("--title", default=None, help="the new title (default: the old one)")
    correct.add_argument("--summary", default=None, help="the new summary (default: the old)")
    correct.add_argument("--happened", default=None, help="when it happened (ISO date or time)")
    correct.add_argument("--json", action="store_true", help="machine-readable receipt")
    correct.set_defaults(handler=correct_event)
    conflicts = commands.add_parser(
        "conflicts",
        help="events marked as contradicting each other; --resolve one",
        description="List the pairs of active events marked in conflict (A the newer, B the "
        "older); --resolve EVT --keep A|B|both ends one: A or B supersedes the other side, "
        "or both stay and the mark goes.",
    )
    add_db_option(conflicts)
    add_space_option(conflicts)
    conflicts.add_argument("--resolve", metavar="EVT", help="an event of the pair to resolve")
    conflicts.add_argument("--with", dest="other", metavar="EVT", help="its other side (A, B)")
    conflicts.add_argument("--keep", type=keep_choice, help="A, B or both")
    conflicts.add_argument("--json", action="store_true", help="machine-readable output")
    conflicts.set_defaults(handler=conflicts_command)


def keep_choice(text: str) -> str:
    if text.strip().lower() not in KEEP:
        raise argparse.ArgumentTypeError(f"must be A, B or both, not {text!r}")
    return KEEP[text.strip().lower()]


async def correct_event(args: argparse.Namespace) -> int:
    if args.title is None and args.summary is None and args.happened is None:
        raise InvalidInput("say what to correct: --title, --summary or --happened")
    happened = parse_moment("happened", args.happened or "")
    async with await open_memory(args) as memory:
        old = await memory.events.get(args.event_id)
        result = await memory.curation.correct_event(
            old.id,
            title=old.title if args.title is None else args.title,
            summary=old.summary if args.summary is None else args.summary,
            happened=happened,
        )
    print_receipt(result, args.json)
    return 0


def print_receipt(result: ActionResult, as_json: bool) -> None:
    if as_json:
        card = result.card
        event = {"id": card.id, "status": card.status, "title": card.title}
        body = {"receipt": result.action.model_dump(mode="json"), "event": event}
        print(json.dumps(body, ensure_ascii=False, indent=2))
    else:
        print(receipt_line(result))


async def conflicts_command(args: argparse.Namespace) -> int:
    if (args.resolve is None) != (args.keep is None) or (args.other and not args.resolve):
        raise InvalidInput("--resolve EVT goes with --keep A|B|both (and --with only with them)")
    async with await open_memory(args) as memory:
        space = await resolve_space(args, memory)
        pairs = await every_conflict(memory, space)
        if args.resolve:
            result = await resolve(memory, pairs, args.resolve, args.other, args.keep)
            print_receipt(result, args.json)
            return 0
    if args.json:
        rows = [{"a": pair_side(p, "newer"), "b": pair_side(p, "older")} for p in pairs]
        print(json.dumps(rows, ensure_ascii=False, indent=2))
        return 0
    if not pairs:
        print(f"(no conflicts in memory space {space})")
    for number, pair in enumerate(pairs, start=1):
        print("\n".join(pair_lines(number, pair)))
    return 0


async def every_conflict(memory: StrataGate, space: str) -> list[ConflictPair]:
    pairs: list[ConflictPair] = []
    while True:
        page = await memory.timeline.conflicts(space, offset=len(pairs))
        pairs += page.pairs
        if not page.has_more:
            return pairs


async def resolve(
    memory: StrataGate, pairs: list[ConflictPair], event_id: str, other: str | None, keep: str
) -> ActionResult:
    """``event_id`` is A, the other side B: ``keep`` A or B supersedes the other side."""
    if other is None:
        others = [side for p in pairs for side in partners(p, event_id)]
        if len(others) != 1:
            found = "no conflict" if not others else f"{len(others)} conflicts"
            raise InvalidInput(
                f"event {event_id} has {found} in this space"
                + (f"; name the other side with --with ({', '.join(others)})" if others else "")
            )
        other = others[0]
    if keep == "both":
        return await memory.curation.resolve_conflict(event_id, other, "keep_both")
    winner, loser = (event_id, other) if keep == "A" else (other, event_id)
    return await memory.curation.resolve_conflict(winner, loser, "supersedes")


def partners(pair: ConflictPair, event_id: str) -> list[str]:
    ids = [pair.newer.card.id, pair.older.card.id]
    return [i for i in ids if i != event_id] if event_id in ids else []


def pair_side(pair: ConflictPair, which: str) -> dict[str, Any]:
    side = pair.newer if which == "newer" else pair.older
    card = side.card
    return {
        "id": card.id,
        "title": card.title,
        "summary": card.summary,
        "sources": [source.message.id for source in side.sources],
    }


def pair_lines(number: int, pair: ConflictPair) -> list[str]:
    a, b = pair_side(pair, "newer"), pair_side(pair, "older")
    return [
        f"{number}. A {a['id']}  {trimmed(a['title'], 80)}",
        f"   B {b['id']}  {trimmed(b['title'], 80)}",
        f"   resolve: stratagate conflicts --resolve {a['id']} --keep A|B|both",
    ]
