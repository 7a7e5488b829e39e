"""``stratagate forget|restore|pin|unpin ID``: a person's memory actions, each with a receipt.

``forget`` hides an event from every search, recall and listing and ``restore`` brings it
back; ``forget --purge`` also replaces the words of its source messages with a tombstone,
which cannot be undone, so it asks first unless ``--yes``. Each action prints its receipt
id; ``stratagate show ID`` lists the receipts of an event.
"""

import argparse
import json
import sys
from typing import Any

from ..core.curation.actions import ActionKind, ActionResult, PurgePlan
from ..core.curation.receipts import count, receipt_line
from ..core.errors import InvalidInput
from ..core.memory import StrataGate
from .common import add_db_option, open_memory
from .search_command import trimmed

HELP: dict[ActionKind, str] = {
    "forget": "hide an event from search and recall (undo with 'restore'); --purge erases its "
    "source messages",
    "restore": "bring a forgotten event back",
    "pin": "keep an event at full weight until unpinned",
    "unpin": "let a pinned event fade again",
}


def register(commands: Any) -> None:
    for kind, text in HELP.items():
        parser = commands.add_parser(kind, help=text, description=text[0].upper() + text[1:] + ".")
        add_db_option(parser)
        parser.add_argument("event_id", help="the event's id (evt_…)")
        parser.add_argument("--json", action="store_true", help="machine-readable receipt")
        if kind == "forget":
            parser.add_argument(
                "--purge",
                action="store_true",
                help="also replace the text of its source messages with a tombstone (irreversible)",
            )
            parser.add_argument("--yes", "-y", action="store_true", help="purge without asking")
        parser.set_defaults(handler=act, kind=kind)


async def act(args: argparse.Namespace) -> int:
    kind: ActionKind = "purge" if getattr(args, "purge", False) else args.kind
    memory = await open_memory(args)
    async with memory:
        if kind == "purge" and not args.yes and not await confirmed(memory, args.event_id):
            print("nothing was changed", file=sys.stderr)
            return 1
        result = await memory.memory_action(kind, args.event_id, actor="user")
    if args.json:
        print(json.dumps(receipt_json(result), ensure_ascii=False, indent=2))
    else:
        print(receipt_line(result))
    return 0


async def confirmed(memory: StrataGate, event_id: str) -> bool:
    """Say what a purge would erase, on stderr, and read the answer from a terminal; with
    no terminal to ask, refuse in one line (a script passes ``--yes``)."""
    plan = await memory.purge_plan(event_id)
    if not sys.stdin.isatty():
        raise InvalidInput(
            f"purging {event_id} cannot be undone and there is no terminal to ask: "
            "pass --yes to confirm"
        )
    sys.stderr.write("\n".join(purge_warning(plan)) + "\nPurge? [y/N] ")
    sys.stderr.flush()
    return sys.stdin.readline().strip().lower() in ("y", "yes")


def purge_warning(plan: PurgePlan) -> list[str]:
    lines = [
        f"This replaces the text of {count(len(plan.message_ids), 'source message')} of "
        f"{plan.event_id} with a tombstone, for good, and forgets the event."
    ]
    if plan.also_forgotten:
        lines.append(f"{count(len(plan.also_forgotten), 'other event')} citing them go too:")
        lines += [f"  {e.id}  {trimmed(e.title, 70)}" for e in plan.also_forgotten]
    if plan.block_ids:
        lines.append(
            f"The summaries of {count(len(plan.block_ids), 'block')} are derived again "
            "('stratagate process')."
        )
    return lines


def receipt_json(result: ActionResult) -> dict[str, Any]:
    card = result.card
    return {
        "receipt": result.action.model_dump(mode="json"),
        "event": {"id": card.id, "status": card.status, "pinned": card.pinned},
    }
