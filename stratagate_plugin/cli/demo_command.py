"""``stratagate demo``: record a scripted conversation and show its blocks decaying."""

import argparse
from datetime import UTC, datetime, timedelta
from typing import Any

from ..core.config import MemoryConfig
from .common import add_db_option, open_memory, print_blocks

DEMO_SPACE = "demo"
DEMO_THREAD = "demo-session"
PLUGIN_BLOCK_TURNS = 6
_START = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)
_TURNS: list[tuple[str, str, list[dict[str, Any]]]] = [
    ("Hi! I'm Mara, I run a small ceramics studio in Leeds.", "Nice to meet you, Mara.", []),
    ("ok thanks", "You're welcome.", []),
    ("We decided to move the spring sale to 14 March.", "Noted: spring sale on 14 March.", []),
    (
        "Can you check the kiln schedule?",
        "Here is the schedule.",
        [
            {
                "name": "read_file",
                "arguments": {"path": "kiln.csv"},
                "result": {"rows": [1, 2, 3], "summary": "3 firings booked next week"},
            }
        ],
    ),
    ("我更喜欢用中文写产品描述。", "好的，以后产品描述用中文。", []),
    ("好的。谢谢！", "不客气。", []),
    ("The glaze supplier raised prices by 12% last week.", "That affects margins.", []),
    ("I cancelled the order with Glazeworks.", "Understood, order cancelled.", []),
    ("Remind me: the studio opens at 10am on Saturdays.", "Saturday opening: 10am.", []),
    ("thanks", "Anytime.", []),
    ("Next month we start evening classes on Tuesdays.", "Evening classes from next month.", []),
    ("Sure.", "Great.", []),
    ("My sister Ines will help with the classes.", "Ines will co-teach.", []),
]


def register(commands: Any) -> None:
    parser = commands.add_parser("demo", help="record a scripted conversation, print its blocks")
    add_db_option(parser)
    parser.set_defaults(handler=run_demo)


async def run_demo(args: argparse.Namespace) -> int:
    memory = await open_memory(args, MemoryConfig(block_turn_size=PLUGIN_BLOCK_TURNS))
    async with memory:
        for index, (user, assistant, tools) in enumerate(_TURNS):
            await memory.blocks.append_turn(
                DEMO_SPACE,
                DEMO_THREAD,
                user=user,
                assistant=assistant,
                tool_calls=tools,
                at=_START + timedelta(minutes=5 * index),
                receipt_id=f"demo:{DEMO_THREAD}:turn:{index + 1}",
            )
        report = await memory.derivation.process_pending()
        views = await memory.blocks.views(DEMO_SPACE, DEMO_THREAD)
        tail = await memory.blocks.open_tail(DEMO_SPACE, DEMO_THREAD)
    print(f"database: {memory.overview.database_shown}")
    print_blocks(views, as_json=False)
    print(f"open tail: {len(tail)} messages not yet sealed")
    print(f"derivation ({memory.model.name} model): {report.ran} jobs run, {report.failed} failed")
    if views:
        first = views[0].block
        print(f"\nblock {first.id}\n  L0: {first.l0_title} ({', '.join(first.l0_tags or [])})")
        print(f"  L1: {first.l1_summary}")
    return 0
