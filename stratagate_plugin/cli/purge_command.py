"""``stratagate purge``: erase words from memory, every copy of them, after showing where.

``purge EVT`` erases the event's words (its quotes and title), ``--message ID`` a message's
text, ``--text "hunter2"`` a literal text: in every message holding them (the person's own
and any echo), block view, event, graph and topic row, receipt, backup and session file.
The plan is printed first, with ids, times and redacted excerpts; nothing changes without
``--yes`` or a "y" typed at a terminal. ``--check`` proves the words are gone: with
``--text`` it scans every row and the raw bytes of the database, its WAL, its backups and
the session files; with a hash it names the purge receipts holding it.
"""

import argparse
import json
import sys
from typing import Any

from ..core.curation.receipts import count, words_purged_line
from ..core.errors import InvalidInput
from ..core.memory import StrataGate
from ..core.purge.service import PurgeOutcome
from ..core.purge.words import Needles, PlanItem, TextPurgePlan
from ..harness.session_purge import rewrite_sessions, sessions_holding
from .common import add_db_option, open_memory

HELP = "erase words from memory and every copy of them (plan first, then --yes)"


def register(commands: Any) -> None:
    parser = commands.add_parser("purge", help=HELP, description=HELP[0].upper() + HELP[1:] + ".")
    add_db_option(parser)
    parser.add_argument("event_id", nargs="?", help="an event whose words to erase (evt_…)")
    parser.add_argument("--message", help="a message whose text to erase (its id)")
    parser.add_argument("--text", help="a literal text to erase wherever it occurs")
    parser.add_argument(
        "--profile-field", metavar="FIELD", help="a profile field: every value it held, cleared"
    )
    parser.add_argument("--yes", "-y", action="store_true", help="purge without asking")
    parser.add_argument(
        "--check",
        nargs="?",
        const="",
        metavar="HASH",
        help="prove the words are gone (with --text), or name the receipts of a hash",
    )
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(handler=purge)


async def purge(args: argparse.Namespace) -> int:
    memory = await open_memory(args)
    async with memory:
        if args.check is not None:
            return await check(memory, args)
        if args.profile_field is not None:
            if args.text or args.event_id or args.message:
                raise InvalidInput(
                    "purge one thing: an event id, --message, --text or --profile-field"
                )
            needles = await memory.purge.profile_field_needles(args.profile_field)
        else:
            needles = await memory.purge.needles(
                text=args.text, event_id=args.event_id, message_id=args.message
            )
        target = (
            args.event_id
            or args.message
            or (args.profile_field and f"profile:{args.profile_field}")
        )
        target = target or "text"
        return await plan_then_purge(memory, needles, target, args.yes, args.json)


async def plan_then_purge(
    memory: StrataGate, needles: Needles, target: str, yes: bool, as_json: bool
) -> int:
    """Print the plan; on confirmation rewrite the session files, then purge memory."""
    needles, plan = await memory.purge.words_plan(needles)
    sessions = sessions_holding(needles)
    plan = plan.model_copy(update={"files": {**plan.files, **sessions}})
    if plan.empty:
        print("the words occur nowhere in memory, its backups or sessions: nothing was changed")
        return 1
    out = sys.stderr if as_json else sys.stdout
    print("\n".join(plan_lines(plan, sessions)), file=out)
    if not yes and not confirmed(target):
        print("nothing was changed", file=sys.stderr)
        return 1
    rewritten = rewrite_sessions(needles)
    outcome = await memory.purge.words(needles, target=target, sessions=rewritten)
    if as_json:
        print(json.dumps(outcome.model_dump(mode="json"), ensure_ascii=False, indent=2))
    else:
        print(outcome_line(outcome))
    return 0


def confirmed(target: str) -> bool:
    """Ask on a terminal; with none to ask, refuse in one line (a script passes --yes)."""
    if not sys.stdin.isatty():
        raise InvalidInput(
            f"purging {target} cannot be undone and there is no terminal to ask: "
            "pass --yes to confirm"
        )
    sys.stderr.write("Purge? [y/N] ")
    sys.stderr.flush()
    return sys.stdin.readline().strip().lower() in ("y", "yes")


