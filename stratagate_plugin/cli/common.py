"""Options and helpers shared by the CLI command modules."""

import argparse
import json
import os
from pathlib import Path
from typing import Any

from ..core.config import MemoryConfig
from ..core.llm.select import model_from_settings
from ..core.memory import StrataGate
from ..core.records import BlockView
from ..core.store import default_database_path
from ..harness.profiles import DEFAULT_PROFILE, load_profile

DEFAULT_NAMESPACE = "default"
BATCH_BUSY_TIMEOUT_S = 120  # a command run by hand waits for a long write elsewhere


def add_db_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--db", type=Path, default=None, help=f"database file (default {default_database_path()})"
    )


def add_space_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--space", default=None, help=f"memory space (default: {DEFAULT_NAMESPACE})"
    )


async def resolve_space(
    args: argparse.Namespace, memory: StrataGate, *, create: bool = False
) -> str:
    """The memory space a command works in: ``--space``, else the default space."""
    return str(args.space or DEFAULT_NAMESPACE)


async def open_memory(args: argparse.Namespace, config: MemoryConfig | None = None) -> StrataGate:
    """The memory with the model the profile names, else the environment
    (``STRATAGATE_BASE_URL``…), else offline: resolved as the plugin's derivation does it."""
    model = model_from_settings(profile_model(args), os.environ)
    path = args.db or default_database_path()
    return await StrataGate.open(path, config, model, busy_timeout_s=BATCH_BUSY_TIMEOUT_S)


def profile_model(args: argparse.Namespace) -> dict[str, Any]:
    """The ``model:`` block of ``--profile``, or of the default profile for commands without one."""
    profile = load_profile(getattr(args, "profile", None) or DEFAULT_PROFILE)
    return profile.model.model_dump() if profile.model is not None else {}


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
    }


def print_blocks(views: list[BlockView], as_json: bool) -> None:
    rows = [block_row(view) for view in views]
    if as_json:
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
