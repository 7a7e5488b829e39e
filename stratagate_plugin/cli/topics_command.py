"""``stratagate topics``: the topic catalog as a book; ``stratagate directory``: what the
agent is shown of it.

``topics`` lists chapters → sections → event ids in their shown order, then the batches
still waiting or failed (``--retry`` queues the failed ones again) and, with a paid topic
model, how many historical batches its budget holds back and when the next runs.
``directory`` prints the directory text exactly as it is injected into each model call,
its token estimate on stderr, so what the 400-token budget leaves in is plain to see.
"""

import argparse
import json
import sys
from typing import Any

from ..core.text.token_budget import estimate_tokens
from .common import add_db_option, add_space_option, open_memory, resolve_space


def register(commands: Any) -> None:
    topics = commands.add_parser("topics", help="the topic catalog: chapters, sections, events")
    add_db_option(topics)
    add_space_option(topics)
    topics.add_argument("--json", action="store_true", help="machine-readable output")
    topics.add_argument(
        "--retry", action="store_true", help="queue failed topic batches of the space again"
    )
    topics.set_defaults(handler=show_topics)
    directory = commands.add_parser(
        "directory", help="the memory directory exactly as the agent is shown it"
    )
    add_db_option(directory)
    add_space_option(directory)
    directory.set_defaults(handler=show_directory)


async def show_topics(args: argparse.Namespace) -> int:
    memory = await open_memory(args)
    async with memory:
        space = await resolve_space(args, memory)
        if args.retry:
            count = await memory.topics.retry(space)
            print(
                f"{count} topic batch(es) queued again; run 'stratagate process' to run them"
                if count
                else "(no failed topic batches)"
            )
            return 0
        book = await memory.topics.book(space)
    if args.json:
        print(json.dumps(book, ensure_ascii=False, indent=2))
        return 0
    for line in book_lines(book):
        print(line)
    return 0


def book_lines(book: dict[str, Any]) -> list[str]:
    lines = [] if book["chapters"] else ["(no topics yet)"]
    for chapter in book["chapters"]:
        marks = [chapter["category"], f"{chapter['sourceEventCount']} events"]
        if chapter["status"] != "ready":
            marks.append(chapter["status"])
        if chapter["hidden"]:
            marks.append("hidden: holds agent-recorded events")
        lines.append(
            f"{chapter['number']}. {chapter['title']}  [{', '.join(marks)}]  {chapter['id']}"
        )
        if chapter["description"]:
            lines.append(f"   {chapter['description']}")
        if chapter["overview"]:
            lines.append(
                f"   {chapter['number']}.0 overview: {len(chapter['overview'])} paragraphs"
            )
        for section in chapter["sections"]:
            lines.append(
                f"   {section['number']} {section['title']}: {' '.join(section['eventIds'])}"
            )
    if book["fallbackEntries"]:
        lines.append(f"{book['fallbackEntries']} events in no topic yet (fallback entries)")
    lines += waiting_lines(book.get("waiting"))
    for batch in book["pending"]:
        error = f" — {batch['lastError'].splitlines()[0][:80]}" if batch["lastError"] else ""
        lines.append(
            f"{batch['status']} batch {batch['jobId']} (tries {batch['attempts']}): "
            f"{' '.join(batch['eventIds'])}{error}"
        )
    return lines


def waiting_lines(waiting: dict[str, Any] | None) -> list[str]:
    """What the historical budget holds back, why, and when the next batch runs."""
    if not waiting:
        return []
    when = (
        f"the next runs at {waiting['nextRunAt']}"
        if waiting["nextRunAt"]
        else "the next runs at the next 'stratagate process'"
    )
    return [
        f"{waiting['batches']} historical topic batch(es) waiting: the topic model's "
        f"historical budget runs {waiting['calls']} per {waiting['windowMinutes']} minutes; "
        f"{when} (mark the model 'free: true' if it costs nothing)"
    ]


async def show_directory(args: argparse.Namespace) -> int:
    memory = await open_memory(args)
    async with memory:
        space = await resolve_space(args, memory)
        text = await memory.topics.directory(space)
    if text:
        print(text)
    print(f"({estimate_tokens(text)} estimated tokens of 400)", file=sys.stderr)
    return 0