def plan_lines(plan: TextPurgePlan, sessions: dict[str, int]) -> list[str]:
    """The plan as a person reads it: what is erased, by id and time, never the words."""
    lines = [f"Purge plan (words {', '.join(h[:19] + '…' for h in plan.hashes)}):"]
    if plan.messages:
        lines.append(
            f"{count(len(plan.messages), 'message')} hold the words; they become "
            "'[purged]', the rest of each message stays:"
        )
        lines += [_item(item) for item in plan.messages]
    forgotten = [i for i in plan.events if i.outcome == "forgotten"]
    edited = [i for i in plan.events if i.outcome != "forgotten"]
    if forgotten:
        lines.append(f"{count(len(forgotten), 'event')} stated only by them are forgotten:")
        lines += [_item(item) for item in forgotten]
    if edited:
        lines.append(f"{count(len(edited), 'event')} quoting them too lose the words:")
        lines += [_item(item) for item in edited]
    if plan.blocks:
        lines.append(
            f"{count(len(plan.blocks), 'block')} re-made (L4/L3 now, L0-L2 by 'stratagate "
            "process'): " + ", ".join(item.id for item in plan.blocks)
        )
    if plan.cells:
        lines.append(
            "other rows holding them: " + ", ".join(f"{k} {v}" for k, v in plan.cells.items())
        )
    backups = {k: v for k, v in plan.files.items() if k not in sessions}
    for name, hits in backups.items():
        lines.append(f"backup to rewrite without them (or delete): {name} ({hits} copies)")
    for name, hits in sessions.items():
        lines.append(f"session file to rewrite: {name} ({hits} copies)")
    return lines


def _item(item: PlanItem) -> str:
    when = item.at.isoformat(timespec="seconds") if item.at else "—"
    return f"  {item.id}  {when}  {item.kind:<20} {item.excerpt}"


def outcome_line(outcome: PurgeOutcome) -> str:
    """The receipt's line, then what happened to the files."""
    deleted = [p for p, how in outcome.backups.items() if how == "deleted"]
    gone = f"; deleted {', '.join(deleted)} (it could not be purged)" if deleted else ""
    left = f"; STILL FOUND in {', '.join(outcome.left)}" if outcome.left else ""
    digest = outcome.receipt.detail["hashes"][0]
    return (
        words_purged_line(outcome.receipt)
        + gone
        + left
        + f"\n'stratagate purge --check {digest}' names this receipt; "
        "'stratagate purge --check --text …' scans every copy again"
    )


async def check(memory: StrataGate, args: argparse.Namespace) -> int:
    """``--check --text T``: every row and byte scanned, exit 1 when anything holds T;
    ``--check HASH``: the receipts of that hash."""
    if args.text is None:
        if not args.check:
            raise InvalidInput("--check needs a hash (sha256:…) or --text TEXT")
        receipts = await memory.purge.receipts(args.check)
        for receipt in receipts:
            print(
                f"{receipt.id}  {receipt.created_at.isoformat(timespec='seconds')}  purge of "
                f"{receipt.target_id}: {json.dumps(receipt.detail.get('counts', {}))}"
            )
        if not receipts:
            print(f"no purge receipt holds {args.check}")
        print("to scan every copy for the words, run 'stratagate purge --check --text TEXT'")
        return 0 if receipts else 1
    needles = Needles([args.text])
    found = await memory.purge.check(needles)
    found.update(sessions_holding(needles))
    held = {place: n for place, n in found.items() if n}
    if args.json:
        print(json.dumps({"hash": needles.hashes()[0], "found": found}, indent=2))
    else:
        for place, n in found.items():
            print(f"{n:>5}  {place}")
        print(
            "gone: no row, file, backup or session holds the words"
            if not held
            else f"STILL FOUND in {count(len(held), 'place')}"
        )
    return 1 if held else 0
