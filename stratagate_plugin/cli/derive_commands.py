"""``stratagate process`` (run derivation jobs) and ``stratagate events`` (list event cards)."""

import argparse
import json
import sys
from typing import Any

from ..core.config import MemoryConfig
from ..core.events.cards import EventCard, happened_label
from .common import add_db_option, add_space_option, open_memory, resolve_space, seal_idle_tails
from .jobs_command import failed_notice
from .progress import Progress
from .topics_command import waiting_lines


def register(commands: Any) -> None:
    process = commands.add_parser("process", help="run pending derivation jobs to completion")
    add_db_option(process)
    process.add_argument(
        "-j",
        "--concurrency",
        type=at_least_one,
        default=None,
        metavar="K",
        help=f"model calls under way at once (default {MemoryConfig().derive_concurrency})",
    )
    process.set_defaults(handler=process_jobs)
    events = commands.add_parser("events", help="list event cards")
    add_db_option(events)
    add_space_option(events)
    events.add_argument("--all", action="store_true", help="include forgotten/archived events")
    events.add_argument("--json", action="store_true", help="machine-readable output")
    events.set_defaults(handler=list_events)


async def process_jobs(args: argparse.Namespace) -> int:
    """The progress total is the jobs due when the run began plus the extraction each due
    summary queues; a job another process takes, or one queued later, can make the count
    differ, and the total grows rather than pass 100%."""
    memory = await open_memory(args)
    async with memory:
        await seal_idle_tails(args, memory)  # a tail no chat will come back to seal
        with Progress("process", "jobs", await memory.due_job_count()) as progress:
            report = await memory.process_pending(
                on_job=lambda job: progress.advance(note=job.kind),
                concurrency=args.concurrency,
            )
            progress.complete()  # process_pending stops only once no job is due
        failed = await memory.list_jobs(status="failed")
    lost = f", {report.lost} taken over by another worker" if report.lost else ""
    print(
        f"ran {report.ran} jobs: {report.succeeded} succeeded, {report.skipped} skipped, "
        f"{report.failed} failed{lost}; {len(report.ready_blocks)} blocks became ready"
    )
    if report.topics is not None:
        for line in topic_lines(report.topics):
            print(line)
    if report.dropped:
        print(f"source check: {report.dropped.note()}")
    for error in report.errors[:10]:
        print(f"  failed: {error}", file=sys.stderr)
    for line in failed_notice(failed):
        print(line, file=sys.stderr)
    return 1 if failed else 0


def topic_lines(topics: Any) -> list[str]:
    """The topic pass that followed: its batches, and what the budget still holds back."""
    lines = []
    if topics.ran:
        lines.append(
            f"topics: ran {topics.ran} batches: {topics.succeeded} succeeded, "
            f"{topics.skipped} skipped, {topics.failed} failed"
        )
    return lines + waiting_lines(topics.waiting)


def at_least_one(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {text!r}")
    return int(text)


async def list_events(args: argparse.Namespace) -> int:
    memory = await open_memory(args)
    async with memory:
        events = await memory.list_events(
            await resolve_space(args, memory), include_hidden=args.all
        )
    if args.json:
        print(json.dumps([event_json(e) for e in events], ensure_ascii=False, indent=2))
        return 0
    if not events:
        print("(no events yet)")
    for event in events:
        when = happened_label(event.temporal) or "—"
        state = event.status + (", pinned" if event.pinned else "")
        print(f"{event.id}  {when:<10}  {state:<18} {event.scope:<8} {event.title[:70]}")
    return 0


def event_json(event: EventCard) -> dict[str, Any]:
    return event.model_dump(mode="json")
