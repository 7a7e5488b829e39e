"""``stratagate forget|restore|pin|unpin ID``: a person's memory actions, each with a receipt.

``forget`` hides an event from every search, recall and listing and ``restore`` brings it
back; ``forget --purge`` is ``stratagate purge EVT``: it erases the event's words (its
quotes and title) from every copy, which cannot be undone, so it shows the plan and asks
first unless ``--yes``. Each action prints its receipt id; ``stratagate show ID`` lists
the receipts of an event. An action with nothing to do (``restore`` of an event that is
not forgotten, ``unpin`` of one that is not pinned …) says so, writes no receipt and
exits with status 1, so a script can tell it changed nothing.
"""

import argparse
import json
from typing import Any

from ..core.curation.receipts import receipt_line
from ..core.curation.records import ActionKind, ActionResult, NothingDone
from .common import add_db_option, open_memory
from .purge_command import plan_then_purge

HELP: dict[ActionKind, str] = {
    "forget": "hide an event from search and recall (undo with 'restore'); --purge erases its "
    "words everywhere",
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
                help="erase its words from every copy: 'stratagate purge EVT' (irreversible)",
            )
            parser.add_argument("--yes", "-y", action="store_true", help="purge without asking")
        parser.set_defaults(handler=act, kind=kind)


async def act(args: argparse.Namespace) -> int:
    kind: ActionKind = "purge" if getattr(args, "purge", False) else args.kind
    memory = await open_memory(args)
    async with memory:
        if kind == "purge":
            needles = await memory.purge.needles(event_id=args.event_id)
            return await plan_then_purge(memory, needles, args.event_id, args.yes, args.json)
        result = await memory.curation.act(kind, args.event_id, actor="user")
    if isinstance(result, NothingDone):
        return nothing_done(result, args.json)
    if args.json:
        print(json.dumps(receipt_json(result), ensure_ascii=False, indent=2))
    else:
        print(receipt_line(result))
    return 0


def receipt_json(result: ActionResult) -> dict[str, Any]:
    card = result.card
    return {
        "receipt": result.action.model_dump(mode="json"),
        "event": {"id": card.id, "status": card.status, "pinned": card.pinned},
    }


def nothing_done(result: NothingDone, as_json: bool) -> int:
    """Status 1: the event already was as asked; nothing was written."""
    card = result.card
    if as_json:
        event = {"id": card.id, "status": card.status, "pinned": card.pinned}
        body = {"receipt": None, "nothing_to_do": result.reason, "event": event}
        print(json.dumps(body, ensure_ascii=False, indent=2))
    else:
        print(result.line())
    return 1
