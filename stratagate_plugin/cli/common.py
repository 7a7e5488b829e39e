"""Options and helpers shared by the CLI command modules.

Memory commands open what ``chat`` would use: the database and block settings of the
profile's memory plugin, and by default the memory space a chat started in this directory
uses (``chat_space``); ``--space`` names another (``resolve_space``).
"""

import argparse
import gc
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from datetime import timedelta
from pathlib import Path
from typing import Any

from ..core.clock import utc_now
from ..core.config import MemoryConfig
from ..core.errors import InvalidInput, NotFound
from ..core.llm.select import model_from_settings
from ..core.memory import StrataGate
from ..core.profile.spaces import SpaceSummary
from ..core.records import OFFLINE_FALLBACK, BlockView
from ..core.store.units import is_database_url
from ..harness.errors import HostError
from ..harness.profiles import DEFAULT_PROFILE, Profile, load_profile, profile_path
from ..memory_plugin.runtime import DATABASE_VARIABLE, MemoryRuntime, chosen_database
from ..memory_plugin.settings import (
    SETTINGS_ID,
    derivation_model,
    memory_config,
    space_of,
    validated,
)

BATCH_BUSY_TIMEOUT_S = 120  # a command run by hand waits for a long write elsewhere


def settle_heap() -> None:
    """Move every object alive once a server is up (the imported modules' ~60k, the
    engine's) out of the collector's reach, as a long-running process should: a full
    collection walks them all, ~40–50 ms of CPU on this project's benchmark machine, once
    every ~30 searches at 500k messages, one search in forty paying for it (issue #29). What
    is frozen is never collected, so this runs once, just before serving."""
    gc.collect()
    gc.freeze()


def add_db_option(parser: argparse.ArgumentParser) -> None:
    """``--db``: a file or a ``postgresql://`` URL (kept as text); ``chosen_database``
    says what applies without it."""
    parser.add_argument(
        "--db",
        type=database_location,
        default=None,
        metavar="FILE_OR_URL",
        help="a database file or a postgresql:// URL (default: the profile's database:, "
        f"else ${DATABASE_VARIABLE}, else $STRATAGATE_HOME/memory.db)",
    )


def database_location(text: str) -> Path | str:
    """A path, or a ``postgresql://`` URL as it was typed (``Path`` would fold its ``//``)."""
    return text if is_database_url(text) else Path(text)


def database_of(args: argparse.Namespace) -> Path | str:
    """The database a command means without opening it (the doctor, ``db migrate``):
    ``--db``, else what chat uses (``chosen_database`` over the profile's settings). The
    profile is only read, never made, and one too broken to read names none: the doctor
    still works, on the environment's database or the default file."""
    given = getattr(args, "db", None)
    name = getattr(args, "profile", None) or DEFAULT_PROFILE
    settings: dict[str, Any] = {}
    if given is None and profile_path(name).exists():
        with suppress(InvalidInput, HostError):
            settings = plugin_settings(args)
    return chosen_database(settings, given)


@contextmanager
def plugin_database(given: Path | str | None) -> Iterator[None]:
    """While the block runs, the memory plugin of this process opens ``given`` (``chat``'s
    and ``serve``'s ``--db``) over the profile's ``database:``; the profile is left as it
    is, so a settings page saving it never writes a URL (and its password) into it."""
    MemoryRuntime.database_given = given
    try:
        yield
    finally:
        MemoryRuntime.database_given = None


