"""``stratagate profile [set FIELD VALUE | clear FIELD]``: the resident profile.

The profile is injected into every prompt; these are the web profile page's reads and
saves (``get_profile``, ``update_profile`` with source ``settings``), so an edit here is
in the same change history. Each edit prints what was stored (a secret in VALUE is
redacted before it is stored) and the field's new revision; a value equal to the stored
one changes nothing, says so and exits with status 1 (as ``restore`` of what is not
forgotten does). ``set`` refuses an empty value: ``clear`` says it.
"""

import argparse
import json
from typing import Any

from ..core.errors import InvalidInput
from ..core.profile.fields import FIELD_NAMES
from ..core.profile.service import ProfileUpdate, ProfileView
from .common import add_db_option, open_memory


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "profile",
        help="show or edit the resident profile (set FIELD VALUE, clear FIELD)",
        description="Without an action, the profile's fields with their values and "
        "revisions. Fields: " + ", ".join(FIELD_NAMES) + ".",
    )
    add_db_option(parser)
    parser.add_argument("action", nargs="?", choices=("set", "clear"), help="set or clear")
    parser.add_argument("field", nargs="?", help="the field to edit")
    parser.add_argument("value", nargs="?", help="with set: the new value")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(handler=profile_command)


async def profile_command(args: argparse.Namespace) -> int:
    value = edit_value(args)
    async with await open_memory(args) as memory:
        if args.action is None:
            view = await memory.profile.get()
        else:
            update = await memory.profile.update(args.field, value, "settings")
    if args.action is None:
        print_profile(view, args.json)
    elif args.json:
        print(json.dumps(update.model_dump(mode="json"), ensure_ascii=False, indent=2))
    else:
        print(update_line(update, args.action))
    return 1 if args.action and not update.modified else 0  # as a memory action's no-op


def edit_value(args: argparse.Namespace) -> str:
    """The value to store (``clear``: empty); a malformed edit is one clear line."""
    if args.action is None:
        if args.field is not None:
            raise InvalidInput("say what to do with the field: 'set FIELD VALUE' or 'clear FIELD'")
        return ""
    if args.field is None:
        raise InvalidInput(f"name the field to {args.action}: {', '.join(FIELD_NAMES)}")
    if args.action == "clear":
        if args.value is not None:
            raise InvalidInput("clear takes only the field's name")
        return ""
    if args.value is None or not args.value.strip():
        raise InvalidInput(f"set needs a value; 'stratagate profile clear {args.field}' empties it")
    return str(args.value)


def update_line(update: ProfileUpdate, action: str) -> str:
    if not update.modified:
        held = "is already empty" if action == "clear" else "already holds this value"
        return f"nothing to do: {update.field} {held} (revision {update.revision})"
    if action == "clear":
        return f"cleared {update.field} (revision {update.revision})"
    return f"set {update.field} to {update.value!r} (revision {update.revision})"


def print_profile(view: ProfileView, as_json: bool) -> None:
    if as_json:
        print(json.dumps(view.model_dump(mode="json"), ensure_ascii=False, indent=2))
        return
    width = max(len(name) for name in view.values)
    for name, value in view.values.items():
        shown = " ".join(value.split()) or "-"
        print(f"{name:<{width}}  r{view.revisions[name]}  {shown}")