def add_space_option(parser: argparse.ArgumentParser) -> None:
    """``--space`` (``--namespace``, its old name, still works) and the ``--profile`` whose
    settings say which space chat uses."""
    parser.add_argument(
        "--space",
        default=None,
        help="memory space: a name `stratagate spaces` lists, or a namespace "
        "(default: the space `chat` uses in this directory)",
    )
    parser.add_argument("--namespace", dest="space", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--profile", default=DEFAULT_PROFILE, help="profile (default: %(default)s)")


async def open_memory(args: argparse.Namespace, config: MemoryConfig | None = None) -> StrataGate:
    """The memory chat uses: the profile's database and block settings, with the model the
    profile names, else the environment (``STRATAGATE_BASE_URL``…), else offline: resolved
    as the plugin's derivation does it."""
    settings = plugin_settings(args)
    model = model_from_settings(derivation_model(settings, profile_model(args)), os.environ)
    where = chosen_database(settings, args.db)
    config = config or memory_config(settings)
    return await StrataGate.open(where, config, model, busy_timeout_s=BATCH_BUSY_TIMEOUT_S)


def profile_of(args: argparse.Namespace) -> Profile:
    """``--profile``, or the default profile for commands without one; read once per
    command (opening the memory, its space and idle sealing all ask for it)."""
    loaded: Profile | None = getattr(args, "loaded_profile", None)
    if loaded is None:
        loaded = load_profile(getattr(args, "profile", None) or DEFAULT_PROFILE)
        args.loaded_profile = loaded
    return loaded


def profile_model(args: argparse.Namespace) -> dict[str, Any]:
    """The ``model:`` block of ``--profile``, or of the default profile for commands without one."""
    profile = profile_of(args)
    return profile.model.model_dump() if profile.model is not None else {}


def plugin_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The memory plugin's settings in the profile, validated and completed with defaults."""
    profile = profile_of(args)
    return validated(profile.settings.get(SETTINGS_ID, {}), str(profile_path(profile.name)))


def chat_space(args: argparse.Namespace) -> str:
    """The memory space ``chat`` uses when started in this directory with this profile."""
    settings = plugin_settings(args)
    if settings["namespace_mode"] == "session":
        raise InvalidInput(
            "this profile keeps one memory space per chat session (namespace_mode: session); "
            "name one with --space (`stratagate spaces` lists them)"
        )
    return space_of(settings, str(Path.cwd()), session_id="")


async def resolve_space(
    args: argparse.Namespace, memory: StrataGate, *, create: bool = False
) -> str:
    """``--space`` as a namespace (an exact one, else a unique display name), or chat's
    space here; an unknown name is a new space only when ``create``."""
    if args.space is None:
        return chat_space(args)
    return pick_space(args.space, await memory.spaces.summaries(), create=create)


def pick_space(named: str, spaces: list[SpaceSummary], *, create: bool = False) -> str:
    """The space ``named`` means among ``spaces``: its namespace or its display name."""
    if any(space.namespace == named for space in spaces):
        return named
    matches = [space.namespace for space in spaces if space.display_name == named]
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise InvalidInput(
            f"several memory spaces are called {named!r} ({', '.join(matches)}); "
            "name one by its namespace"
        )
    if create:
        return named
    raise NotFound(f"no memory space called {named!r} (`stratagate spaces` lists them)")


async def seal_idle_tails(args: argparse.Namespace, memory: StrataGate) -> list[str]:
    """Seal the tails idle past the profile's ``seal_idle_minutes``, as a chat start would."""
    quiet = timedelta(minutes=float(plugin_settings(args)["seal_idle_minutes"]))
    return await memory.blocks.seal_idle_tails(utc_now() - quiet)


def block_row(view: BlockView) -> dict[str, Any]:
    block = view.block
    return {
        "id": block.id,
        "namespace": block.namespace,
        "thread": block.thread_id,
        "sequence": block.thread_sequence,
        "turns": [block.start_turn, block.end_turn],
        "status": block.processing_status,
        "level": view.current_level,
        "age": view.age,
        "tokens": view.view_tokens,
        "lifted_by": block.last_lifted_by,
        "derived_by": block.derived_by,
        "derive_error": block.derive_error,
    }


def print_blocks(
    views: list[BlockView], as_json: bool, titles: dict[str, str] | None = None
) -> None:
    """The blocks as a table, then each titled thread's full id and title (an imported
    chat history's conversation titles), or as JSON rows with ``thread_title``."""
    rows = [block_row(view) for view in views]
    titles = titles or {}
    if as_json:
        rows = [{**row, "thread_title": titles.get(row["thread"], "")} for row in rows]
        print(json.dumps(rows, ensure_ascii=False, indent=2))
        return
    if not rows:
        print("(no blocks yet)")
        return
    print(f"{'block':<38} {'thread':<12} {'#':>3} {'turns':>7} {'status':<8} lvl  L5/L4/L3 tokens")
    for row in rows:
        tokens = row["tokens"]
        turns = f"{row['turns'][0]}-{row['turns'][1]}"
        print(
            f"{row['id']:<38} {row['thread'][:12]:<12} {row['sequence']:>3} {turns:>7} "
            f"{row['status']:<8} L{row['level']}   {tokens['L5']}/{tokens['L4']}/{tokens['L3']}"
        )
    offline = sum(row["derived_by"] == OFFLINE_FALLBACK for row in rows)
    if offline:
        print(
            f"\n{offline} block(s) derived offline after the model failed: "
            "'stratagate jobs --offline' shows why, 'stratagate jobs retry --offline' asks again"
        )
    shown = dict.fromkeys(row["thread"] for row in rows if row["thread"] in titles)
    if shown:
        print("\nthreads:")
    for thread in shown:
        print(f"  {thread}  {titles[thread]}")
